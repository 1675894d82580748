"""The CLI socket's frames: built and read by the same functions on both ends."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from adapters.cli.framer import Framer
from adapters.cli.names import DEFAULT_CONVERSATION, socket_path
from adapters.cli.protocol import (
    MAX_ID,
    BadFrame,
    Message,
    decode,
    encode,
    error_frame,
    message_frame,
    parse_frame,
    status_frame,
    status_request,
    text_frame,
    too_long,
)


def test_the_socket_lives_in_the_home() -> None:
    assert socket_path(Path("/srv/kioku")) == Path("/srv/kioku/gateway.sock")


def test_a_frame_is_one_json_line_that_keeps_non_ascii_text() -> None:
    line = encode(message_frame("a1", "京都で抹茶\nを", "work"))
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert "京都".encode() in line
    assert decode(line) == {
        "type": "message",
        "id": "a1",
        "text": "京都で抹茶\nを",
        "conversation": "work",
    }


def test_what_the_client_builds_the_server_parses() -> None:
    assert parse_frame(encode(message_frame("a1", "hi"))) == Message(
        "a1", "hi", DEFAULT_CONVERSATION
    )
    assert parse_frame(encode(status_request())) == "status"


def test_the_daemons_frames_have_their_documented_shapes() -> None:
    assert text_frame("delta", "a1", "pi") == {"type": "delta", "id": "a1", "text": "pi"}
    assert text_frame("reply", "a1", "pie") == {"type": "reply", "id": "a1", "text": "pie"}
    assert status_frame({"pid": 7, "type": "ignored"}) == {"pid": 7, "type": "status"}
    assert error_frame("no") == {"type": "error", "message": "no"}
    assert error_frame("no", "a1") == {"type": "error", "message": "no", "id": "a1"}
    assert too_long(1000) == "frame longer than 1000 bytes: dropped"


@pytest.mark.parametrize("line", [b"not json", b"[1, 2]", b"\xff\xfe"])
def test_a_line_that_is_no_json_object_is_a_bad_frame(line: bytes) -> None:
    with pytest.raises(BadFrame):
        decode(line)


def test_a_bad_message_names_its_id_when_it_has_one() -> None:
    with pytest.raises(BadFrame) as raised:
        parse_frame(encode({"type": "message", "id": "a1", "text": " "}))
    assert raised.value.frame_id == "a1"
    with pytest.raises(BadFrame, match=f"1 to {MAX_ID} characters"):
        parse_frame(
            json.dumps({"type": "message", "id": "x" * (MAX_ID + 1), "text": "hi"}).encode()
        )


def test_framer_splits_lines_and_reports_a_long_one_once() -> None:
    framer = Framer(limit=4)
    assert framer.feed(b"ab\ncd") == [b"ab"]
    out = framer.feed(b"efgh")
    assert len(out) == 1 and out[0] is not None and not isinstance(out[0], bytes)
    assert framer.feed(b"ijk\nok\n") == [b"ok"]
