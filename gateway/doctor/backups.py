"""`kioku doctor` for scheduled backups: the newest one's age against `backup.every`."""

from __future__ import annotations

from datetime import UTC, datetime

from config.settings import Settings
from gateway.doctor.finding import Finding


def check_backups(settings: Settings) -> Finding:
    """With scheduled backups on, the newest one's age: a problem past twice `every`."""
    from memory.backup.rotation import backups_folder, newest

    folder = backups_folder(settings.home, settings.backup.dir)
    every = settings.backup.every
    fix = f"run `kioku backup`, and look for backup_failed in the daemon's log (every {every})"
    try:
        last = newest(folder)
    except OSError as exc:
        return Finding("problem", "backup", f"cannot read {folder}: {exc.strerror}", fix)
    if last is None:
        return Finding("problem", "backup", f"no backup in {folder} yet", fix)
    age = (datetime.now(UTC) - last.created).total_seconds()
    text = f"newest {last.path.name}, {_age(age)} old (every {every})"
    assert settings.backup.every_seconds is not None
    if age > 2 * settings.backup.every_seconds:
        return Finding("problem", "backup", text, fix)
    return Finding("ok", "backup", text)


def _age(seconds: float) -> str:
    for unit, size in (("d", 86_400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds / size:.1f}{unit}"
    return f"{max(seconds, 0):.0f}s"
