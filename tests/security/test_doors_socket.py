"""The CLI socket, the daemon's end: the hostile corpus through a real `kioku serve`.

One daemon for the module. Every corpus item goes through its socket as a frame, and as
raw bytes that end without a newline before the client's EOF; each line of it gets an
error frame (a line over `MAX_FRAME` the existing "frame longer than" one; a blank line
is skipped), the log shows nothing unhandled, the next good message is answered and
nothing stored before changes. Hypothesis draws frames nested past the limit.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adapters.cli.protocol import MAX_FRAME, MAX_ID, BadFrame, parse_frame, too_long
from inputs.limits import MAX_JSON_DEPTH
from tests.helpers.daemon import Client, Daemon, module_daemon, stored_texts
from tests.helpers.hostile import DEEP, ITEMS, unhandled

pytestmark = pytest.mark.asyncio(loop_scope="module")

REFUSALS = {
    "deep-arrays": f"nests deeper than {MAX_JSON_DEPTH} levels",
    "deep-objects": f"nests deeper than {MAX_JSON_DEPTH} levels",
    "deep-unclosed": f"nests deeper than {MAX_JSON_DEPTH} levels",
    "deep-in-a-field": f"nests deeper than {MAX_JSON_DEPTH} levels",
    "huge-number": "digits",
    "invalid-utf8": "UTF-8",
    "utf16-bom": "UTF-8",
    "lone-surrogates": "lone surrogate",
    "top-level-scalar": "must be a JSON object",
    "top-level-array": "must be a JSON object",
}
"""What the error frame says for the items whose refusal is their own (a line over
`MAX_FRAME` gets the existing "frame longer than" one)."""


@dataclass
class Served:
    daemon: Daemon
    home: Path
    client: Client
    ids: itertools.count[int] = field(default_factory=itertools.count)

    def problems(self) -> list[str]:
        return unhandled(self.daemon.log.read_text())

    async def answered(self, client: Client | None = None) -> list[dict[str, Any]]:
        """Send a good message; the frames before its reply (which must echo it) not for it."""
        client = client or self.client
        number = next(self.ids)
        text = f"still here {number}"
        await client.send(f"good-{number}", text)
        frames = await until_reply(client, f"good-{number}")
        assert frames[-1]["text"] == f"echo: {text}"
        return [frame for frame in frames if frame.get("id") != f"good-{number}"]


async def until_reply(client: Client, frame_id: str) -> list[dict[str, Any]]:
    frames = []
    while not frames or (frames[-1]["type"], frames[-1].get("id")) != ("reply", frame_id):
        frames.append(await client.frame())
    return frames


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def served(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Served]:
    tmp = tmp_path_factory.mktemp("doors-socket")
    async with module_daemon(tmp, KIOKU_WEB__ENABLED="false") as daemon:
        served = Served(daemon, daemon.home, await Client.connect(daemon.home))
        await served.answered()
        yield served
        await served.client.close()
    assert served.problems() == []  # the shutdown too


def lines_of(raw: bytes) -> list[bytes]:
    """The lines the daemon reads from `raw` that are not blank (blank ones it skips)."""
    return [line for line in raw.split(b"\n") if line.strip()]


def check_refusals(name: str, raw: bytes, frames: list[dict[str, Any]]) -> None:
    lines = lines_of(raw)
    assert [f["type"] for f in frames] == ["error"] * len(lines), frames
    for line, frame in zip(lines, frames, strict=True):
        says = too_long(MAX_FRAME) if len(line) > MAX_FRAME else REFUSALS.get(name, "")
        assert says in frame["message"] and len(frame["message"]) < 500


@pytest.mark.parametrize("name", ITEMS)
async def test_each_corpus_item_as_a_frame_gets_an_error_and_the_next_message_its_answer(
    served: Served, name: str
) -> None:
    before = stored_texts(served.home)
    served.client.writer.write(ITEMS[name] + b"\n")
    check_refusals(name, ITEMS[name], await served.answered())
    after = stored_texts(served.home)
    assert after[: len(before)] == before and len(after) == len(before) + 2
    assert served.problems() == []


@pytest.mark.parametrize("name", ITEMS)
async def test_each_corpus_item_cut_off_by_the_clients_eof_gets_an_error(
    served: Served, name: str
) -> None:
    raw = ITEMS[name].rstrip(b"\n")
    client = await Client.connect(served.home)
    client.writer.write(raw)
    client.writer.write_eof()
    frames = []
    while line := await asyncio.wait_for(client.reader.readline(), 30):
        frames.append(json.loads(line))
    await client.close()
    check_refusals(name, raw, frames)
    await served.answered()
    assert served.problems() == []


BAD_FIELDS = {
    "id-a-number": ({"type": "message", "id": 7, "text": "hi"}, "needs an 'id'"),
    "id-empty": ({"type": "message", "id": "", "text": "hi"}, "needs an 'id'"),
    "id-too-long": ({"type": "message", "id": "x" * (MAX_ID + 1), "text": "hi"}, "needs an"),
    "id-a-control": ({"type": "message", "id": "a\x1b[2J", "text": "hi"}, "needs an 'id'"),
    "id-a-surrogate": ({"type": "message", "id": "\ud800", "text": "hi"}, "lone surrogate"),
    "text-a-number": ({"type": "message", "id": "f1", "text": 42}, "'text' string"),
    "text-a-list": ({"type": "message", "id": "f2", "text": ["hi"]}, "'text' string"),
    "text-missing": ({"type": "message", "id": "f3"}, "'text' string"),
    "text-blank": ({"type": "message", "id": "f4", "text": " \n\t"}, "'text' string"),
    "text-a-surrogate": ({"type": "message", "id": "f5", "text": "a\udfffb"}, "lone surrogate"),
    "conversation-an-object": (
        {"type": "message", "id": "f6", "text": "hi", "conversation": {}},
        "'conversation'",
    ),
    "conversation-a-newline": (
        {"type": "message", "id": "f7", "text": "hi", "conversation": "a\nb"},
        "'conversation'",
    ),
    "type-a-long-list": ({"type": ["message"] * 10_000, "id": "f8"}, "unknown frame type"),
    "type-null": ({"type": None, "id": "f9", "text": "hi"}, "unknown frame type"),
    "status-nested-too-deep": (
        {"type": "status", "extra": json.loads("[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH)},
        "nests deeper",
    ),
}


@pytest.mark.parametrize("name", BAD_FIELDS)
async def test_a_frame_with_a_bad_field_gets_an_error_that_names_it(
    served: Served, name: str
) -> None:
    frame, says = BAD_FIELDS[name]
    served.client.writer.write(json.dumps(frame).encode() + b"\n")
    [error] = await served.answered()
    assert error["type"] == "error" and says in error["message"]
    assert len(error["message"]) < 300
    valid_id = isinstance(frame.get("id"), str) and frame["id"].startswith("f")
    assert error.get("id") == (frame["id"] if valid_id else None)  # echoed when usable
    assert served.problems() == []


async def test_crlf_lines_and_blank_lines_between_good_messages_are_read_as_frames(
    served: Served,
) -> None:
    frame = {"type": "message", "id": "crlf", "text": "over CRLF"}
    served.client.writer.write(b"\r\n\n  \n" + json.dumps(frame).encode() + b"\r\n")
    frames = await until_reply(served.client, "crlf")
    assert [f["type"] for f in frames][-1] == "reply" and "error" not in str(frames)
    assert frames[-1]["text"] == "echo: over CRLF"


async def test_a_slow_frame_in_single_bytes_is_read_whole(served: Served) -> None:
    frame = {"type": "message", "id": "slow", "text": "京都, one byte at a time"}
    for byte in json.dumps(frame, ensure_ascii=False).encode() + b"\n":
        served.client.writer.write(bytes([byte]))
        await served.client.writer.drain()
    frames = await until_reply(served.client, "slow")
    assert frames[-1]["text"] == "echo: 京都, one byte at a time"


SHAPES = st.sampled_from(["[", '{"a":', '[{"b":', '{"a":"]}",  "b":['])


def nested(opener: str, depth: int) -> str:
    closer = "".join("]" if c == "[" else "}" for c in opener if c in "[{")[::-1]
    return opener * depth + "1" + closer * depth


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    opener=SHAPES,
    depth=st.one_of(
        st.integers(1, MAX_JSON_DEPTH + 2), st.integers(MAX_JSON_DEPTH, DEEP), st.just(DEEP)
    ),
    inside=st.booleans(),
)
def test_a_frame_nested_at_any_depth_is_a_message_or_a_refusal_naming_the_limit(
    opener: str, depth: int, inside: bool
) -> None:
    value = nested(opener, depth)
    line = f'{{"type": "message", "id": "h", "text": "hi", "extra": {value}}}' if inside else value
    levels = opener.count("[") + opener.count("{")
    try:
        parsed = parse_frame(line.encode())
    except BadFrame as refusal:
        too_deep = levels * depth + inside > MAX_JSON_DEPTH
        assert (f"nests deeper than {MAX_JSON_DEPTH}" in str(refusal)) == too_deep
    else:
        assert inside and levels * depth + 1 <= MAX_JSON_DEPTH
        assert parsed != "status"


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    junk=st.lists(
        st.binary(max_size=200)
        | st.builds(nested, SHAPES, st.integers(MAX_JSON_DEPTH - 1, 5000)).map(str.encode),
        min_size=1,
        max_size=4,
    )
)
async def test_any_bytes_then_a_status_request_get_the_status(
    served: Served, junk: list[bytes]
) -> None:
    served.client.writer.write(b"".join(junk) + b'\n{"type": "status"}\n')
    while (frame := await served.client.frame())["type"] != "status":
        assert frame["type"] == "error" and "id" not in frame
    assert frame["adapters"]["cli"]["state"] == "running"


async def test_nul_and_control_characters_inside_the_text_are_kept_as_sent(
    served: Served,
) -> None:
    frame = {"type": "message", "id": "nul", "text": "a\u0000b\u0007c"}
    served.client.writer.write(json.dumps(frame).encode() + b"\n")
    frames = await until_reply(served.client, "nul")
    assert frames[-1]["text"] == "echo: a\x00b\x07c"
    assert stored_texts(served.home)[-2] == ("user", "a\x00b\x07c")
