"""`kioku doctor` on a state.db changed by hand: each problem with its fix, never a traceback;
`kioku doctor --repair` fixes what it safely can, says what it did, checks again, and loses
nothing else. It refuses while the daemon runs."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import pytest

from config.paths import ensure_home
from gateway import instance
from memory.access.identities import ensure_person, link_identity
from memory.search.ranking import Scope, search
from memory.store.database import Store
from memory.store.records import Conversation, NewMessage
from memory.store.schema import SCHEMA_VERSION
from tests.helpers.paths import DATA

Kioku = Callable[..., subprocess.CompletedProcess[str]]
REPAIR = "fix: stop kioku, then `kioku doctor --repair`"
# (conversation, turns as (role, text, speaker)): sessions 1 and 2, turns 1-3 and 4-6.
SESSIONS = [
    (
        Conversation("telegram", "100", "dm", "owner"),
        [
            ("user", "we planned the trip to Kyoto", "owner"),
            ("assistant", "抹茶のお店は京都駅の近くです", None),
            ("user", "book the ryokan", "owner"),
        ],
    ),
    (
        Conversation("discord", "g1", "group"),
        [
            ("user", "who brings the tent?", "ben"),
            ("user", "I bring the stove and the tent", "owner"),
            ("assistant", "テントとストーブ: noted", None),
        ],
    ),
]


@pytest.fixture
async def state(home: Path) -> Path:
    """A home whose state.db holds the owner's DM and a group ben spoke in."""
    ensure_home(home)
    path = home / "state.db"
    async with await Store.open(path) as store:
        await ensure_person(store, "ben", "Ben")
        await link_identity(store, "discord:200", "ben")
        for conversation, turns in SESSIONS:
            session = await store.open_session(conversation)
            for role, text, speaker in turns:
                await store.append(session.id, NewMessage(role, text, speaker))
    return path


def by_hand(path: Path, *statements: str) -> None:
    """What a person types in a SQLite tool: foreign keys off, nothing of kioku's loaded."""
    with closing(sqlite3.connect(path, isolation_level=None)) as db:
        for statement in statements:
            db.execute(statement)


def read(path: Path, sql: str) -> list[tuple[object, ...]]:
    with closing(sqlite3.connect(path)) as db:
        return db.execute(sql).fetchall()


def turns(path: Path) -> list[tuple[object, ...]]:
    return read(path, "SELECT id, session_id, role, content, speaker_id, ts FROM turns ORDER BY id")


async def found(path: Path, query: str, person: str = "owner") -> list[int]:
    async with await Store.open(path) as store:
        results = await search(store, query, Scope.of_person(person))
    return sorted(hit.message_id for result in results for hit in result.hits)


def doctor(kioku: Kioku, *args: str) -> subprocess.CompletedProcess[str]:
    result = kioku("doctor", *args)
    assert "Traceback" not in result.stdout + result.stderr, result.stdout + result.stderr
    return result


def database_lines(result: subprocess.CompletedProcess[str]) -> str:
    lines = result.stdout.splitlines()
    return "\n".join(
        line
        for index, line in enumerate(lines)
        if "database:" in line or (index and "database:" in lines[index - 1] and "fix:" in line)
    )


def test_help_names_the_repair_option(kioku: Kioku) -> None:
    result = kioku("doctor", "--help")
    assert result.returncode == 0
    assert "--repair" in result.stdout and "user_version" in result.stdout


async def test_turns_of_a_session_deleted_by_hand_in_a_v6_database_are_repaired(
    kioku: Kioku, home: Path
) -> None:
    """v6 had no trigger on sessions: a session deleted in the shell left its turns, its
    participants and their index rows behind."""
    ensure_home(home)
    path = home / "state.db"
    shutil.copyfile(DATA / "state-v6.db", path)
    path.chmod(0o600)
    kept = [turn for turn in turns(path) if turn[1] != 3]
    by_hand(path, "DELETE FROM sessions WHERE id = 3")

    result = doctor(kioku)
    assert result.returncode == 1
    said = database_lines(result)
    assert (
        f"note    database: schema v6: the next `kioku serve` upgrades it to v{SCHEMA_VERSION}"
        in said
    )
    assert "3 row(s) of turns belong to a session that is gone (session 3" in said
    assert "2 row(s) of participants belong to a session that is gone (session 3" in said
    assert f"{REPAIR} deletes them" in said
    assert "the full-text index is out of step with the turns" in said
    assert f"{REPAIR} rebuilds it from the turns" in said

    repaired = doctor(kioku, "--repair")
    assert repaired.returncode == 0, repaired.stdout
    assert f"done    upgraded state.db from schema v6 to v{SCHEMA_VERSION}" in repaired.stdout
    assert "done    deleted 3 row(s) of turns whose session is gone (session 3)" in repaired.stdout
    assert "done    deleted 2 row(s) of participants" in repaired.stdout
    assert "done    rebuilt the full-text index from the turns" in repaired.stdout
    assert repaired.stdout.index("Checking again:") < repaired.stdout.index("No problems found.")
    assert turns(path) == kept
    assert await found(path, "京都") == [2]
    assert await found(path, "tent", "ben") == []


async def test_a_dropped_trigger_and_what_it_left_are_repaired(kioku: Kioku, state: Path) -> None:
    kept = turns(state)[:3]
    by_hand(state, "DROP TRIGGER sessions_delete", "DELETE FROM sessions WHERE id = 2")

    said = database_lines(doctor(kioku))
    assert "kioku's trigger sessions_delete is gone (dropped by hand?)" in said
    assert f"{REPAIR} creates them again" in said
    assert "3 row(s) of turns belong to a session that is gone (session 2" in said
    assert "the full-text index is out of step" in said

    repaired = doctor(kioku, "--repair")
    assert repaired.returncode == 0, repaired.stdout
    assert "done    created trigger sessions_delete again" in repaired.stdout
    assert turns(state) == kept
    by_hand(state, "DELETE FROM sessions WHERE id = 1")
    assert turns(state) == []
    assert doctor(kioku).returncode == 0


async def test_an_index_out_of_step_with_turns_changed_by_hand_is_rebuilt(
    kioku: Kioku, state: Path
) -> None:
    """A turn inserted by hand has no index row; a turn whose id was changed leaves its old
    row behind."""
    by_hand(
        state,
        "INSERT INTO turns(session_id, role, content, ts) VALUES (1, 0, 'zeppelin tickets', 9)",
        "UPDATE turns SET id = 500 WHERE id = 3",
    )
    before = turns(state)
    assert await found(state, "zeppelin") == []

    result = doctor(kioku)
    assert result.returncode == 1
    said = database_lines(result)
    assert "the full-text index is out of step with the turns (FTS5's integrity-check" in said
    assert "turns.body" not in said

    repaired = doctor(kioku, "--repair")
    assert repaired.returncode == 0, repaired.stdout
    assert "done    rebuilt the full-text index from the turns" in repaired.stdout
    assert turns(state) == before
    assert await found(state, "zeppelin") == [7]
    assert await found(state, "ryokan") == [500]


async def test_content_edited_by_hand_gets_its_indexed_text_recomputed(
    kioku: Kioku, state: Path
) -> None:
    by_hand(
        state,
        "UPDATE turns SET content = '富士山に登りました' WHERE id = 2",
        "INSERT INTO turns(session_id, role, content, ts) VALUES (1, 1, '飛行船の切符', 9)",
    )
    assert await found(state, "富士山") == []

    said = database_lines(doctor(kioku))
    assert "2 turn(s) keep an indexed text (turns.body) that is not their content's" in said
    assert f"{REPAIR} recomputes it" in said

    repaired = doctor(kioku, "--repair")
    assert repaired.returncode == 0, repaired.stdout
    assert "done    recomputed the indexed text (turns.body) of 2 turn(s)" in repaired.stdout
    assert await found(state, "富士山") == [2]
    assert await found(state, "飛行船") == [7]
    assert await found(state, "抹茶") == []


async def test_a_person_deleted_by_hand_is_created_again_keeping_their_turns(
    kioku: Kioku, state: Path
) -> None:
    by_hand(state, "DELETE FROM persons WHERE id = 'ben'")

    said = database_lines(doctor(kioku))
    assert "1 row(s) of turns name a person missing from persons (ben" in said
    assert "1 row(s) of identities name a person missing from persons (ben" in said
    assert "use `kioku people forget`" in said

    repaired = doctor(kioku, "--repair")
    assert repaired.returncode == 0, repaired.stdout
    assert read(state, "SELECT id, display_name FROM persons WHERE id = 'ben'") == [("ben", None)]
    assert read(state, "SELECT person_id FROM identities") == [("ben",)]
    assert await found(state, "tent", "ben") == [4, 5]


@pytest.mark.parametrize("wrong", [3, SCHEMA_VERSION + 1])
async def test_a_user_version_set_by_hand_is_reported_refused_by_serve_and_repaired(
    kioku: Kioku, state: Path, wrong: int
) -> None:
    by_hand(state, f"PRAGMA user_version = {wrong}")

    said = database_lines(doctor(kioku))
    assert (
        f"its user_version says schema v{wrong}, but its tables are those of v{SCHEMA_VERSION}"
        in said
    )
    assert f"{REPAIR} sets it to {SCHEMA_VERSION}; or with kioku stopped, `sqlite3 {state} " in said
    served = kioku("serve", timeout=30)
    assert served.returncode == 1
    assert f"cannot open {state}: state.db " in served.stderr
    assert "`kioku doctor --repair` sets it back" in served.stderr
    assert "Traceback" not in served.stderr

    repaired = doctor(kioku, "--repair")
    assert repaired.returncode == 0, repaired.stdout
    assert f"done    set user_version from {wrong} to {SCHEMA_VERSION}" in repaired.stdout
    assert read(state, "PRAGMA user_version") == [(SCHEMA_VERSION,)]
    assert await found(state, "kyoto") == [1]


async def test_a_v6_database_claiming_v7_is_set_back_and_upgraded(kioku: Kioku, home: Path) -> None:
    ensure_home(home)
    path = home / "state.db"
    shutil.copyfile(DATA / "state-v6.db", path)
    path.chmod(0o600)
    by_hand(path, "PRAGMA user_version = 7")

    said = database_lines(doctor(kioku))
    assert "its user_version says schema v7, but its tables are those of v6" in said

    repaired = doctor(kioku, "--repair")
    assert repaired.returncode == 0, repaired.stdout
    assert "done    set user_version from 7 to 6" in repaired.stdout
    assert f"done    upgraded state.db from schema v6 to v{SCHEMA_VERSION}" in repaired.stdout
    assert await found(path, "京都") == [2]


async def test_a_database_of_a_newer_kioku_is_left_alone(kioku: Kioku, state: Path) -> None:
    newer = SCHEMA_VERSION + 1
    by_hand(
        state, "CREATE TABLE reminders(id INTEGER PRIMARY KEY)", f"PRAGMA user_version = {newer}"
    )

    said = database_lines(doctor(kioku))
    assert f"schema version {newer} is newer than this kioku ({SCHEMA_VERSION})" in said
    assert "tables this kioku does not know (reminders)" in said
    assert "fix: upgrade kioku" in said

    repaired = doctor(kioku, "--repair")
    assert repaired.returncode == 1
    assert f"left    user_version {newer} is newer than this kioku ({SCHEMA_VERSION})" in (
        repaired.stdout
    )
    assert read(state, "PRAGMA user_version") == [(newer,)]


def test_repair_is_refused_while_the_daemon_runs(kioku: Kioku, state: Path, home: Path) -> None:
    by_hand(state, "PRAGMA user_version = 3")
    lock = instance.acquire(home)
    try:
        result = doctor(kioku, "--repair")
    finally:
        lock.release()
    assert result.returncode == 1
    assert f"kioku is already running for {home}" in result.stderr
    assert "stop it first" in result.stderr and "nothing was changed" in result.stderr
    assert read(state, "PRAGMA user_version") == [(3,)]


def test_a_healthy_database_needs_no_repair(kioku: Kioku, state: Path) -> None:
    before = turns(state)
    repaired = doctor(kioku, "--repair")
    assert repaired.returncode == 0, repaired.stdout
    assert "done    nothing: the database needed no repair" in repaired.stdout
    assert turns(state) == before
