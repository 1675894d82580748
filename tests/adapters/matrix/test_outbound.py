"""A reply as Matrix message contents: HTML beside the plain Markdown body, relations for
threads and group replies, and pieces that fit one event."""

from __future__ import annotations

from adapters.base import Address
from adapters.matrix.outbound import HTML, LIMIT, content, pieces

ROOM = "!room:example.org"


def test_markdown_goes_as_html_with_the_markdown_as_plain_body() -> None:
    message = content("**tea** at `5`", Address("matrix", ROOM), first=True, direct=True)
    assert message["body"] == "**tea** at `5`"
    assert message["format"] == HTML
    assert message["formatted_body"] == "<p><strong>tea</strong> at <code>5</code></p>"


def test_raw_html_in_a_reply_is_shown_as_text_never_rendered() -> None:
    message = content(
        "<img src=x onerror=alert(1)>", Address("matrix", ROOM), first=True, direct=True
    )
    assert "<img" not in message["formatted_body"]
    assert "&lt;img" in message["formatted_body"]


def test_in_a_group_the_first_piece_replies_to_the_message_and_the_rest_do_not() -> None:
    address = Address("matrix", ROOM, reply_to="$asked")
    first = content("one", address, first=True, direct=False)
    second = content("two", address, first=False, direct=False)
    assert first["m.relates_to"] == {"m.in_reply_to": {"event_id": "$asked"}}
    assert "m.relates_to" not in second


def test_in_a_direct_chat_an_answer_is_no_reply_quote() -> None:
    message = content("hi", Address("matrix", ROOM, reply_to="$asked"), first=True, direct=True)
    assert "m.relates_to" not in message


def test_in_a_thread_every_piece_stays_in_the_thread() -> None:
    address = Address("matrix", ROOM, thread="$root", reply_to="$asked")
    first = content("one", address, first=True, direct=False)["m.relates_to"]
    later = content("two", address, first=False, direct=False)["m.relates_to"]
    assert first == {
        "rel_type": "m.thread",
        "event_id": "$root",
        "is_falling_back": False,
        "m.in_reply_to": {"event_id": "$asked"},
    }
    assert later["rel_type"] == "m.thread" and later["is_falling_back"] is True
    assert later["m.in_reply_to"] == {"event_id": "$root"}


def test_a_long_answer_is_split_into_pieces_that_fit_one_event() -> None:
    text = "\n\n".join(f"paragraph {n} " + "é" * 3000 for n in range(12))
    found = pieces(text)
    assert len(found) > 1
    assert all(len(piece.encode()) <= LIMIT for piece in found)
    assert "".join(found).replace("\n", "") == text.replace("\n", "")
