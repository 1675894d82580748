"""The wizard's last steps: show what changes and write it, then check the whole setup as
`kioku doctor` does, offer the service, and say what to try next."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from gateway.cli.common import run_async
from gateway.setup import ask
from gateway.setup.files import plan
from gateway.setup.spec import MANAGED


def changes(current: Mapping[str, Any], values: Mapping[str, Any]) -> dict[str, Any]:
    """The managed settings whose value differs from the files' (None: removed)."""
    return {key: values.get(key) for key in MANAGED if values.get(key) != current.get(key)}


def write(home: Path, current: Mapping[str, Any], values: Mapping[str, Any]) -> bool:
    """Show the diff (secrets masked) and write on yes; False when nothing was written."""
    ask.heading(5, "Write")
    wanted = changes(current, values)
    planned = plan(home, wanted)
    if not planned.changed:
        ask.say("Nothing to change.")
        return False
    ask.say(planned.diff())
    if not ask.yes("Write these files?", True):
        ask.say("Nothing written.")
        return False
    written = planned.write()
    ask.say(f"Wrote {', '.join(str(p) for p in written)} (mode 0600; the previous as *.bak).")
    _tell_daemon(home, wanted)
    return True


def _tell_daemon(home: Path, wanted: Mapping[str, Any]) -> None:
    """A daemon running on the home takes the owner and policies now; the rest at restart."""
    from gateway.client.socket_client import DaemonError, NoAnswer, NotRunning
    from gateway.setup.claim import reload_daemon

    try:
        reload_daemon(home)
    except NotRunning:
        return
    except (DaemonError, NoAnswer, OSError) as exc:
        ask.say(f"kioku is running but did not reload ({exc}): restart it.")
        return
    from gateway.daemon import reloadable  # the daemon's own rule; heavy, so only here

    later = [key for key in wanted if not reloadable(key)]
    if later:
        ask.say(f"kioku is running: restart it to use {', '.join(sorted(later))}.")


def finish(bots: Mapping[str, str]) -> None:
    """Doctor's checks, the service offer, and the next three things to try."""
    ask.heading(6, "Finish")
    from gateway.doctor.examine import examine

    findings = run_async(examine())
    for found in findings:
        if found.level != "ok":
            ask.say(f"  {found.level}: {found.topic}: {found.text}")
            if found.fix:
                ask.say(f"        fix: {found.fix}")
    problems = sum(found.level == "problem" for found in findings)
    ask.say(f"kioku doctor: {problems} problem(s)." if problems else "kioku doctor: no problems.")
    installed = _offer_service()
    first = next(iter(bots.items()), None)
    ask.say("\nNext:")
    ask.say(
        "  1. Start kioku: `kioku serve` (or `make run`)"
        + (" — or it already runs as the service." if installed else ".")
    )
    if first is not None:
        ask.say(f"  2. Say hello to {first[1]} on {first[0].title()}: it knows you as its owner.")
    else:
        ask.say("  2. Connect a platform later with `kioku setup` (Telegram takes two minutes).")
    ask.say("  3. `kioku chat` talks to it from this terminal; `kioku doctor` checks again.")


def _offer_service() -> bool:
    """Install the systemd unit (user or system) and start it, if the person wants."""
    choice = ask.choose("Install kioku as a systemd service?", ("no", "user", "system"), "no")
    if choice == "no":
        return False
    import typer

    from gateway.cli.service import install

    try:
        install(user=choice == "user", system=choice == "system", dry_run=False)
    except typer.Exit:
        return False
    if not ask.yes("Start it now?", True):
        return False
    from gateway.service.install import start_service

    failed = start_service(system=choice == "system")
    if failed is not None:
        ask.say(f"  ✗ {failed}")
        return False
    ask.say("  ✓ kioku runs as a service.")
    return True
