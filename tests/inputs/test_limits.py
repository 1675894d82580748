"""The bounded JSON decode every door uses: deep input refused by name, the rest as json."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from inputs.limits import MAX_JSON_DEPTH, InputRefused, json_depth, loads
from tests.helpers.hostile import DEEP, ITEMS

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=30,
)


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize(
    "name", ["deep-arrays", "deep-objects", "deep-unclosed", "deep-in-a-field"]
)
def test_deep_nesting_is_refused_with_the_limit_named(name: str) -> None:
    with pytest.raises(InputRefused, match=f"deeper than {MAX_JSON_DEPTH} levels"):
        loads(ITEMS[name], what="the frame")


def test_the_refusal_is_a_value_error_so_existing_bad_input_paths_catch_it() -> None:
    with pytest.raises(ValueError, match=r"^the frame nests"):
        loads(nested(DEEP), what="the frame")


def test_nesting_up_to_the_limit_is_read() -> None:
    assert loads(nested(MAX_JSON_DEPTH)) == json.loads(nested(MAX_JSON_DEPTH))
    with pytest.raises(InputRefused):
        loads(nested(MAX_JSON_DEPTH + 1))


def test_brackets_inside_strings_do_not_count() -> None:
    text = json.dumps({"text": "[" * 1000 + '\\"{' * 100})
    assert json_depth(text) == 1
    assert loads(text)["text"].startswith("[[[")


def test_malformed_json_still_raises_json_decode_error() -> None:
    with pytest.raises(json.JSONDecodeError):
        loads('{"a": ')


def test_bytes_and_text_give_the_same_depth() -> None:
    text = '{"a": [[{"b": "]]]"}], [1]]}'
    assert json_depth(text) == json_depth(text.encode()) == 4


@given(JSON_VALUES)
def test_any_value_within_the_limit_reads_back_as_json_would(value: object) -> None:
    text = json.dumps(value)
    assert loads(text) == json.loads(text)
    assert loads(text.encode()) == json.loads(text)


def test_an_integer_too_long_for_python_is_refused_by_name() -> None:
    with pytest.raises(InputRefused, match=r"^the frame holds a number of more than \d+ digits"):
        loads(ITEMS["huge-number"], what="the frame")


def test_invalid_utf8_bytes_still_raise_a_decode_error() -> None:
    with pytest.raises(UnicodeDecodeError):
        loads(b'{"a": "\xff"}')
