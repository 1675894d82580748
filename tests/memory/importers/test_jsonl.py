"""jsonl import/export and the Hermes import: round trips, idempotence, refused lines."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from memory.access.identities import get_person
from memory.importers.hermes import HermesError, read_hermes_notes, read_hermes_sessions
from memory.importers.jsonl import (
    Parsed,
    check_conflicts,
    export_jsonl,
    parse_jsonl,
    parse_ts,
    store_parsed,
)
from memory.store.database import Store
from memory.store.records import Conversation, NewMessage, PastSession
from tests.helpers.history_files import LINES, make_hermes_home, write_jsonl


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    async with await Store.open(tmp_path / "state.db") as opened:
        yield opened


async def import_file(store: Store, path: Path) -> tuple[int, int, int]:
    parsed = parse_jsonl(path)
    await check_conflicts(store, parsed)
    assert not parsed.problems, parsed.problems
    counts = await store_parsed(store, parsed)
    return counts.sessions_added, counts.messages_added, counts.messages_present


async def test_jsonl_import_creates_persons_dm_sessions_and_turns(
    store: Store, tmp_path: Path
) -> None:
    assert await import_file(store, write_jsonl(tmp_path / "h.jsonl", LINES)) == (2, 3, 0)
    alice = await get_person(store, "alice")
    assert alice is not None and alice.display_name == "Alice"
    session = await store.session_by_external_id("s1")
    assert session is not None
    assert (session.kind, session.person, session.platform, session.chat) == (
        "dm", "alice", "telegram", "42"
    )  # fmt: skip
    turns = await store.messages(session.id)
    assert [(t.role, t.speaker) for t in turns] == [("user", "alice"), ("assistant", None)]


async def test_reimporting_the_same_file_adds_nothing(store: Store, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "h.jsonl", LINES)
    await import_file(store, path)
    assert await import_file(store, path) == (0, 0, 3)


async def test_export_reimports_as_a_no_op_and_keeps_every_field(
    store: Store, tmp_path: Path
) -> None:
    await import_file(store, write_jsonl(tmp_path / "h.jsonl", LINES))
    exported = [json.loads(line) async for line in export_jsonl(store, "alice")]
    assert exported == LINES[:2]
    bob = [json.loads(line) async for line in export_jsonl(store, "bob")]
    assert bob[0]["ts"] == "2026-01-01T23:00:00.250000+00:00"
    assert await import_file(store, write_jsonl(tmp_path / "e.jsonl", exported)) == (0, 0, 2)


async def test_export_then_import_into_an_empty_store_round_trips(
    store: Store, tmp_path: Path
) -> None:
    session = await store.open_session(Conversation("slack", "T:U", "dm", "owner"))
    await store.append(session.id, NewMessage("user", "ping", speaker="owner"))
    await store.append(
        session.id, NewMessage("tool", "", tool_name="t", tool_arguments="{}", tool_result="ok")
    )
    lines = [json.loads(line) async for line in export_jsonl(store, "owner")]
    async with await Store.open(tmp_path / "other.db") as other:
        await import_file(other, write_jsonl(tmp_path / "e.jsonl", lines))
        again = [json.loads(line) async for line in export_jsonl(other, "owner")]
    assert again == lines
    assert lines[1]["tool_result"] == "ok"


def test_invalid_lines_are_reported_with_numbers_and_reasons(tmp_path: Path) -> None:
    bad = [
        json.dumps(LINES[0]),
        "{not json",
        json.dumps({**LINES[0], "role": "system"}),
        json.dumps({k: v for k, v in LINES[0].items() if k not in ("ts", "chat")}),
        json.dumps({**LINES[0], "person": "Bad Name"}),
        json.dumps({**LINES[0], "ts": "yesterday"}),
        "[1, 2]",
        json.dumps({**LINES[1], "chat": "other"}),
    ]
    parsed = parse_jsonl(write_jsonl(tmp_path / "bad.jsonl", bad))
    reasons = {p.line: p.reason for p in parsed.problems}
    assert sorted(reasons) == [2, 3, 4, 5, 6, 7, 8]
    assert "not valid JSON" in reasons[2]
    assert "role must be one of" in reasons[3]
    assert "missing fields chat, ts" in reasons[4]
    assert "invalid person id" in reasons[5]
    assert "ISO 8601" in reasons[6]
    assert "JSON object" in reasons[7]
    assert "on line 1" in reasons[8]
    assert parsed.messages == 1


def test_a_lone_surrogate_escape_is_refused_and_an_escaped_backslash_is_text(
    tmp_path: Path,
) -> None:
    line = json.dumps({**LINES[0], "content": "x"}).replace('"x"', '"a \\ud800 b"')
    literal = json.dumps({**LINES[1], "content": "a \\ud800 b"})  # backslash, then text
    parsed = parse_jsonl(write_jsonl(tmp_path / "h.jsonl", [line, literal]))
    assert [str(p) for p in parsed.problems] == [
        "line 1: content holds a lone surrogate (\\ud800), which is not text"
    ]
    assert [m.content for m in parsed.sessions[0].messages] == ["a \\ud800 b"]


async def test_a_session_given_twice_in_one_import_keeps_each_turn_once(store: Store) -> None:
    conversation = Conversation("telegram", "42", "dm", "alice")
    turns = [
        NewMessage("user", text, speaker="alice", ts=parse_ts(f"2026-01-01T10:00:0{n}Z"))
        for n, text in enumerate(["one", "two", "three"])
    ]
    twice = [PastSession("s1", conversation, turns[:2]), PastSession("s1", conversation, turns[1:])]
    counts = await store_parsed(store, Parsed(sessions=twice, persons={"alice": None}))
    assert (counts.sessions_added, counts.messages_added, counts.messages_present) == (1, 3, 1)
    session = await store.session_by_external_id("s1")
    assert session is not None
    assert [t.content for t in await store.messages(session.id)] == ["one", "two", "three"]


async def test_a_session_id_of_another_person_is_refused(store: Store, tmp_path: Path) -> None:
    await import_file(store, write_jsonl(tmp_path / "a.jsonl", LINES[:1]))
    parsed = parse_jsonl(write_jsonl(tmp_path / "b.jsonl", [{**LINES[0], "person": "mallory"}]))
    await check_conflicts(store, parsed)
    assert [str(p) for p in parsed.problems] == [
        "line 1: session 's1' already exists for another person"
    ]
    parsed.drop_refused()
    assert parsed.sessions == []


async def test_skipping_invalid_lines_keeps_every_valid_session(
    store: Store, tmp_path: Path
) -> None:
    parsed = parse_jsonl(write_jsonl(tmp_path / "h.jsonl", [LINES[0], "{not json", LINES[2]]))
    await check_conflicts(store, parsed)
    parsed.drop_refused()
    assert [s.external_id for s in parsed.sessions] == ["s1", "s2"]


def test_hermes_sessions_become_the_persons_dm_sessions(tmp_path: Path) -> None:
    sessions, problems = read_hermes_sessions(make_hermes_home(tmp_path / "hermes"), "ben")
    assert problems == []
    assert [s.external_id for s in sessions] == ["hermes:20260101_abc", "hermes:cli_1"]
    first, second = sessions
    assert first.title == "Schema talk" and first.usage.input_tokens == 120
    assert first.conversation.person == "ben" and first.conversation.platform == "telegram"
    assert [(m.role, m.content, m.tool_name) for m in first.messages] == [
        ("user", "We planned the database schema", None),
        ("tool", "", "web_search"),
        ("assistant", "Use WAL mode.", None),
    ]
    assert first.messages[1].tool_arguments == '{"q": "wal mode"}'
    assert first.messages[1].tool_result == "WAL lets readers run"
    assert [m.content for m in second.messages] == ["京都で抹茶"]


def test_hermes_notes_are_read_as_entries(tmp_path: Path) -> None:
    notes = read_hermes_notes(make_hermes_home(tmp_path / "hermes"))
    assert notes == {"memory": ["Runs Postgres 16 at home", "Prefers uv"], "user": ["Name: Ben"]}


def test_a_folder_without_state_db_is_not_a_hermes_home(tmp_path: Path) -> None:
    with pytest.raises(HermesError, match=r"no state\.db"):
        read_hermes_sessions(tmp_path, "owner")


@pytest.mark.parametrize("raw", ["2026-01-01T10:00:00Z", "2026-01-01T10:00:00", 1767261600])
def test_times_may_be_iso_with_z_naive_utc_or_unix_seconds(raw: object) -> None:
    assert parse_ts(raw).isoformat() == "2026-01-01T10:00:00+00:00"
