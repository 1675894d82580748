"""Slack through slack-bolt and slack_sdk: `adapter` (Socket Mode or HTTP, replies out),
`envelopes` (each envelope read within limits), `inbound` (an event as `Inbound`), `files`,
`commands` (slash commands), `mrkdwn` (text both ways), `unread` (what kioku lets go),
`scopes` and `manifest` (what the Slack app needs).

Nothing of the SDKs is imported until Slack is configured (adapters/platforms.py);
`scopes` and `manifest` import none, so `kioku setup` and `kioku doctor` may use them.
"""
