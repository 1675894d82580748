"""One daemon per KIOKU_HOME: an exclusive lock on `daemon.lock`, held for the process life.

Two daemons on one home would answer every message twice and race on the notes
files. `flock` is released by the kernel when the process dies (even on kill -9),
so a stale lock file never blocks a restart.
"""

from __future__ import annotations

import fcntl
import os
from dataclasses import dataclass
from pathlib import Path

LOCK_NAME = "daemon.lock"


class AlreadyRunning(RuntimeError):
    """Another daemon holds the lock; `str()` says which home and which pid."""

    def __init__(self, home: Path, pid: int | None) -> None:
        who = f"pid {pid}" if pid is not None else "pid unknown"
        super().__init__(f"kioku is already running for {home} ({who})")
        self.home = home
        self.pid = pid


@dataclass
class InstanceLock:
    """The held lock; `release()` (or process exit) lets the next daemon start."""

    path: Path
    fd: int

    def release(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def acquire(home: Path) -> InstanceLock:
    """Take the home's lock without waiting and write our pid in it; raise `AlreadyRunning`."""
    path = home / LOCK_NAME
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        pid = _read_pid(fd)
        os.close(fd)
        raise AlreadyRunning(home, pid) from None
    except BaseException:
        os.close(fd)
        raise
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return InstanceLock(path, fd)


def running(home: Path) -> AlreadyRunning | None:
    """Who holds the home's lock (as the error a second daemon would get), or None."""
    path = home / LOCK_NAME
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return AlreadyRunning(home, _read_pid(fd))
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def _read_pid(fd: int) -> int | None:
    raw = os.pread(fd, 32, 0).decode(errors="replace").strip()
    return int(raw) if raw.isdigit() else None
