"""`kioku search`, `kioku import` and `kioku export` through the real entry point."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import pytest

from memory.store import schema
from tests.helpers.history_files import LINES, make_hermes_home, write_jsonl
from tests.helpers.paths import DATA

Kioku = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def imported(kioku: Kioku, tmp_path: Path) -> Path:
    path = write_jsonl(tmp_path / "history.jsonl", LINES)
    done = kioku("import", str(path))
    assert done.returncode == 0, done.stderr
    return path


def test_search_json_lists_sessions_in_the_documented_shape(kioku: Kioku, imported: Path) -> None:
    done = kioku("search", "planning", "--person", "alice", "--json")
    assert done.returncode == 0, done.stderr
    (result,) = json.loads(done.stdout)
    assert set(result) == {
        "session", "session_id", "platform", "title", "summary", "started_at", "score", "hits",
        "context",
    }  # fmt: skip
    assert (result["session"], result["platform"], result["title"]) == ("s1", "telegram", None)
    assert result["started_at"] == "2026-01-01T10:00:00+00:00"
    (hit,) = result["hits"]
    assert set(hit) == {"message_id", "role", "ts", "snippet", "content", "reason"}
    assert hit["snippet"] == "We **planned** the schema"
    assert hit["reason"] == "all words"
    assert [turn["content"] for turn in result["context"]] == ["Orders get their own table."]
    assert set(result["context"][0]) == {"message_id", "role", "ts", "content"}


def test_search_prints_a_readable_list(kioku: Kioku, imported: Path) -> None:
    done = kioku("search", "抹茶", "--person", "bob")
    assert done.returncode == 0, done.stderr
    assert "s2" in done.stdout and "京都の抹茶" in done.stdout


def test_search_defaults_to_the_owner(kioku: Kioku, imported: Path) -> None:
    done = kioku("search", "schema", "--json")
    assert json.loads(done.stdout) == []


def test_search_for_an_unknown_person_is_refused(kioku: Kioku, imported: Path) -> None:
    done = kioku("search", "schema", "--person", "nobody")
    assert done.returncode == 1
    assert "no person 'nobody'" in done.stderr


def test_search_needs_a_query_or_a_queries_file(kioku: Kioku) -> None:
    assert kioku("search").returncode == 2


def test_since_and_until_narrow_to_the_days_given_until_inclusive(
    kioku: Kioku, imported: Path
) -> None:
    def sessions(*dates: str) -> list[str]:
        done = kioku("search", "schema", "--person", "alice", "--json", *dates)
        assert done.returncode == 0, done.stderr
        return [result["session"] for result in json.loads(done.stdout)]

    assert sessions("--until", "2026-01-01") == ["s1"]
    assert sessions("--since", "2026-01-02") == []


def test_since_is_read_in_the_persons_zone(kioku: Kioku, imported: Path) -> None:
    # s1 was said at 10:00 UTC: 19:00 in Tokyo, after noon there; before noon in UTC.
    tokyo = {"KIOKU_SCHEDULE__DEFAULT_TIMEZONE": "Asia/Tokyo"}
    args = ("search", "schema", "-p", "alice", "--json", "--since", "2026-01-01T12:00")
    assert [r["session"] for r in json.loads(kioku(*args, env=tokyo).stdout)] == ["s1"]
    utc = {"KIOKU_SCHEDULE__DEFAULT_TIMEZONE": "UTC"}
    assert json.loads(kioku(*args, env=utc).stdout) == []


def test_since_without_a_query_lists_the_sessions_from_then(kioku: Kioku, imported: Path) -> None:
    done = kioku("search", "--person", "bob", "--since", "2025-12-31", "--json")
    assert done.returncode == 0, done.stderr
    assert [result["session"] for result in json.loads(done.stdout)] == ["s2"]


@pytest.mark.parametrize(
    ("dates", "said"),
    [
        (("--since", "2026-02-30"), "since '2026-02-30' is not a date: use YYYY-MM-DD"),
        (("--until", "yesterday"), "until 'yesterday' is not a date"),
        (("--since", "2026-03-02", "--until", "2026-03-01"), "must come before until"),
    ],
)
def test_a_bad_date_is_a_usage_error_that_says_the_form(
    kioku: Kioku, imported: Path, dates: tuple[str, ...], said: str
) -> None:
    done = kioku("search", "schema", *dates)
    assert done.returncode == 2
    assert said in done.stderr and "Traceback" not in done.stderr


def test_queries_file_prints_one_json_line_per_query_in_order(
    kioku: Kioku, imported: Path, tmp_path: Path
) -> None:
    queries = write_jsonl(
        tmp_path / "q.jsonl",
        [
            {"person": "alice", "query": "schema", "limit": 5},
            {"person": "bob", "query": "抹茶", "limit": 1},
            {"person": "bob", "query": "schema", "limit": 5},
        ],
    )
    done = kioku("search", "--queries", str(queries), "--json")
    assert done.returncode == 0, done.stderr
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [[r["session"] for r in answer] for answer in answers] == [["s1"], ["s2"], []]


def test_a_queries_line_may_carry_since_and_until(
    kioku: Kioku, imported: Path, tmp_path: Path
) -> None:
    queries = write_jsonl(
        tmp_path / "q.jsonl",
        [
            {"person": "alice", "query": "schema", "since": "2026-01-01", "until": "2026-01-01"},
            {"person": "alice", "query": "schema", "since": "2026-01-02"},
            {"person": "alice", "query": "schema", "until": "2026-13-01"},
        ],
    )
    done = kioku("search", "--queries", str(queries))
    assert done.returncode == 1
    assert "line 3: until '2026-13-01' is not a date" in done.stderr
    queries.write_text("\n".join(queries.read_text().splitlines()[:2]) + "\n")
    done = kioku("search", "--queries", str(queries))
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [[r["session"] for r in answer] for answer in answers] == [["s1"], []]


def test_a_bad_queries_line_is_reported_with_its_number(
    kioku: Kioku, imported: Path, tmp_path: Path
) -> None:
    queries = write_jsonl(
        tmp_path / "q.jsonl", [{"person": "alice", "query": "x", "limit": 5}, "{oops", "[]"]
    )
    done = kioku("search", "--queries", str(queries))
    assert done.returncode == 1
    assert "line 2: not valid JSON" in done.stderr
    assert "line 3:" in done.stderr
    assert done.stdout == ""


def test_import_refuses_a_file_with_invalid_lines_and_imports_nothing(
    kioku: Kioku, tmp_path: Path
) -> None:
    path = write_jsonl(tmp_path / "h.jsonl", [LINES[0], "{broken", {**LINES[1], "role": "x"}])
    done = kioku("import", str(path))
    assert done.returncode == 1
    assert "line 2: not valid JSON" in done.stderr
    assert "line 3: role must be one of" in done.stderr
    assert "--skip-invalid" in done.stderr
    assert kioku("export", "--person", "alice").returncode == 1


def test_skip_invalid_imports_the_valid_lines(kioku: Kioku, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "h.jsonl", [LINES[0], "{broken", LINES[1]])
    done = kioku("import", str(path), "--skip-invalid")
    assert done.returncode == 0, done.stderr
    assert "line 2" in done.stderr
    assert "Imported 1 session(s) and 2 message(s)" in done.stdout
    assert "Skipped 1 invalid line(s)" in done.stdout


def test_reimport_and_import_of_an_export_add_nothing(
    kioku: Kioku, imported: Path, tmp_path: Path
) -> None:
    again = kioku("import", str(imported))
    assert "Imported 0 session(s) and 0 message(s); 3 already present." in again.stdout
    exported = kioku("export", "--person", "alice")
    assert exported.returncode == 0, exported.stderr
    assert [json.loads(line) for line in exported.stdout.splitlines()] == LINES[:2]
    path = tmp_path / "export.jsonl"
    path.write_text(exported.stdout)
    done = kioku("import", str(path))
    assert "Imported 0 session(s) and 0 message(s); 2 already present." in done.stdout


def test_hermes_import_brings_sessions_and_notes_into_one_person(
    kioku: Kioku, tmp_path: Path, home: Path
) -> None:
    hermes = make_hermes_home(tmp_path / "hermes")
    done = kioku("import", str(hermes), "--format", "hermes", "--person", "ben")
    assert done.returncode == 0, done.stderr
    assert "Imported 2 session(s) and 4 message(s)" in done.stdout
    assert "Added 3 note(s)" in done.stdout
    assert "Prefers uv" in (home / "people" / "ben" / "MEMORY.md").read_text()
    assert "Name: Ben" in (home / "people" / "ben" / "USER.md").read_text()
    found = json.loads(kioku("search", "抹茶", "--person", "ben", "--json").stdout)
    assert [r["session"] for r in found] == ["hermes:cli_1"]
    again = kioku("import", str(hermes), "--format", "hermes", "--person", "ben")
    assert "Imported 0 session(s) and 0 message(s); 4 already present." in again.stdout


def test_hermes_import_of_a_folder_that_is_not_hermes_is_refused(
    kioku: Kioku, tmp_path: Path
) -> None:
    done = kioku("import", str(tmp_path), "--format", "hermes")
    assert done.returncode == 1
    assert "no state.db" in done.stderr


def test_jsonl_import_rejects_person_option(kioku: Kioku, imported: Path) -> None:
    assert kioku("import", str(imported), "--person", "bob").returncode == 2


def test_importing_a_missing_file_is_refused(kioku: Kioku, tmp_path: Path) -> None:
    done = kioku("import", str(tmp_path / "nope.jsonl"))
    assert done.returncode == 1
    assert "does not exist" in done.stderr


def test_search_reads_a_current_database_and_upgrades_an_old_one_first(
    kioku: Kioku, home: Path
) -> None:
    """A v6 file is opened through the store (which upgrades it); after that, the file is
    current and read straight, with the same answers."""
    home.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(DATA / "state-v6.db", home / "state.db")
    first = kioku("search", "Kyoto", "--json")
    assert first.returncode == 0, first.stderr
    with closing(sqlite3.connect(home / "state.db")) as db:
        (version,) = db.execute("PRAGMA user_version").fetchone()
    assert version == schema.SCHEMA_VERSION
    again = kioku("search", "Kyoto", "--json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout) == json.loads(first.stdout) != []
    assert kioku("search", "Kyoto", "--person", "nobody").returncode == 1
