"""The one failure a media reader raises: the file could not be read, and why."""

from __future__ import annotations


class Unreadable(Exception):
    """`notice` is told to the person as it is: what was not read, why, what to do."""

    def __init__(self, notice: str) -> None:
        super().__init__(notice)
        self.notice = notice
