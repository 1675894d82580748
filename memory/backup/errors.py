"""What goes wrong with a backup, said so that a person knows what to do next."""

from __future__ import annotations


class BackupError(Exception):
    """A backup could not be made, verified or restored; `str()` says why and what to do.
    Whatever raised it left the home as it was."""


class BackupCancelled(BackupError):
    """The caller asked the backup to stop (the daemon shutting down); nothing was kept."""
