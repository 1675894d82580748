"""The daemon-in-a-subprocess fixtures of the gateway's end-to-end tests."""

from tests.helpers.daemon import api, daemons

__all__ = ["api", "daemons"]
