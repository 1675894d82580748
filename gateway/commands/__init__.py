"""Slash commands: answered by the gateway itself, on every platform, with no model needed.

`parsing` tells a command from other text; `registry` declares how a command is named,
listed and dispatched (and answers an unknown sender once, for every command that needs
a known person); `context` is the one thing each handler receives; `builtin` declares the
built-in commands, whose answers live by concern (`conversation`, `people`, `notes`,
`search`, `skills`, `history`, `schedule`); `dispatch` is the gateway's entry.
"""
