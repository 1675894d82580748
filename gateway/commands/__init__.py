"""Slash commands: answered by the gateway itself, on every platform, with no model needed.

`registry` declares how a command is named, listed and dispatched; `handlers` holds the
built-in commands (`SLASH_COMMANDS`) and their answers.
"""
