"""Telegram through python-telegram-bot: `adapter` (polling or webhook, replies out),
`updates` (each update read within limits), `inbound` (an update as `Inbound`), `files`,
`formatting` (Markdown to Telegram's HTML) and `send` (one message out, retried).

Nothing here is imported until Telegram is configured (adapters/platforms.py).
"""
