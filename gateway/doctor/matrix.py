"""`kioku doctor` on Matrix's kept state: the private folder, and each encrypted message
kioku could not decrypt (the adapter records them; nothing undecryptable is dropped in
silence), with what the sender can do about it."""

from __future__ import annotations

from pathlib import Path

from adapters.matrix.keep import SESSION, saved_login, undecryptable
from config.settings import Settings
from gateway.doctor.finding import Finding

SHOWN = 3
"""Undecryptable messages named; the count says how many more."""


def check_matrix(settings: Settings, home: Path) -> list[Finding]:
    matrix = settings.matrix
    if matrix.user_id is None:
        return []
    folder = home / "matrix"
    if not folder.is_dir():
        return [Finding("note", "matrix keys", f"none yet: the first start makes them in {folder}")]
    findings = []
    if folder.stat().st_mode & 0o077:
        findings.append(
            Finding(
                "problem",
                "matrix keys",
                f"{folder} is readable by others: it holds the device's keys and its token",
                f"chmod 700 {folder}",
            )
        )
    kept = saved_login(folder, matrix.homeserver or "", matrix.user_id)
    device = kept.device_id if kept else matrix.device_id
    if device is not None and not list(folder.glob(f"*_{device}.db")):
        findings.append(
            Finding(
                "warning",
                "matrix keys",
                f"no encryption store for device {device} in {folder}: the rooms' keys are "
                "lost, and encrypted messages sent before now cannot be read",
                f"people verify kioku's device again; restore {folder} from a backup if "
                f"you have one (else delete {folder / SESSION} to log in as a new device)",
            )
        )
    findings += _undecryptable(folder, device or "?")
    return findings


def _undecryptable(folder: Path, device: str) -> list[Finding]:
    found = undecryptable(folder)
    if not found:
        return [Finding("ok", "matrix decryption", "every encrypted message was read")]
    named = "; ".join(f"{e.sender} in {e.room} at {e.at}" for e in found[-SHOWN:])
    more = f" (and {len(found) - SHOWN} before)" if len(found) > SHOWN else ""
    return [
        Finding(
            "warning",
            "matrix decryption",
            f"{len(found)} encrypted message(s) kioku could not decrypt: {named}{more}",
            f"ask the sender to verify kioku's session {device} (Element: the room's "
            "People → kioku → Sessions → Verify) and send the message again; kioku asked "
            f"their devices for the key. The list is {folder / 'undecryptable.jsonl'} "
            "(delete it once dealt with)",
        )
    ]
