"""Homes to back up, and archives rebuilt member by member into the bad ones a restore
must refuse (tampered, truncated, with links or names outside the home)."""

from __future__ import annotations

import asyncio
import hashlib
import io
import json
import tarfile
from dataclasses import dataclass
from pathlib import Path

from memory.access.identities import ensure_person
from memory.store.database import Store
from memory.store.records import Conversation, NewMessage

NOTE = "Alice likes green tea"
SKILL = "---\nname: brew\ndescription: brew tea\n---\nBoil water.\n"


def make_home(home: Path, turns: int = 20) -> Path:
    """A home with two persons' history, notes, a skill, config.toml and .env."""

    async def fill() -> None:
        async with await Store.open(home / "state.db") as store:
            for person in ("alice", "bob"):
                await ensure_person(store, person)
                session = await store.open_session(Conversation("cli", person, "dm", person))
                for n in range(turns // 2):
                    await store.append(
                        session.id, NewMessage("user", f"{person} says {n}", speaker=person)
                    )

    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    asyncio.run(fill())
    (home / "people" / "alice" / "skills" / "brew").mkdir(parents=True)
    (home / "people" / "alice" / "USER.md").write_text(NOTE + "\n")
    (home / "people" / "alice" / "skills" / "brew" / "SKILL.md").write_text(SKILL)
    (home / "skills").mkdir()
    (home / "config.toml").write_text('[log]\nlevel = "info"\n')
    (home / ".env").write_text("KIOKU_TELEGRAM__TOKEN=123:secret\n")
    return home


@dataclass
class Member:
    """One member of an archive as it will be written again."""

    info: tarfile.TarInfo
    data: bytes | None


def members(archive: Path) -> list[Member]:
    with tarfile.open(archive, "r:gz") as tar:
        found = []
        for info in tar.getmembers():
            reader = tar.extractfile(info) if info.isfile() else None
            found.append(Member(info, reader.read() if reader else None))
    return found


def manifest_of(found: list[Member]) -> dict:
    assert found[0].info.name == "manifest.json" and found[0].data is not None
    return json.loads(found[0].data)


def write(archive: Path, found: list[Member], manifest: dict | None = None) -> Path:
    """Write `found` as a gzip tar at `archive`, with `manifest` in place of the first."""
    with tarfile.open(archive, "w:gz") as tar:
        for number, member in enumerate(found):
            data = member.data
            if number == 0 and manifest is not None:
                data = json.dumps(manifest).encode()
            info = member.info
            if data is not None:
                info.size = len(data)
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return archive


def file_member(name: str, data: bytes) -> Member:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    return Member(info, data)


def listed(manifest: dict, name: str, data: bytes) -> dict:
    """`manifest` with `name` added, as the true size and hash of `data`."""
    entry = {"name": name, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    return {**manifest, "files": [*manifest["files"], entry]}
