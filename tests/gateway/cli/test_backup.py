"""`kioku backup`, `kioku backup verify` and `kioku restore` through the real entry point."""

from __future__ import annotations

import os
import pty
import stat
import subprocess
from collections.abc import Callable
from pathlib import Path

from gateway import instance
from tests.helpers.backup_archives import NOTE, make_home, members, write
from tests.helpers.paths import KIOKU

Kioku = Callable[..., subprocess.CompletedProcess[str]]


def backed_up(kioku: Kioku, *args: str) -> Path:
    done = kioku("backup", *args)
    assert done.returncode == 0, done.stderr
    return Path(done.stdout.splitlines()[0])


def test_backup_writes_a_private_archive_in_home_backups_and_prints_its_path(
    kioku: Kioku, home: Path
) -> None:
    make_home(home)
    done = kioku("backup")
    assert done.returncode == 0, done.stderr
    path = Path(done.stdout.splitlines()[0])
    assert path.parent == home / "backups" and path.name.startswith("kioku-backup-")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert "3 persons, 2 sessions, 20 messages" in done.stdout
    assert ".env" not in {m.info.name for m in members(path)}


def test_backup_to_a_folder_with_secrets(kioku: Kioku, home: Path, tmp_path: Path) -> None:
    make_home(home)
    path = backed_up(kioku, "--to", str(tmp_path / "elsewhere"), "--with-secrets")
    assert path.parent == tmp_path / "elsewhere"
    assert ".env" in {m.info.name for m in members(path)}


def test_backup_goes_to_backup_dir_when_set(kioku: Kioku, home: Path, tmp_path: Path) -> None:
    make_home(home)
    done = kioku("backup", env={"KIOKU_BACKUP__DIR": str(tmp_path / "configured")})
    assert done.returncode == 0, done.stderr
    assert Path(done.stdout.splitlines()[0]).parent == tmp_path / "configured"


def test_backup_of_a_home_that_never_ran_exits_1(kioku: Kioku, home: Path) -> None:
    done = kioku("backup")
    assert done.returncode == 1
    assert "holds no state.db" in done.stderr


def test_verify_says_ok_with_what_the_backup_holds(kioku: Kioku, home: Path) -> None:
    make_home(home)
    path = backed_up(kioku)
    done = kioku("backup", "verify", str(path))
    assert done.returncode == 0, done.stderr
    assert ": ok (kioku 0.1.0, schema v" in done.stdout and "20 messages" in done.stdout


def test_verify_of_a_tampered_archive_exits_1_naming_the_member(
    kioku: Kioku, home: Path, tmp_path: Path
) -> None:
    make_home(home)
    found = members(backed_up(kioku))
    for member in found:
        if member.info.name == "people/alice/USER.md":
            member.data = b"changed\n"
    bad = write(tmp_path / "bad.tar.gz", found)
    done = kioku("backup", "verify", str(bad))
    assert done.returncode == 1
    assert "NOT OK" in done.stderr and "people/alice/USER.md" in done.stderr


def test_restore_into_a_new_home(kioku: Kioku, home: Path, tmp_path: Path) -> None:
    make_home(home)
    path = backed_up(kioku)
    target = tmp_path / "restored"
    done = kioku("restore", str(path), "--home", str(target))
    assert done.returncode == 0, done.stderr
    assert f"into {target}" in done.stdout
    assert (target / "people" / "alice" / "USER.md").read_text() == NOTE + "\n"


def test_restore_over_a_home_in_use_needs_yes_and_moves_it_aside(
    kioku: Kioku, home: Path, tmp_path: Path
) -> None:
    make_home(home)
    path = backed_up(kioku, "--to", str(tmp_path / "b"))
    (home / "people" / "alice" / "USER.md").write_text("changed since\n")
    refused = kioku("restore", str(path))
    assert refused.returncode == 1
    assert "is not empty" in refused.stderr and "--yes" in refused.stderr
    assert (home / "people" / "alice" / "USER.md").read_text() == "changed since\n"
    done = kioku("restore", str(path), "--yes")
    assert done.returncode == 0, done.stderr
    [aside] = [p for p in tmp_path.iterdir() if p.name.startswith("kioku-home.before-restore-")]
    assert f"the previous home is now {aside}" in done.stdout
    assert (aside / "people" / "alice" / "USER.md").read_text() == "changed since\n"
    assert (home / "people" / "alice" / "USER.md").read_text() == NOTE + "\n"


def test_restore_is_refused_while_a_daemon_holds_the_home(
    kioku: Kioku, home: Path, tmp_path: Path
) -> None:
    make_home(home)
    path = backed_up(kioku, "--to", str(tmp_path / "b"))
    lock = instance.acquire(home)
    try:
        done = kioku("restore", str(path), "--yes")
    finally:
        lock.release()
    assert done.returncode == 1
    assert "already running" in done.stderr and "stop it first" in done.stderr
    assert not [p for p in tmp_path.iterdir() if "before-restore" in p.name]


def test_restore_of_a_missing_file_exits_1(kioku: Kioku, tmp_path: Path) -> None:
    done = kioku("restore", str(tmp_path / "nope.tar.gz"), "--home", str(tmp_path / "h"))
    assert done.returncode == 1
    assert "does not exist" in done.stderr


def test_help_names_the_commands(kioku: Kioku) -> None:
    top = kioku("--help").stdout
    assert "backup" in top and "restore" in top
    assert "verify" in kioku("backup", "--help").stdout


def test_doctor_reports_the_newest_backup_when_backups_are_scheduled(
    kioku: Kioku, home: Path
) -> None:
    make_home(home)
    every = {"KIOKU_BACKUP__EVERY": "1d"}
    assert "backup" not in kioku("doctor").stdout
    none = kioku("doctor", env=every)
    assert f"PROBLEM backup: no backup in {home / 'backups'} yet" in none.stdout
    assert none.returncode == 1
    path = backed_up(kioku)
    fresh = kioku("doctor", env=every).stdout
    assert f"ok      backup: newest {path.name}, " in fresh and "(every 1d)" in fresh


def test_doctor_calls_a_backup_older_than_twice_every_a_problem(kioku: Kioku, home: Path) -> None:
    make_home(home)
    path = backed_up(kioku)
    old = path.with_name("kioku-backup-20200101T000000Z.tar.gz")
    path.rename(old)
    done = kioku("doctor", env={"KIOKU_BACKUP__EVERY": "1h"})
    assert f"PROBLEM backup: newest {old.name}, " in done.stdout


def test_backup_shows_a_progress_bar_when_stderr_is_a_terminal(home: Path) -> None:
    make_home(home)
    leader, follower = pty.openpty()
    try:
        done = subprocess.run(
            [str(KIOKU), "backup"], stderr=follower, stdout=subprocess.PIPE, text=True, timeout=60
        )
        os.close(follower)
        shown = b""
        while chunk := _read(leader):
            shown += chunk
    finally:
        os.close(leader)
    assert done.returncode == 0
    assert b"copying state.db" in shown and b"compressing" in shown


def _read(fd: int) -> bytes:
    try:
        return os.read(fd, 65536)
    except OSError:  # EIO: the terminal's other end is closed and everything was read
        return b""
