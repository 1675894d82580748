"""Discord through discord.py: `adapter` (the client, its watchdog, replies out),
`frames` (each gateway frame read within limits), `payloads` (events made whole),
`inbound` (a message as `Inbound`) and `commands` (application commands).

Nothing here is imported until Discord is configured (adapters/platforms.py).
"""
