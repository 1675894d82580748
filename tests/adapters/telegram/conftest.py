"""The daemon-in-a-subprocess fixtures of the Telegram daemon tests."""

from tests.helpers.daemon import api, daemons

__all__ = ["api", "daemons"]
