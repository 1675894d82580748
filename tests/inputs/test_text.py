"""The bounded text readers and the TOML nesting scan every file door uses."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from inputs.limits import InputRefused
from inputs.text import Line, check_toml, decode_text, read_text, text_lines

LIMIT = 8


def lines_of(tmp_path: Path, data: bytes, max_line: int = 16) -> list[Line]:
    path = tmp_path / "f"
    path.write_bytes(data)
    return list(text_lines(path, max_line))


def test_lines_drop_a_leading_bom_and_crlf_and_keep_a_last_line_without_an_end(
    tmp_path: Path,
) -> None:
    lines = lines_of(tmp_path, b"\xef\xbb\xbfone\r\ntwo\nthree")
    assert [(line.number, line.text) for line in lines] == [(1, "one"), (2, "two"), (3, "three")]


def test_a_long_line_is_refused_by_its_size_and_the_next_line_is_read(tmp_path: Path) -> None:
    long, after = lines_of(tmp_path, b"x" * 100 + b"\nnext\n")
    assert long.refused == "is 101 bytes long; a line may hold 16" and long.text == ""
    assert (after.number, after.text, after.refused) == (2, "next", None)


def test_a_line_of_exactly_the_limit_is_read(tmp_path: Path) -> None:
    (line,) = lines_of(tmp_path, b"x" * 16 + b"\r\n")
    assert line.text == "x" * 16


def test_invalid_utf8_and_nul_are_refused_with_their_column(tmp_path: Path) -> None:
    bad, nul = lines_of(tmp_path, b"ab\xffc\nab\x00\n")
    assert bad.refused is not None and bad.refused.startswith(
        "not UTF-8 text (byte 0xff at column 3)"
    )
    assert nul.refused is not None and nul.refused.startswith("holds a NUL byte (column 3)")


def test_a_utf16_file_is_refused_whole(tmp_path: Path) -> None:
    with pytest.raises(InputRefused, match="line 1: not UTF-8 text but UTF-16"):
        lines_of(tmp_path, "hello\n".encode("utf-16"))


def test_decode_names_the_line_and_column_of_the_first_bad_byte() -> None:
    with pytest.raises(
        InputRefused, match=r"^notes line 3: not UTF-8 text \(byte 0xe9 at column 4\)"
    ):
        decode_text(b"one\ntwo\ncaf\xe9\n", "notes")
    assert decode_text(b"a\x00b", "notes", allow_nul=True) == "a\x00b"


def test_read_text_refuses_a_file_over_its_size_and_a_line_over_its_length(
    tmp_path: Path,
) -> None:
    path = tmp_path / ".env"
    path.write_bytes(b"A=1\n" + b"B=" + b"x" * 20 + b"\n")
    with pytest.raises(InputRefused, match=r"\.env is over 10 bytes"):
        read_text(path, ".env", 10)
    with pytest.raises(InputRefused, match=r"^\.env line 2: is 22 bytes long; a line may hold 16$"):
        read_text(path, ".env", 1000, 16)
    assert read_text(path, ".env", 1000).startswith("A=1\n")


# -- TOML ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("a = " + "[" * 50_000 + "]" * 50_000, 1),
        ("x = 1\n\na = " + "{b = " * 9 + "1" + "}" * 9, 3),
        ("a" + ".a" * (LIMIT + 1) + " = 1", 1),
        ("[" + "a." * LIMIT + "a]", 1),
        ("[[" + "a." * (LIMIT - 1) + "a]]", 1),
        ("[a.b]\nc.d.e.f.g.h.i = [1]", 2),
        ("a = [\n  1,\n  [[[[[[[[2]]]]]]]],\n]", 3),
    ],
)
def test_toml_nesting_past_the_limit_is_refused_with_its_line(text: str, line: int) -> None:
    with pytest.raises(InputRefused, match=f"^config.toml line {line}: nests deeper than {LIMIT}"):
        check_toml(text, "config.toml", LIMIT)


@pytest.mark.parametrize(
    "text",
    [
        "a = \"[[[[[[[[[[[[[[\"\nb = '{{{{{{{{{{{{'\n# [[[[[[[[[[[[[[[[[[[[",
        "c = \"\"\"\n[[[[[[[[[[[[[\n\"\"\"\nd = '''\n{{{{{{{{{{{\n'''",
        "floats = [" + ", ".join(["1.5"] * 40) + "]",
        '"quoted.dots.are.one.key.part.each.time" = 1',
        "[[a.b.c]]\nx.y.z = 1\n[[a.b.c]]\nw = {v = [1, {u = 2}]}",
    ],
)
def test_brackets_in_strings_and_comments_and_dots_in_values_do_not_count(text: str) -> None:
    check_toml(text, "config.toml", LIMIT)
    tomllib.loads(text)


def test_a_number_longer_than_python_converts_is_refused_with_its_line() -> None:
    with pytest.raises(InputRefused, match=r"^config\.toml line 2: holds a number of more than"):
        check_toml("[llm]\nmax_tokens = " + "9" * 10_000, "config.toml", LIMIT)
    check_toml('token = "' + "9" * 10_000 + '"', "config.toml", LIMIT)


def depth(value: Any) -> int:
    """Containers nested in the parsed document, the root table not counted."""
    if isinstance(value, dict | list):
        items = value.values() if isinstance(value, dict) else value
        return 1 + max((depth(item) for item in items), default=0)
    return 0


KEYS = st.from_regex(r"[a-z]{1,3}", fullmatch=True)
VALUES = st.recursive(
    st.integers(-5, 5) | st.text("[]{}#\"'=,. ab", max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=3),
    max_leaves=12,
)


def inline(value: Any) -> str:
    """`value` as inline TOML (strings as basic strings, escapes included)."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{key} = {inline(item)}" for key, item in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(inline(item) for item in value) + "]"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return str(value)


@given(st.lists(KEYS, min_size=0, max_size=3), st.lists(KEYS, min_size=1, max_size=3), VALUES)
def test_the_scan_counts_the_depth_tomllib_builds(
    table: list[str], key: list[str], value: Any
) -> None:
    text = (f"[{'.'.join(table)}]\n" if table else "") + f"{'.'.join(key)} = {inline(value)}\n"
    built = depth(tomllib.loads(text)) - 1
    try:
        check_toml(text, "config.toml", 4)
    except InputRefused:
        assert built > 4
    else:
        assert built <= 4
