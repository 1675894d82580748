"""The system install as a recipe: commands run as root, or printed for a person to run.

One list of steps is both what `sudo kioku service install --system` runs and what it
prints when not root or with `--dry-run`, so the printed commands are exactly the install.
Also the checks that make a service fail quietly: code or folders the `kioku` user cannot
read, and settings that live only in the installing shell.
"""

from __future__ import annotations

import os
import pwd
import shlex
import stat
import subprocess
import sys
import sysconfig
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from config.paths import SYSTEM_HOME
from gateway.service.units import SYSTEM_UNIT_PATH, SYSTEM_USER, UnitSpec

SYSTEMD_RUNNING = Path("/run/systemd/system")
PROVIDER_KEYS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")
COPIED = ("config.toml", ".env")
SECRET_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD")


@dataclass(frozen=True)
class Step:
    """One command run as root; `stdin` is fed to it (a here-document when printed)."""

    argv: tuple[str, ...]
    stdin: str | None = None
    needs_systemd: bool = False

    def shell(self, *, sudo: bool) -> str:
        line = ("sudo " if sudo else "") + shlex.join(self.argv)
        return line if self.stdin is None else f"{line} <<'EOF'\n{self.stdin}EOF"


def system_recipe(spec: UnitSpec, unit_text: str, source_home: Path) -> list[Step]:
    """The `kioku` user, its private home (with the installing home's config.toml and .env
    when the service has none yet), the unit, and systemd told to run it."""
    owner = ("-o", SYSTEM_USER, "-g", SYSTEM_USER)
    home = Path(spec.home)
    steps = []
    if not user_exists(SYSTEM_USER):
        useradd = ("useradd", "--system", "--user-group", "--home-dir", str(SYSTEM_HOME))
        steps.append(Step((*useradd, "--shell", "/usr/sbin/nologin", SYSTEM_USER)))
    steps.append(Step(("install", "-d", "-m", "0700", *owner, str(home))))
    steps.append(Step(("chown", "-R", f"{SYSTEM_USER}:{SYSTEM_USER}", str(home))))
    for name in COPIED:
        source = source_home / name
        if source_home != home and source.is_file() and _surely_absent(home / name):
            steps.append(Step(("install", "-m", "0600", *owner, str(source), str(home / name))))
    steps += [
        Step(("install", "-m", "0644", "/dev/stdin", str(SYSTEM_UNIT_PATH)), stdin=unit_text),
        Step(("systemctl", "daemon-reload"), needs_systemd=True),
        Step(("systemctl", "enable", "--now", "kioku"), needs_systemd=True),
    ]
    return steps


def run_steps(steps: list[Step], echo: Callable[[str], None]) -> list[Step]:
    """Run each step as this (root) process, echoing it first; a failure raises
    CalledProcessError. Returns the systemd steps left out because systemd is not running."""
    skipped = []
    for step in steps:
        if step.needs_systemd and not SYSTEMD_RUNNING.is_dir():
            skipped.append(step)
            continue
        echo(f"+ {shlex.join(step.argv)}")
        subprocess.run(step.argv, input=step.stdin, text=True, check=True)
    return skipped


def code_paths(executable: Path) -> list[Path]:
    """What the `kioku` user must read to run this install: the entry point, the
    interpreter, the standard library, the site-packages and kioku's own code."""
    import gateway

    package = Path(gateway.__file__).resolve()
    paths = sysconfig.get_paths()
    return [
        executable,
        Path(sys.executable).resolve(),
        Path(paths["stdlib"]),
        Path(paths["purelib"]),
        package.parents[1],
        package,
    ]


def blocked_for_others(path: Path) -> tuple[Path, int] | None:
    """The first folder on the way to `path` (or `path` itself) that a user who is neither
    its owner nor in its group cannot pass, with its mode; None when the way is open.
    A folder with an access ACL counts as open: setfacl is how a person lets `kioku` in."""
    for folder in reversed(path.parents):
        mode = folder.stat().st_mode
        if not mode & stat.S_IXOTH and not _has_acl(folder):
            return folder, stat.S_IMODE(mode)
    mode = path.stat().st_mode
    wanted = stat.S_IROTH | (stat.S_IXOTH if stat.S_ISDIR(mode) else 0)
    if mode & wanted == wanted or _has_acl(path):
        return None
    return path, stat.S_IMODE(mode)


def first_blocked(paths: Iterable[Path]) -> tuple[Path, Path, int] | None:
    """(the path, what blocks it, its mode) for the first path others cannot read."""
    for path in paths:
        blocked = blocked_for_others(path)
        if blocked is not None:
            return path, *blocked
    return None


def shell_only_secrets(environ: Mapping[str, str], dotenvs: Iterable[Path]) -> list[str]:
    """Names of kioku's secrets (settings named like a key, token, secret or password) and
    the providers' usual key variables set in this shell but in none of the `.env` files
    the service reads: the service never sees them. An unreadable `.env` holds nothing."""
    in_files = {name.upper() for path in dotenvs for name in _dotenv_names(path)}
    names = [
        name
        for name in sorted(environ)
        if name in PROVIDER_KEYS
        or (name.startswith("KIOKU_") and any(word in name.upper() for word in SECRET_WORDS))
    ]
    return [
        name
        for name in names
        if name.upper() not in in_files
        and not (name in PROVIDER_KEYS and "KIOKU_LLM__API_KEY" in in_files)
    ]


def user_exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


def _has_acl(path: Path) -> bool:
    try:
        os.getxattr(path, "system.posix_acl_access")
    except OSError:  # no ACL, or a file system without them
        return False
    return True


def _dotenv_names(path: Path) -> list[str]:
    from dotenv import dotenv_values

    try:
        return list(dotenv_values(path, encoding="utf-8"))
    except (FileNotFoundError, PermissionError):
        return []


def _surely_absent(path: Path) -> bool:
    """True only when `path` is known not to exist (a folder we cannot read tells nothing)."""
    try:
        os.stat(path)
    except FileNotFoundError:
        return True
    except PermissionError:
        return False
    return False
