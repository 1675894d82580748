"""sd_notify by hand: readiness, status text, stopping and watchdog pings to systemd.

The protocol is one datagram of `KEY=value` lines to the socket named by
`$NOTIFY_SOCKET` (a path, or `@name` in the abstract namespace); libsystemd is not
needed for that. Watchdog pings are sent by a task on the event loop itself, so a
loop that is stuck stops pinging and systemd restarts the daemon. Outside systemd
(no `$NOTIFY_SOCKET`) every call does nothing. It sits beside the unit it answers: the
unit's `Type=notify` waits for READY=1, and its `WatchdogSec=` for the pings.
"""

from __future__ import annotations

import asyncio
import os
import socket
from collections.abc import Mapping

import structlog

log = structlog.get_logger("kioku.systemd")


class Notifier:
    """Talks to the service manager that started us, if any."""

    def __init__(self, address: str | None, watchdog_interval: float | None = None) -> None:
        self.address = address
        self.watchdog_interval = watchdog_interval
        self._socket: socket.socket | None = None

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] = os.environ) -> Notifier:
        """Read `$NOTIFY_SOCKET` and `$WATCHDOG_USEC` (pinging at half the timeout)."""
        address = environ.get("NOTIFY_SOCKET") or None
        return cls(address, _watchdog_interval(environ))

    @property
    def enabled(self) -> bool:
        return self.address is not None

    def notify(self, **fields: str) -> bool:
        """Send `KEY=value` lines in one datagram; False if not under systemd or it failed."""
        if self.address is None:
            return False
        message = "\n".join(f"{key}={_one_line(value)}" for key, value in fields.items())
        target = "\0" + self.address[1:] if self.address.startswith("@") else self.address
        try:
            if self._socket is None:
                self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
                self._socket.setblocking(False)
            self._socket.sendto(message.encode(), target)
        except OSError as exc:
            log.warning("sd_notify_failed", socket=self.address, error=str(exc))
            return False
        return True

    def ready(self, status: str) -> bool:
        return self.notify(READY="1", STATUS=status)

    def status(self, text: str) -> bool:
        return self.notify(STATUS=text)

    def stopping(self, status: str = "stopping") -> bool:
        return self.notify(STOPPING="1", STATUS=status)

    def start_watchdog(self) -> asyncio.Task[None] | None:
        """Start pinging if systemd asked for it (`WatchdogSec=`); cancel the task to stop."""
        if self.address is None or self.watchdog_interval is None:
            return None
        return asyncio.create_task(self._watchdog(self.watchdog_interval), name="systemd-watchdog")

    async def _watchdog(self, interval: float) -> None:
        while True:
            self.notify(WATCHDOG="1")
            await asyncio.sleep(interval)

    def close(self) -> None:
        if self._socket is not None:
            self._socket.close()
            self._socket = None


def _watchdog_interval(environ: Mapping[str, str]) -> float | None:
    """Half of `WATCHDOG_USEC`, if set for this process (`WATCHDOG_PID` absent or ours)."""
    usec = environ.get("WATCHDOG_USEC", "")
    pid = environ.get("WATCHDOG_PID", "")
    if not usec.isdigit() or int(usec) == 0 or (pid and pid != str(os.getpid())):
        return None
    return int(usec) / 2 / 1_000_000


def _one_line(value: str) -> str:
    return " ".join(value.splitlines())
