"""Another host on this machine: a network namespace joined to ours by a veth pair, so a
server inside it is reached at an address that is not loopback, as a phone reaches kioku
on the home network. Needs root and `ip`; otherwise the test is skipped, saying why."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import pytest


@dataclass(frozen=True)
class OtherHost:
    name: str
    inside: str  # the namespace's address (the other host)
    outside: str  # ours, on the same link

    @property
    def run(self) -> tuple[str, ...]:
        """The prefix that runs a command inside the namespace."""
        return ("ip", "netns", "exec", self.name)


def _ip(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=10)


@contextmanager
def other_host() -> Iterator[OtherHost]:
    """A fresh namespace with a /30 link to ours; deleted (with its veth) at the end."""
    if os.geteuid() != 0 or shutil.which("ip") is None:
        pytest.skip("a network namespace needs root and the `ip` command")
    pid = os.getpid()
    net = f"10.251.{pid % 250}"
    host = OtherHost(f"kioku-test-{pid}", f"{net}.2", f"{net}.1")
    ours, theirs = f"kv{pid}o", f"kv{pid}i"
    added = _ip("netns", "add", host.name)
    if added.returncode != 0:
        pytest.skip(f"cannot make a network namespace here: {added.stderr.strip()}")
    try:
        for step in (
            ("link", "add", ours, "type", "veth", "peer", "name", theirs),
            ("link", "set", theirs, "netns", host.name),
            ("addr", "add", f"{host.outside}/30", "dev", ours),
            ("link", "set", ours, "up"),
            ("-n", host.name, "addr", "add", f"{host.inside}/30", "dev", theirs),
            ("-n", host.name, "link", "set", theirs, "up"),
            ("-n", host.name, "link", "set", "lo", "up"),
        ):
            done = _ip(*step)
            if done.returncode != 0:
                pytest.skip(f"cannot link a network namespace: ip {' '.join(step)}: {done.stderr}")
        yield host
    finally:
        _ip("netns", "del", host.name)  # takes its end of the veth, and so ours, with it
