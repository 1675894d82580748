"""The doors files come in by: `kioku import` (kioku jsonl, a Hermes home), `kioku search
--queries`, and config.toml / .env (read by `config check`, `serve` and `doctor`).

Every hostile item is written as the file and given to the real entry point; each door
must answer with its own error (exit 1 naming the file and the line), never a traceback,
and leave what was stored before as it was. The corpus runs through one process per
door (`tests.helpers.cli_batch`); the cases of issue 24 run as `kioku` processes of
their own. Hypothesis drives the parsers at the depths where the real ones break.
"""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gateway.cli.search_asks import _query_line
from inputs.limits import MAX_JSON_DEPTH
from memory.importers.jsonl import parse_jsonl
from tests.helpers.cli_batch import Door, Job, Ran, kioku_batch
from tests.helpers.history_files import LINES, make_hermes_home, write_jsonl
from tests.helpers.hostile import ITEMS

Kioku = Callable[..., subprocess.CompletedProcess[str]]
NAMES = sorted(ITEMS)
LINE = re.compile(r" line \d+: ")
TOML_ITEMS = {
    "toml-deep-array": b"a = " + b"[" * 50_000 + b"]" * 50_000 + b"\n",
    "toml-deep-inline-table": b"a = " + b"{b = " * 50_000 + b"1" + b"}" * 50_000 + b"\n",
    "toml-deep-dotted-key": b"a" + b".a" * 50_000 + b" = 1\n",
    "toml-deep-header": b"[" + b"a." * 50_000 + b"a]\n",
    "toml-huge-integer": b"[llm]\nmax_tokens = " + b"9" * 100_000 + b"\n",
    "toml-bom": b'\xef\xbb\xbf[llm]\nmodel = "x"\n',
    "toml-crlf": b'[llm]\r\nmodel = "x"\r\n',
    "toml-no-final-newline": b'[llm]\nmodel = "x"',
}
ENV_ITEMS = {
    "env-open-quote": b'KIOKU_LLM__MODEL="no end\n',
    "env-deep-name": b"KIOKU_" + b"A__" * 40 + b"B=1\n",
    "env-long-line": b"KIOKU_LLM__MODEL=" + b"x" * 70_000 + b"\n",
    "env-bom": b"\xef\xbb\xbfKIOKU_LLM__MODEL=x\n",
    "env-crlf": b"KIOKU_LLM__MODEL=x\r\nKIOKU_LLM__MAX_TOKENS=9\r\n",
    "env-no-final-newline": b"KIOKU_LLM__MODEL=x",
}
ACCEPTED = {
    "config.toml": {"empty", "whitespace-only", "toml-crlf", "toml-no-final-newline"},
    ".env": {"empty", "whitespace-only", "top-level-scalar", "env-crlf", "env-no-final-newline"},
}
"""What is a valid file, hostile or not: a bare name is a .env variable without a value."""
EXPORT = ["export", "--person", "alice"]


def clean(done: subprocess.CompletedProcess[str]) -> None:
    Ran(done.returncode, done.stdout, done.stderr).assert_clean()


def refused_with_file_and_line(ran: Ran, path: Path) -> None:
    ran.assert_clean()
    assert ran.code == 1, ran.stdout
    assert str(path) in ran.stderr, ran.stderr
    assert LINE.search(ran.stderr) or "is empty" in ran.stderr or "is over" in ran.stderr


def write_items(folder: Path, items: dict[str, bytes]) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = {name: folder / name for name in items}
    for name, data in items.items():
        paths[name].write_bytes(data)
    return paths


# -- kioku import (jsonl) ------------------------------------------------------------------


@pytest.fixture(scope="module")
def imports(tmp_path_factory: pytest.TempPathFactory) -> Door:
    """One home with a good import; every item imported into it (plain, then with
    --skip-invalid), the export before and after, and one more good import at the end."""
    folder = tmp_path_factory.mktemp("imports")
    home = folder / "home"
    files = write_items(folder / "corpus", ITEMS)
    good = write_jsonl(folder / "good.jsonl", LINES)
    later = write_jsonl(folder / "later.jsonl", [{**LINES[0], "session": "s9"}])
    jobs = [Job("good", ["import", str(good)], home), Job("export-before", EXPORT, home)]
    jobs += [Job(name, ["import", str(files[name])], home) for name in NAMES]
    skip = ["import", "--skip-invalid"]
    jobs += [Job(f"skip:{name}", [*skip, str(files[name])], home) for name in NAMES]
    jobs += [Job("export-after", EXPORT, home), Job("later", ["import", str(later)], home)]
    return Door(folder / "corpus", kioku_batch(jobs, folder))


@pytest.mark.parametrize("name", NAMES)
def test_import_refuses_each_hostile_file_with_its_name_and_line(imports: Door, name: str) -> None:
    refused_with_file_and_line(imports.ran[name], imports.folder / name)
    assert "Imported" not in imports.ran[name].stdout


@pytest.mark.parametrize("name", NAMES)
def test_import_skip_invalid_skips_each_hostile_line_or_refuses_the_file(
    imports: Door, name: str
) -> None:
    ran = imports.ran[f"skip:{name}"]
    ran.assert_clean()
    if ran.code == 0:
        assert "Imported 0 session(s)" in ran.stdout and "Skipped" in ran.stdout
    else:
        assert ran.code == 1 and ("is empty" in ran.stderr or "UTF-16" in ran.stderr)


def test_import_of_the_corpus_changed_nothing_stored_and_the_next_import_works(
    imports: Door,
) -> None:
    ran = imports.ran
    assert ran["good"].code == 0, ran["good"].stderr
    assert ran["export-before"].stdout.count("\n") == 2
    assert ran["export-after"].stdout == ran["export-before"].stdout
    assert ran["later"].code == 0 and "Imported 1 session(s)" in ran["later"].stdout


def test_import_of_one_line_100000_levels_deep_names_the_line_and_the_limit(
    kioku: Kioku, tmp_path: Path
) -> None:
    path = tmp_path / "deep.jsonl"
    path.write_bytes(json.dumps(LINES[0]).encode() + b"\n" + ITEMS["deep-arrays"] + b"\n")
    done = kioku("import", str(path))
    clean(done)
    assert done.returncode == 1
    assert f"{path} line 2: the JSON nests deeper than {MAX_JSON_DEPTH} levels" in done.stderr


# -- kioku import --format hermes ----------------------------------------------------------


def hermes_with_items(home: Path) -> Path:
    """The small Hermes home, plus one session per JSON item: the item as a message's
    multimodal content, and as an assistant's tool_calls."""
    make_hermes_home(home)
    db = sqlite3.connect(home / "state.db")
    for number, (name, raw) in enumerate(sorted(ITEMS.items())):
        text = raw.decode("utf-8", "replace")
        for kind, content, calls in (("content", "\x00json:" + text, None), ("calls", None, text)):
            session = f"{kind}-{name}"
            db.execute(
                "INSERT INTO sessions(id, source, started_at) VALUES (?, 'cli', ?)",
                (session, 1767348000 + number),
            )
            db.execute(
                "INSERT INTO messages(session_id, role, content, tool_calls, timestamp) "
                "VALUES (?, 'assistant', ?, ?, ?)",
                (session, content or "ok", calls, 1767348000 + number),
            )
    db.execute("INSERT INTO sessions(id, source, started_at) VALUES ('bad-time', 'cli', 'soon')")
    db.commit()
    db.close()
    return home


@pytest.fixture(scope="module")
def hermes(tmp_path_factory: pytest.TempPathFactory) -> Door:
    """The Hermes home with every item in its JSON columns, imported plainly and with
    --skip-invalid; then a Hermes home per item with the item as its USER.md."""
    folder = tmp_path_factory.mktemp("hermes")
    home = folder / "home"
    source = hermes_with_items(folder / "hermes")
    noted = {}
    for name, raw in ITEMS.items():
        noted[name] = make_hermes_home(folder / f"notes-{name}")
        (noted[name] / "memories" / "USER.md").write_bytes(raw)
    hermes = ["import", "--format", "hermes"]
    jobs = [Job("plain", [*hermes, str(source)], home)]
    jobs += [Job("skip", [*hermes, str(source), "--skip-invalid"], home)]
    jobs += [Job(name, [*hermes, str(noted[name])], folder / f"home-{name}") for name in NAMES]
    return Door(folder, kioku_batch(jobs, folder))


def test_hermes_sessions_with_values_kioku_cannot_take_are_refused_by_name(
    hermes: Door,
) -> None:
    ran = hermes.ran["plain"]
    ran.assert_clean()
    assert ran.code == 1 and "Nothing imported" in ran.stderr
    assert "session 'calls-deep-arrays': message " in ran.stderr
    assert f"tool_calls nests deeper than {MAX_JSON_DEPTH} levels" in ran.stderr
    assert "session 'content-deep-objects': message " in ran.stderr
    assert "session 'bad-time': started_at 'soon' is not a time" in ran.stderr


def test_hermes_skip_invalid_imports_every_session_it_can_take(hermes: Door) -> None:
    ran = hermes.ran["skip"]
    ran.assert_clean()
    assert ran.code == 0, ran.stderr
    assert "Skipped" in ran.stdout and "Added 3 note(s)" in ran.stdout


@pytest.mark.parametrize("name", NAMES)
def test_hermes_notes_of_each_hostile_kind_are_read_or_refused_before_anything_is_stored(
    hermes: Door, name: str
) -> None:
    ran = hermes.ran[name]
    ran.assert_clean()
    if "History imported, but the Hermes notes were not" in ran.stderr:
        assert ran.code == 1 and "USER.md would be" in ran.stderr  # over the notes limit
    elif ran.code == 1:  # refused while reading, before anything was stored
        assert re.search(r"USER\.md (line 1: not UTF-8 text|is over)", ran.stderr), ran.stderr
        assert "Imported" not in ran.stdout
        assert not (hermes.folder / f"home-{name}" / "state.db").exists()
    else:
        assert "Imported" in ran.stdout


# -- kioku search --queries ----------------------------------------------------------------


@pytest.fixture(scope="module")
def queries(tmp_path_factory: pytest.TempPathFactory) -> Door:
    folder = tmp_path_factory.mktemp("queries")
    home = folder / "home"
    files = write_items(folder / "corpus", ITEMS)
    deep = folder / "deep-within-the-line-limit"
    deep.write_bytes(b'{"query": "schema", "x": ' + b"[" * 30_000 + b"]" * 30_000 + b"}\n")
    good = folder / "good"
    good.write_text('{"person": "alice", "query": "schema"}\n')
    jobs = [Job("history", ["import", str(write_jsonl(folder / "h.jsonl", LINES))], home)]
    search = ["search", "--queries"]
    jobs += [Job(name, [*search, str(files[name])], home) for name in NAMES]
    jobs += [Job("deep", [*search, str(deep)], home), Job("good", [*search, str(good)], home)]
    return Door(folder / "corpus", kioku_batch(jobs, folder))


@pytest.mark.parametrize("name", NAMES)
def test_queries_file_of_each_hostile_kind_is_refused_with_its_name_and_line(
    queries: Door, name: str
) -> None:
    refused_with_file_and_line(queries.ran[name], queries.folder / name)
    assert queries.ran[name].stdout == ""


def test_a_deep_query_line_is_refused_by_its_nesting_and_good_queries_still_run(
    queries: Door,
) -> None:
    deep = queries.ran["deep"]
    deep.assert_clean()
    assert deep.code == 1
    assert f"line 1: the JSON nests deeper than {MAX_JSON_DEPTH} levels" in deep.stderr
    good = queries.ran["good"]
    assert good.code == 0, good.stderr
    assert json.loads(good.stdout)[0]["session"] == "s1"


# -- config.toml and .env ------------------------------------------------------------------

CONFIG_ITEMS = {**ITEMS, **TOML_ITEMS}
DOTENV_ITEMS = {**ITEMS, **ENV_ITEMS}


@pytest.fixture(scope="module")
def configs(tmp_path_factory: pytest.TempPathFactory) -> Door:
    """`config check` with each item as config.toml, then as .env, each in a home of its own."""
    folder = tmp_path_factory.mktemp("configs")
    jobs = []
    for file_name, items in (("config.toml", CONFIG_ITEMS), (".env", DOTENV_ITEMS)):
        for name, data in sorted(items.items()):
            home = folder / f"{file_name}-{name}"
            write_items(home, {file_name: data})
            jobs.append(Job(f"{file_name}:{name}", ["config", "check"], home))
    return Door(folder, kioku_batch(jobs, folder))


@pytest.mark.parametrize(
    "key",
    [f"config.toml:{n}" for n in sorted(CONFIG_ITEMS)]
    + [f".env:{n}" for n in sorted(DOTENV_ITEMS)],
)
def test_config_check_names_the_file_and_line_of_each_hostile_config(
    configs: Door, key: str
) -> None:
    file_name, name = key.split(":", 1)
    ran = configs.ran[key]
    ran.assert_clean()
    if name in ACCEPTED[file_name]:
        assert ran.code == 0 and "Configuration OK" in ran.stdout, ran.stderr
        return
    assert ran.code == 1, ran.stdout
    path = configs.folder / f"{file_name}-{name}" / file_name
    assert re.search(
        rf"{re.escape(str(path))}( line \d+: |: not valid TOML: | is over )", ran.stderr
    )
    assert re.search(r" line \d+|at line \d+|at end of document|is over", ran.stderr)


DEEP_TOML = "[llm]\nmodel = 'x'\na = " + "[" * 50_000 + "]" * 50_000 + "\n"


def test_config_check_names_the_line_and_the_limit_of_a_deep_config_toml(
    kioku: Kioku, home: Path
) -> None:
    write_items(home, {"config.toml": DEEP_TOML.encode()})
    done = kioku("config", "check")
    clean(done)
    assert done.returncode == 1
    assert f"{home / 'config.toml'} line 3: nests deeper than 32 levels" in done.stderr


def test_doctor_reports_a_deep_config_toml_by_file_line_and_limit(kioku: Kioku, home: Path) -> None:
    write_items(home, {"config.toml": DEEP_TOML.encode()})
    done = kioku("doctor")
    clean(done)
    assert re.search(
        r"PROBLEM config: .*config\.toml line 3: nests deeper than 32 levels", done.stdout
    )


def test_serve_refuses_a_deep_config_toml_without_starting(kioku: Kioku, home: Path) -> None:
    write_items(home, {"config.toml": DEEP_TOML.encode()})
    done = kioku("serve", timeout=30)
    clean(done)
    assert done.returncode == 1
    assert "config.toml line 3: nests deeper than 32 levels" in done.stderr
    assert not (home / "gateway.sock").exists()


# -- the parsers, at the depths the real ones break at -------------------------------------

DEPTHS = st.integers(0, MAX_JSON_DEPTH + 4) | st.integers(800, 3000) | st.just(100_000)


def nested(depth: int, kind: str) -> str:
    if kind == "[":
        return "[" * depth + "1" + "]" * depth
    return '{"a": ' * depth + "1" + "}" * depth


@settings(max_examples=60, deadline=None)
@given(DEPTHS, st.sampled_from("[{"))
def test_a_jsonl_line_is_read_up_to_the_limit_and_refused_past_it(depth: int, kind: str) -> None:
    row = json.dumps(LINES[0])[:-1] + ', "extra": ' + nested(depth, kind) + "}\n"
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder, "h.jsonl")
        path.write_text(row, encoding="utf-8")
        parsed = parse_jsonl(path)
    if depth + 1 > MAX_JSON_DEPTH:
        (problem,) = parsed.problems
        assert problem.line == 1 and "nests deeper than" in problem.reason
    else:
        assert parsed.problems == [] and parsed.messages == 1


@settings(max_examples=60, deadline=None)
@given(DEPTHS, st.sampled_from("[{"))
def test_a_query_line_is_read_up_to_the_limit_and_refused_past_it(depth: int, kind: str) -> None:
    line = '{"query": "x", "extra": ' + nested(depth, kind) + "}"
    if depth + 1 > MAX_JSON_DEPTH:
        with pytest.raises(ValueError, match="nests deeper than"):
            _query_line(line)
    else:
        assert _query_line(line) == ("owner", "x", 10, None, None)
