"""Files on the CLI socket: `attach` frames as built by the client, read and gathered
by the daemon's end, with the caps that keep a client from making it hold too much."""

from __future__ import annotations

import base64
import contextlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from adapters.base import TooLarge
from adapters.cli.protocol import (
    CHUNK_BYTES,
    MAX_ATTACHED_BYTES,
    MAX_ATTACHMENTS,
    MAX_FRAME,
    Attach,
    BadFrame,
    Message,
    attach_frames,
    encode,
    message_frame,
    parse_frame,
)
from adapters.cli.uploads import AT_ONCE, Received, Uploads, attachment


def pieces_of(data: bytes, size: int = CHUNK_BYTES) -> list[bytes]:
    return [data[start : start + size] for start in range(0, len(data), size)]


def frames_of(message_id: str, name: str, mime: str, data: bytes) -> list[Attach]:
    """What the client sends for one file, as the daemon reads it off the line."""
    built = attach_frames(message_id, name, mime, len(data), iter(pieces_of(data)))
    parsed = [parse_frame(encode(frame)) for frame in built]
    assert all(isinstance(frame, Attach) for frame in parsed)
    return parsed  # type: ignore[return-value]


def attach(message_id: str, name: str, size: int, data: bytes, last: bool) -> Attach:
    return Attach(message_id, name, "text/plain", size, data, last)


def test_a_file_goes_in_pieces_each_frame_under_the_frame_limit() -> None:
    data = bytes(range(256)) * (CHUNK_BYTES * 5 // 2 // 256)
    built = list(
        attach_frames("m1", "長い名前.pdf", "application/pdf", len(data), iter(pieces_of(data)))
    )
    assert len(built) == 3
    assert [frame["last"] for frame in built] == [False, False, True]
    assert all(len(encode(frame)) <= MAX_FRAME for frame in built)
    assert b"".join(base64.b64decode(frame["data"]) for frame in built) == data
    assert {(f["type"], f["id"], f["name"], f["size"]) for f in built} == {
        ("attach", "m1", "長い名前.pdf", len(data))
    }


def test_an_empty_file_is_one_last_frame_without_data() -> None:
    assert list(attach_frames("m1", "empty.txt", "text/plain", 0, iter([]))) == [
        {
            "type": "attach",
            "id": "m1",
            "name": "empty.txt",
            "mime": "text/plain",
            "size": 0,
            "data": "",
            "last": True,
        }
    ]


@given(
    files=st.lists(st.binary(max_size=3000), min_size=1, max_size=4),
    piece=st.integers(min_value=1, max_value=700),
)
def test_any_files_cut_anywhere_arrive_whole_and_in_order(files: list[bytes], piece: int) -> None:
    uploads = Uploads()
    for number, data in enumerate(files):
        chunks = pieces_of(data, piece)
        for frame in attach_frames("m", f"f{number}", "text/plain", len(data), iter(chunks)):
            parsed = parse_frame(encode(frame))
            assert isinstance(parsed, Attach)
            uploads.add(parsed)
    received = uploads.take(Message("m", "", "default", len(files)))
    assert received == tuple(Received(f"f{n}", "text/plain", data) for n, data in enumerate(files))
    assert uploads.held == 0


def test_a_message_may_be_empty_only_when_it_carries_files() -> None:
    assert parse_frame(encode(message_frame("m", "", attachments=2))) == Message(
        "m", "", "default", 2
    )
    with pytest.raises(BadFrame, match="non-empty 'text'"):
        parse_frame(encode(message_frame("m", " ")))


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"name": "../etc/passwd"}, "a file name \\(no '/'\\)"),
        ({"name": ""}, "needs a 'name'"),
        ({"name": "a\nb"}, "needs a 'name'"),
        ({"mime": "not a type"}, "'mime' type such as 'image/jpeg'"),
        ({"size": -1}, "'size' in bytes"),
        ({"size": "12"}, "'size' in bytes"),
        ({"size": True}, "'size' in bytes"),
        ({"size": MAX_ATTACHED_BYTES + 1}, f"at most {MAX_ATTACHED_BYTES} bytes of files"),
        ({"data": "not base64!"}, "not valid base64"),
        ({"data": 12}, "'data': the piece of the file in base64"),
        ({"data": base64.b64encode(b"x" * (CHUNK_BYTES + 1)).decode()}, f"at most {CHUNK_BYTES}"),
        ({"last": "yes"}, "'last': true or false"),
    ],
)
def test_a_malformed_attach_frame_is_refused_naming_its_id(change: dict, says: str) -> None:
    frame = {
        "type": "attach",
        "id": "m9",
        "name": "a.txt",
        "mime": "text/plain",
        "size": 2,
        "data": base64.b64encode(b"hi").decode(),
        "last": True,
        **change,
    }
    with pytest.raises(BadFrame, match=says) as refused:
        parse_frame(encode(frame))
    assert refused.value.frame_id == "m9"


def test_an_attach_frame_needs_an_id() -> None:
    with pytest.raises(BadFrame, match="an attach frame needs an 'id'"):
        parse_frame(
            encode(
                {"type": "attach", "name": "a", "mime": "a/b", "size": 0, "data": "", "last": True}
            )
        )


@pytest.mark.parametrize("count", [-1, MAX_ATTACHMENTS + 1, "2", 1.0])
def test_a_message_with_a_bad_attachment_count_is_refused(count: object) -> None:
    frame = {"type": "message", "id": "m", "text": "hi", "attachments": count}
    with pytest.raises(BadFrame, match=f"from 0 to {MAX_ATTACHMENTS}"):
        parse_frame(encode(frame))


def test_one_file_too_many_is_refused_at_its_first_frame() -> None:
    uploads = Uploads()
    for number in range(MAX_ATTACHMENTS):
        uploads.add(attach("m", f"f{number}", 1, b"x", True))
    with pytest.raises(BadFrame, match=f"at most {MAX_ATTACHMENTS} files per message"):
        uploads.add(attach("m", "extra", 1, b"x", True))
    assert uploads.held == 0


def test_files_past_the_cap_together_are_refused_before_their_bytes() -> None:
    uploads = Uploads(cap=10)
    uploads.add(attach("m", "a", 6, b"123456", True))
    with pytest.raises(BadFrame, match="past 10 bytes, the most the socket takes"):
        uploads.add(attach("m", "b", 5, b"", False))
    assert uploads.held == 0


def test_a_connection_holds_no_more_than_the_cap_across_messages() -> None:
    uploads = Uploads(cap=10)
    uploads.add(attach("one", "a", 8, b"12345678", True))
    with pytest.raises(BadFrame, match="holds 8 bytes of files not yet sent with their message"):
        uploads.add(attach("two", "b", 8, b"12345678", True))
    assert uploads.held == 8
    assert uploads.take(Message("one", "", "default", 1)) == (
        Received("a", "text/plain", b"12345678"),
    )
    assert uploads.held == 0


def test_a_file_longer_or_shorter_than_declared_is_refused() -> None:
    uploads = Uploads()
    with pytest.raises(BadFrame, match="longer than the 2 bytes its frames declare"):
        uploads.add(attach("m", "a", 2, b"abc", True))
    with pytest.raises(BadFrame, match="ended after 1 of the 2 bytes"):
        uploads.add(attach("n", "a", 2, b"a", True))


def test_pieces_of_two_files_mixed_are_refused() -> None:
    uploads = Uploads()
    uploads.add(attach("m", "a", 2, b"a", False))
    with pytest.raises(BadFrame, match="'b' arrived while 'a' was not finished"):
        uploads.add(attach("m", "b", 2, b"b", True))


def test_after_a_refusal_the_rest_of_that_message_is_dropped_without_another_error() -> None:
    uploads = Uploads()
    with pytest.raises(BadFrame):
        uploads.add(attach("m", "a", 1, b"toolong", True))
    uploads.add(attach("m", "a", 1, b"x", True))
    assert uploads.take(Message("m", "caption", "default", 1)) is None
    assert uploads.held == 0
    uploads.add(attach("m", "a", 1, b"x", True))  # the id can be used again afterwards
    assert uploads.take(Message("m", "caption", "default", 1)) == (
        Received("a", "text/plain", b"x"),
    )


def test_a_message_must_say_how_many_files_came_before_it() -> None:
    uploads = Uploads()
    uploads.add(attach("m", "a", 1, b"x", True))
    with pytest.raises(BadFrame, match="says 2 attachment\\(s\\) but 1 arrived"):
        uploads.take(Message("m", "hi", "default", 2))
    assert uploads.held == 0
    with pytest.raises(BadFrame, match="says 1 attachment\\(s\\) but 0 arrived"):
        uploads.take(Message("n", "hi", "default", 1))


def test_a_message_before_the_end_of_its_file_is_refused() -> None:
    uploads = Uploads()
    uploads.add(attach("m", "a", 2, b"x", False))
    with pytest.raises(BadFrame, match="came before the end of a"):
        uploads.take(Message("m", "hi", "default", 1))
    assert uploads.held == 0


@pytest.mark.parametrize(
    ("name", "mime", "kind"),
    [
        ("a.jpg", "image/jpeg", "image"),
        ("a.ogg", "audio/ogg", "audio"),
        ("a.mp4", "video/mp4", "video"),
        ("a.pdf", "application/pdf", "document"),
        ("a.csv", "text/csv", "document"),
        ("logo.svg", "image/svg+xml", "document"),
        ("logo.svg", "application/octet-stream", "document"),
    ],
)
def test_the_kind_follows_the_media_type_and_an_svg_is_a_document(
    name: str, mime: str, kind: str
) -> None:
    assert attachment(Received(name, mime, b"x")).kind == kind


async def test_an_attachment_gives_its_bytes_within_the_limit_and_too_large_past_it() -> None:
    data = b"%PDF-1.4 lease"
    item = attachment(Received("lease.pdf", "application/pdf", data))
    assert (item.kind, item.name, item.mime, item.size, item.duration) == (
        "document",
        "lease.pdf",
        "application/pdf",
        len(data),
        None,
    )
    assert await item.fetch(len(data)) == data
    with pytest.raises(TooLarge, match=f"lease.pdf is {len(data)} bytes, over the limit of 4"):
        await item.fetch(4)


def test_a_generic_media_type_is_guessed_from_the_name() -> None:
    item = attachment(Received("voice.ogg", "application/octet-stream", b"OggS"))
    assert (item.kind, item.mime) == ("audio", "audio/ogg")
    unknown = attachment(Received("blob.unknownext", "application/octet-stream", b"?"))
    assert (unknown.kind, unknown.mime) == ("document", "application/octet-stream")


frame_ops = st.one_of(
    st.tuples(
        st.just("attach"),
        st.sampled_from(["a", "b", "c"]),
        st.sampled_from(["x.txt", "y.txt"]),
        st.integers(min_value=0, max_value=40),
        st.binary(max_size=20),
        st.booleans(),
    ),
    st.tuples(st.just("message"), st.sampled_from(["a", "b", "c"]), st.integers(0, 3)),
)


@given(st.lists(frame_ops, max_size=60))
def test_whatever_a_client_sends_the_held_bytes_stay_within_the_cap(ops: list[tuple]) -> None:
    uploads = Uploads(cap=64)
    for op in ops:
        try:
            if op[0] == "attach":
                _, message_id, name, size, data, last = op
                uploads.add(Attach(message_id, name, "text/plain", size, data, last))
            else:
                received = uploads.take(Message(op[1], "hi", "default", op[2]))
                assert received is None or len(received) == op[2]
        except BadFrame as refused:
            assert refused.frame_id == op[1]
        assert 0 <= uploads.held <= 64
    for message_id in ("a", "b", "c"):
        with contextlib.suppress(BadFrame):  # a message refused: what it held goes all the same
            uploads.take(Message(message_id, "hi", "default", 0))
    assert uploads.held == 0


def test_a_connection_sends_files_for_a_bounded_number_of_messages_at_once() -> None:
    uploads = Uploads()
    for number in range(AT_ONCE):
        uploads.add(attach(f"m{number}", "empty.txt", 0, b"", True))
    with pytest.raises(BadFrame, match=f"files for {AT_ONCE} messages are waiting"):
        uploads.add(attach("one-more", "empty.txt", 0, b"", True))
    assert uploads.take(Message("m0", "", "default", 1)) == (
        Received("empty.txt", "text/plain", b""),
    )
    uploads.add(attach("another", "empty.txt", 0, b"", True))  # room again
