"""Splitting replies for platforms' message limits without breaking code blocks."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adapters.chunking import split_message, utf16_length

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")


def words(text: str) -> str:
    """The text without fence lines and whitespace: what a reader must get, in order."""
    kept = [line for line in text.split("\n") if not FENCE.match(line)]
    return "".join("\n".join(kept).split())


def ends_outside_code(chunk: str) -> bool:
    """Walk the chunk as CommonMark does: a fence closes only with its own marker, bare."""
    opening: str | None = None
    for line in chunk.split("\n"):
        match = FENCE.match(line)
        if not match:
            continue
        if opening is None:
            opening = match.group(1)
        elif match.group(1).startswith(opening) and not match.group(2).strip():
            opening = None
    return opening is None


def test_a_short_reply_is_one_message() -> None:
    assert split_message("hello", 100) == ["hello"]


def test_an_empty_reply_is_no_message() -> None:
    assert split_message("", 100) == []


def test_paragraphs_are_kept_whole_when_they_fit() -> None:
    first = "First paragraph. " * 5
    second = "Second paragraph. " * 5
    chunks = split_message(f"{first.strip()}\n\n{second.strip()}", 120)
    assert chunks == [first.strip(), second.strip()]


def test_a_cut_inside_a_code_block_closes_and_reopens_the_fence_with_its_language() -> None:
    code = "\n".join(f"print({n})" for n in range(40))
    text = f"Here is the script:\n\n```python\n{code}\n```\n\nThat is all."
    chunks = split_message(text, 200)
    assert len(chunks) > 2
    for chunk in chunks:
        assert len(chunk) <= 200
        assert ends_outside_code(chunk)
    assert chunks[1].startswith("```python\n")
    assert words("\n".join(chunks)) == words(text)


def test_a_long_line_is_cut_at_a_sentence_end() -> None:
    text = "This is one sentence that goes on. " * 10
    chunks = split_message(text.strip(), 100)
    assert all(len(chunk) <= 100 for chunk in chunks)
    assert all(chunk.endswith(".") for chunk in chunks)


def test_a_line_without_spaces_is_cut_hard() -> None:
    chunks = split_message("x" * 250, 100)
    assert [len(chunk) for chunk in chunks] == [100, 100, 50]


def test_japanese_sentences_are_cut_after_the_full_stop() -> None:
    text = "今日は京都で抹茶を飲みました。" * 20
    chunks = split_message(text, 100)
    assert all(len(chunk) <= 100 and chunk.endswith("。") for chunk in chunks)
    assert "".join(chunks) == text


def test_utf16_measure_counts_emoji_twice() -> None:
    assert utf16_length("a😀") == 3
    chunks = split_message("😀" * 100, 50, utf16_length)
    assert all(utf16_length(chunk) <= 50 for chunk in chunks)
    assert "".join(chunks) == "😀" * 100


def test_a_limit_too_small_for_fences_is_refused() -> None:
    with pytest.raises(ValueError):
        split_message("text", 10)


markdown_lines = st.one_of(
    st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=300).map(
        lambda text: text.replace("\n", " ")
    ),
    st.sampled_from(["", "```", "```python", "~~~", "```js", "- item", "# title"]),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(markdown_lines, max_size=60), st.integers(min_value=40, max_value=500))
def test_every_chunk_fits_has_balanced_fences_and_nothing_is_lost(
    lines: list[str], limit: int
) -> None:
    text = "\n".join(lines)
    chunks = split_message(text, limit, utf16_length)
    for chunk in chunks:
        assert utf16_length(chunk) <= limit
    if len(chunks) > 1:
        assert all(ends_outside_code(chunk) for chunk in chunks)
    assert words("\n".join(chunks)) == words(text)
