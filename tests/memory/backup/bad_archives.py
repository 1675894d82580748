"""Each way an archive can be bad, as a function making it from a good one."""

from __future__ import annotations

import sqlite3
import tarfile
from collections.abc import Callable
from pathlib import Path

from tests.helpers.backup_archives import Member, file_member, listed, manifest_of, members, write


def truncated(good: Path, out: Path) -> Path:
    out.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    return out


def tampered(good: Path, out: Path) -> Path:
    found = members(good)
    for member in found:
        if member.info.name == "people/alice/USER.md":
            member.data = b"Alice likes coffee\n"
    return write(out, found)


def extra_member(good: Path, out: Path) -> Path:
    return write(out, [*members(good), file_member("people/alice/MEMORY.md", b"smuggled\n")])


def missing_member(good: Path, out: Path) -> Path:
    return write(out, [m for m in members(good) if m.info.name != "config.toml"])


def _listed_member(name: str, data: bytes) -> Callable[[Path, Path], Path]:
    """A member with a bad name, listed in the manifest with its true hash."""

    def make(good: Path, out: Path) -> Path:
        found = members(good)
        return write(out, [*found, file_member(name, data)], listed(manifest_of(found), name, data))

    return make


def _link(kind: bytes) -> Callable[[Path, Path], Path]:
    def make(good: Path, out: Path) -> Path:
        info = tarfile.TarInfo("people/alice/notes")
        info.type = kind
        info.linkname = "/etc/passwd" if kind != tarfile.LNKTYPE else "config.toml"
        return write(out, [*members(good), Member(info, None)])

    return make


def not_first(good: Path, out: Path) -> Path:
    found = members(good)
    return write(out, [*found[1:], found[0]])


def corrupt_database(good: Path, out: Path) -> Path:
    """A state.db whose pages are damaged, listed with its true (damaged) hash."""
    found = members(good)
    scratch = out.with_suffix(".db")
    [db] = [m for m in found if m.info.name == "state.db"]
    assert db.data is not None
    scratch.write_bytes(db.data)
    connection = sqlite3.connect(scratch)
    (page_size,) = connection.execute("PRAGMA page_size").fetchone()
    connection.close()
    data = bytearray(db.data)
    data[page_size * 2 : page_size * 4] = b"\xff" * (page_size * 2)
    db.data = bytes(data)
    manifest = manifest_of(found)
    manifest["files"] = [e for e in manifest["files"] if e["name"] != "state.db"]
    return write(out, found, listed(manifest, "state.db", db.data))


BAD = {
    "truncated": (truncated, "truncated or damaged"),
    "tampered": (tampered, "does not match its manifest"),
    "extra member": (extra_member, "its manifest does not list"),
    "missing member": (missing_member, "lacks 1 file"),
    "../ member": (_listed_member("../outside", b"x"), "outside the home"),
    "absolute member": (_listed_member("/tmp/outside", b"x"), "outside the home"),
    "member of no home": (_listed_member("backups/x", b"x"), "no part of a kioku home"),
    "symlink": (_link(tarfile.SYMTYPE), "a symbolic link"),
    "hard link": (_link(tarfile.LNKTYPE), "a hard link"),
    "device": (_link(tarfile.CHRTYPE), "a device or pipe"),
    "manifest not first": (not_first, "does not start with a kioku manifest"),
    "corrupt database": (corrupt_database, "integrity|damaged|malformed"),
}
