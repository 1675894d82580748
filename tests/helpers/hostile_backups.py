"""The hostile backup corpus: each way of issue 34 to make `kioku backup verify` and
`kioku restore` crash, hang, fill a disk or write what they should not, as a function
rebuilding a real archive (`G`, made by `kioku backup`) into the hostile one.

Each builder takes the good archive and the path to write; the sizes default to what a
test needs to prove the check runs before anything is written, and `FULL` gives the
sizes the issue reproduced with (tests/bench/bench_backup_hostile.py refuses those).
`CORPUS` maps each item's name to its builder and the words its refusal must hold.
"""

from __future__ import annotations

import gzip
import hashlib
import sqlite3
import tarfile
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from memory.store.schema import SCHEMA_VERSION
from tests.helpers.backup_archives import Member, file_member, listed, manifest_of, members, write

Build = Callable[[Path, Path], Path]


def deep_manifest(good: Path, out: Path, depth: int = 200_000) -> Path:
    """manifest.json nested `depth` levels (main: RecursionError in `json.loads`)."""
    found = members(good)
    found[0].data = b"[" * depth + b"]" * depth
    return write(out, found)


def deep_member(good: Path, out: Path, levels: int = 3_000) -> Path:
    """A member `levels` folders deep, listed with its true hash (main: "File name too
    long" and a cleanup dying of RecursionError; at 1,200, a home no backup can walk)."""
    name = "people/alice/" + "d/" * levels + "note.md"
    found = members(good)
    return write(
        out, [*found, file_member(name, b"deep\n")], listed(manifest_of(found), name, b"deep\n")
    )


def size_bomb(good: Path, out: Path, size: int = 16 * 1024 * 1024, name: str = "state.db") -> Path:
    """`name`'s member replaced by `size` zero bytes (a few KB compressed) while the
    manifest keeps its listing (main: all of it written, then the size refused)."""
    found = members(good)
    listed_before = {e["name"] for e in manifest_of(found)["files"]}
    manifest = manifest_of(found)
    if name not in listed_before:
        entry = {"name": name, "size": 10, "sha256": hashlib.sha256(b"0" * 10).hexdigest()}
        manifest["files"].append(entry)
        found.append(file_member(name, b""))
    for member in found:
        if member.info.name == name:
            member.data = bytes(size)
    return write(out, found, manifest)


def declared_bomb(good: Path, out: Path, size: int = 2**50) -> Path:
    """A member the manifest itself says is a petabyte: more than any disk has free."""
    found = members(good)
    manifest = manifest_of(found)
    manifest["files"].append({"name": "people/alice/huge", "size": size, "sha256": "0" * 64})
    return write(out, [*found, file_member("people/alice/huge", b"x")], manifest)


def sparse_pax(good: Path, out: Path, size: int = 300_000_000) -> Path:
    """A GNU sparse (pax 1.0) member: a few bytes stored, `size` bytes of zeros to
    tarfile (main: 300 MB written from a 7 KB archive)."""
    name = "people/alice/sparse"
    info = tarfile.TarInfo("people/alice/GNUSparseFile.0/sparse")
    info.pax_headers = {
        "GNU.sparse.major": "1",
        "GNU.sparse.minor": "0",
        "GNU.sparse.name": name,
        "GNU.sparse.realsize": str(size),
    }
    sparse_map = f"1\n{size - 1}\n1\n".encode().ljust(512, b"\0")
    data = sparse_map + b"x"
    found = members(good)
    entry = {"name": name, "size": size, "sha256": "0" * 64}
    manifest = {**manifest_of(found), "files": [*manifest_of(found)["files"], entry]}
    info.size = len(data)
    return write(out, [*found, Member(info, data)], manifest)


def pax_digits(good: Path, out: Path, digits: int = 200_000) -> Path:
    """A pax header of `digits` digits before the manifest: CVE-2024-6232, quadratic in
    tarfile before CPython 3.11.10 (main: 41 s for a 371-byte archive)."""
    header = tarfile.TarInfo("././@PaxHeader")
    header.type, header.size = tarfile.XHDTYPE, digits
    payload = b"9" * digits
    raw = header.tobuf(tarfile.USTAR_FORMAT) + payload + bytes(-digits % 512)
    return _gzip(out, raw + _tar_bytes(good))


def pax_record_without_length(good: Path, out: Path) -> Path:
    """A small pax header whose one record's length is 10,000 digits long."""
    payload = b"1" * 10_000 + b" path=manifest.json\n"
    header = tarfile.TarInfo("././@PaxHeader")
    header.type, header.size = tarfile.XHDTYPE, len(payload)
    raw = header.tobuf(tarfile.USTAR_FORMAT) + payload + bytes(-len(payload) % 512)
    return _gzip(out, raw + _tar_bytes(good))


def _gzip_changed(change: Callable[[bytes], bytes]) -> Build:
    def make(good: Path, out: Path) -> Path:
        out.write_bytes(change(good.read_bytes()))
        return out

    return make


def _flip(data: bytes, at: int) -> bytes:
    changed = bytearray(data)
    changed[at] ^= 0x01
    return bytes(changed)


def data_after_the_tar_end(good: Path, out: Path) -> Path:
    """Bytes after the tar's end-of-archive blocks, inside a whole gzip stream."""
    return _gzip(out, _tar_bytes(good) + b"smuggled" * 64)


def _database_changed(script: str, counts: dict[str, int] | None = None) -> Build:
    """G with its state.db changed by `script` and listed with its true hash."""

    def make(good: Path, out: Path) -> Path:
        found = members(good)
        [db] = [m for m in found if m.info.name == "state.db"]
        scratch = out.with_suffix(".db")
        scratch.unlink(missing_ok=True)
        scratch.write_bytes(db.data or b"")
        connection = sqlite3.connect(scratch, isolation_level=None)
        connection.executescript(script)
        connection.close()
        db.data = scratch.read_bytes()
        scratch.unlink()
        manifest = manifest_of(found)
        manifest["files"] = [e for e in manifest["files"] if e["name"] != "state.db"]
        if counts is not None:
            manifest["counts"] = counts
        return write(out, found, listed(manifest, "state.db", db.data))

    return make


def foreign_schema(good: Path, out: Path) -> Path:
    """A state.db of someone else's layout with kioku's `user_version` (main: restored,
    then `kioku search` and `kioku history list` print tracebacks)."""
    found = members(good)
    [db] = [m for m in found if m.info.name == "state.db"]
    scratch = out.with_suffix(".db")
    scratch.unlink(missing_ok=True)
    connection = sqlite3.connect(scratch, isolation_level=None)
    connection.executescript(
        "CREATE TABLE persons(name TEXT); CREATE TABLE sessions(x BLOB);"
        f"CREATE TABLE turns(y BLOB); PRAGMA user_version = {SCHEMA_VERSION};"
    )
    connection.close()
    db.data = scratch.read_bytes()
    scratch.unlink()
    manifest = manifest_of(found)
    manifest["files"] = [e for e in manifest["files"] if e["name"] != "state.db"]
    manifest["counts"] = {"persons": 0, "sessions": 0, "turns": 0}
    return write(out, found, listed(manifest, "state.db", db.data))


ENDLESS = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT n AS id FROM r"
recursive_turns = _database_changed(f"DROP TABLE turns; CREATE VIEW turns AS {ENDLESS};")
"""`turns` an endless recursive view (main: verify and restore never end)."""
recursive_messages = _database_changed(f"DROP VIEW messages; CREATE VIEW messages AS {ENDLESS};")
"""kioku's view `messages` replaced by an endless one (search would never end)."""
foreign_trigger = _database_changed(
    "CREATE TRIGGER wipe AFTER INSERT ON turns BEGIN DELETE FROM persons; END;"
)


def secrets_smuggled(good: Path, out: Path) -> Path:
    """`.env` in an archive whose manifest says `with_secrets: false` (main: written)."""
    found = members(good)
    data = b"KIOKU_TELEGRAM__TOKEN=999:planted\n"
    manifest = listed(manifest_of(found), ".env", data)
    assert manifest["with_secrets"] is False
    return write(out, [*found, file_member(".env", data)], manifest)


def _tar_bytes(good: Path) -> bytes:
    return gzip.decompress(good.read_bytes())


def _gzip(out: Path, raw: bytes) -> Path:
    out.write_bytes(gzip.compress(raw))
    return out


CORPUS: dict[str, tuple[Build, str]] = {
    "manifest-200000-deep": (deep_manifest, "nests deeper than 8 levels"),
    "member-3000-folders-deep": (deep_member, "bytes \\(at most 1024\\)"),
    "member-40-folders-deep": (partial(deep_member, levels=40), "folders deep \\(at most 31\\)"),
    "state.db-size-bomb": (size_bomb, "state.db in the archive does not match its manifest"),
    "member-size-bomb": (
        partial(size_bomb, name="people/alice/bomb"),
        "people/alice/bomb in the archive does not match its manifest",
    ),
    "declared-petabyte": (declared_bomb, "listed: 1125899906842624|take 1,125,899,90"),
    "sparse-pax-member": (sparse_pax, "a sparse file: refused"),
    "pax-header-200000-digits": (pax_digits, "extended header of 200000 bytes"),
    "pax-record-10000-digit-length": (pax_record_without_length, "a pax record without its length"),
    "gzip-trailer-cut": (_gzip_changed(lambda d: d[:-4]), "ends before its compressed data"),
    "gzip-crc-flipped": (_gzip_changed(lambda d: _flip(d, -8)), "incorrect data check"),
    "gzip-length-changed": (_gzip_changed(lambda d: _flip(d, -1)), "incorrect length check"),
    "gzip-junk-appended": (_gzip_changed(lambda d: d + b"junk"), "bytes appended after"),
    "data-after-the-tar-end": (data_after_the_tar_end, "data after the end of its archive"),
    "foreign-schema": (foreign_schema, "or is no kioku database"),
    "turns-a-recursive-view": (recursive_turns, "a view turns where kioku keeps a table"),
    "messages-a-recursive-view": (recursive_messages, "defines the view messages otherwise"),
    "foreign-trigger": (foreign_trigger, "triggers kioku does not define \\(wipe\\)"),
    "env-without-with-secrets": (secrets_smuggled, "made without secrets, yet it lists .env"),
}
FULL: dict[str, dict[str, Any]] = {
    "state.db-size-bomb": {"size": 300_000_000},
    "member-size-bomb": {"size": 300_000_000},
}
"""The sizes issue 34 reproduced with, where the corpus's default is smaller."""
