"""A gateway with the fake model (echoing unless scripted) and two persons, aiko and ben."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from memory.history.listing import Listed, list_sessions
from tests.helpers.gateway_rig import GatewayRig, gateway_rig

AIKO = "telegram:1"
BEN = "telegram:2"


@pytest.fixture
async def rig(home: Path) -> AsyncIterator[GatewayRig]:
    async with gateway_rig(home) as rig:
        await rig.person("aiko", AIKO)
        await rig.person("ben", BEN)
        yield rig


def held_anywhere(home: Path, text: str) -> list[str]:
    """Where state.db still holds `text`: turns (content, tool arguments and results) and
    session titles and summaries."""
    db = sqlite3.connect(home / "state.db")
    try:
        places = []
        for column in ("content", "tool_arguments", "tool_result"):
            rows = db.execute(f"SELECT id FROM turns WHERE {column} LIKE ?", (f"%{text}%",))
            places += [f"turn {row[0]} {column}" for row in rows]
        for column in ("title", "summary"):
            rows = db.execute(f"SELECT id FROM sessions WHERE {column} LIKE ?", (f"%{text}%",))
            places += [f"session {row[0]} {column}" for row in rows]
        return places
    finally:
        db.close()


def last_request(rig: GatewayRig) -> str:
    """The conversation kioku last sent the model, as text."""
    assert rig.api is not None
    return json.dumps(rig.api.last.json["messages"], ensure_ascii=False)


async def dm_sessions(rig: GatewayRig, person: str) -> list[Listed]:
    return await list_sessions(rig.store, person, dms_only=True)
