"""Names chosen by a sender's platform cannot break a stand-in's brackets, and a file's
text cannot end the fence that marks it as data."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from agent.media.naming import NAME_CHARS, duration_text, shown_name
from agent.untrusted import fenced


@given(st.text())
def test_a_shown_name_is_one_short_line_without_brackets_or_folders(name: str) -> None:
    shown = shown_name(name)

    assert len(shown) <= NAME_CHARS
    assert not set(shown) & {"[", "]", "/", "\\", "\n", "\r", "\t"}
    assert shown == shown.strip()
    shown.encode("utf-8")  # no lone surrogate


@given(st.text(), st.text())
def test_fenced_text_has_exactly_one_closing_tag_at_its_end(name: str, body: str) -> None:
    text = fenced("document", name, body)

    assert text.lower().count("</document") == 1 and text.endswith("\n</document>")
    first_line = text.split("\n", 1)[0]
    assert first_line.startswith('<document name="') and first_line.endswith('">')
    assert first_line.count('"') == 2


def test_durations_read_as_a_clock() -> None:
    assert [duration_text(s) for s in (0, 21.4, 185, 3729)] == ["0:00", "0:21", "3:05", "1:02:09"]


def test_a_path_in_a_name_keeps_only_the_file_name() -> None:
    assert shown_name("C:\\Users\\ann\\Desktop\\receipt [final].jpg") == "receipt (final).jpg"
