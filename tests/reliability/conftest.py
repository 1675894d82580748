"""The daemon-in-a-subprocess rig of the end-to-end tests, shared by the fault suite."""

from tests.helpers.daemon import api, daemons

__all__ = ["api", "daemons"]
