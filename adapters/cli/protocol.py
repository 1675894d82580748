"""The CLI socket's protocol, defined once for the daemon's end and the client's.

The daemon (`adapters/cli/adapter.py`) listens on `$KIOKU_HOME/gateway.sock`; `kioku chat`,
`kioku status` and `kioku mcp list` connect to it (`gateway/client/socket_client.py`).
One JSON object per line each way, in UTF-8, at most `MAX_FRAME` bytes and nested at most
`MAX_JSON_DEPTH` levels (inputs.limits); a line that breaks a rule is a `BadFrame`:

    client -> daemon  {"type": "attach", "id": str, "name": str, "mime": str, "size": int,
                       "data": base64 str, "last": bool}   a piece of a file for message id
                      {"type": "message", "id": str, "text": str, "conversation": str,
                       "attachments": int}  (optional, default 0; with files the text may be "")
                      {"type": "status"}
                      {"type": "schedule_changed"}     jobs changed in state.db: wake the scheduler
                      {"type": "reload"}               apply the reloadable settings (as SIGHUP)
                      {"type": "claim_owner", "platform": str, "code": str, "timeout": number}
                                         the first DM there carrying the code names the owner
    daemon -> client  {"type": "delta", "id", "text"}   a piece of the reply being written
                      {"type": "note", "id", "text"}    a message before the reply (a file not read)
                      {"type": "reply", "id", "text"}   the complete reply (the last frame for id)
                      {"type": "status", ...}          the daemon's state (owner and root only)
                      {"type": "ok"}                   schedule_changed or reload done (owner, root)
                      {"type": "claim_waiting"}        DMs count from now; owner_claimed follows
                      {"type": "owner_claimed", "identity"}  who sent the code, null: nobody in time
                      {"type": "error", "id"?, "message"}

Files travel as bytes, never as a path: the daemon may run as another account, and a path
would have it open whatever that account can read. A file is sent as `attach` frames
before its message, each at most `CHUNK_BYTES` of it (so every frame stays under
`MAX_FRAME`), all naming the same id, name, mime and total size; the one with `last`
true ends it and the next `attach` frame starts the next file. The message frame then
says how many files it carries, and is refused unless exactly that many arrived whole.
At most `MAX_ATTACHMENTS` files and `MAX_ATTACHED_BYTES` in all per message: past a cap
a file is refused at its first frame, before its bytes are sent on.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

from adapters.cli.names import DEFAULT_CONVERSATION
from inputs.limits import InputRefused, loads
from inputs.text import ESCAPED_SURROGATE, LONE_SURROGATE

MAX_FRAME = 256 * 1024
MAX_ID = 200
MAX_CONVERSATION = 100
MAX_ATTACHMENTS = 10
"""Files per message the socket takes; the gateway then applies `media.max_files`."""
MAX_ATTACHED_BYTES = 64 * 1024 * 1024
"""All the files of one message together, the socket's own cap (above `media.max_bytes`)."""
CHUNK_BYTES = 96 * 1024
"""A file's bytes per `attach` frame: 128 KiB once in base64, well under `MAX_FRAME`."""
MAX_FILE_NAME = 255
MAX_MIME = 127
SHOWN = 60
"""How much of a field a refusal quotes back."""

_MIME = re.compile(r"[A-Za-z0-9][\w.+-]{0,62}/[A-Za-z0-9][\w.+-]{0,62}", re.ASCII)

Frame = dict[str, Any]


# -- building frames -------------------------------------------------------------------------


def encode(frame: Frame) -> bytes:
    """One frame as the line that goes over the socket. UTF-8 cannot carry a lone
    surrogate (a model may send one escaped): it goes out as U+FFFD, never as a crash."""
    line = json.dumps(frame, ensure_ascii=False)
    try:
        return line.encode() + b"\n"
    except UnicodeEncodeError:
        return LONE_SURROGATE.sub("\ufffd", line).encode() + b"\n"


def message_frame(
    frame_id: str, text: str, conversation: str = DEFAULT_CONVERSATION, attachments: int = 0
) -> Frame:
    frame: Frame = {"type": "message", "id": frame_id, "text": text, "conversation": conversation}
    if attachments:
        frame["attachments"] = attachments
    return frame


def attach_frames(
    frame_id: str, name: str, mime: str, size: int, chunks: Iterator[bytes]
) -> Iterator[Frame]:
    """The `attach` frames of one file of `size` bytes, read piece by piece from `chunks`
    (each at most `CHUNK_BYTES`), so a large file is never held whole. An empty file is
    one frame with no data."""
    piece = next(chunks, b"")
    while True:
        following = next(chunks, None)
        yield {
            "type": "attach",
            "id": frame_id,
            "name": name,
            "mime": mime,
            "size": size,
            "data": base64.b64encode(piece).decode("ascii"),
            "last": following is None,
        }
        if following is None:
            return
        piece = following


def status_request() -> Frame:
    return {"type": "status"}


def schedule_changed_request() -> Frame:
    return {"type": "schedule_changed"}


def reload_request() -> Frame:
    return {"type": "reload"}


def claim_owner_request(platform: str, code: str, timeout: float) -> Frame:
    return {"type": "claim_owner", "platform": platform, "code": code, "timeout": timeout}


def claim_waiting_frame() -> Frame:
    """The claim is registered: a DM carrying the code counts from now on."""
    return {"type": "claim_waiting"}


def owner_claimed_frame(identity: str | None) -> Frame:
    """Who sent the code; None: nobody within the time (the code is spent either way)."""
    return {"type": "owner_claimed", "identity": identity}


def ok_frame() -> Frame:
    return {"type": "ok"}


def text_frame(kind: Literal["delta", "note", "reply"], frame_id: str, text: str) -> Frame:
    """A piece of a reply (`delta`), a message before it (`note`), or the whole of it
    (`reply`)."""
    return {"type": kind, "id": frame_id, "text": text}


def status_frame(status: dict[str, Any]) -> Frame:
    return {**status, "type": "status"}


def error_frame(message: str, frame_id: str | None = None) -> Frame:
    """An error, about the frame `frame_id` when it is known."""
    frame: Frame = {"type": "error", "message": message}
    if frame_id is not None:
        frame["id"] = frame_id
    return frame


def too_long(limit: int) -> str:
    """What the daemon says about a line over its limit (and the client before sending one)."""
    return f"frame longer than {limit} bytes: dropped"


# -- reading frames --------------------------------------------------------------------------


class BadFrame(ValueError):
    """A frame the other end must fix; `frame_id` is echoed back when the frame carried one."""

    def __init__(self, message: str, frame_id: str | None = None) -> None:
        super().__init__(message)
        self.frame_id = frame_id


class BadAttach(BadFrame):
    """An `attach` frame the other end must fix: the rest of its message is refused too."""

    frame_id: str


def decode(line: bytes) -> Frame:
    """One line as a frame: a JSON object in UTF-8 within the depth limit, else `BadFrame`.

    Strict UTF-8 first: `json.loads` of bytes would also take UTF-16 and encoded surrogates.
    """
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadFrame(f"a frame must be UTF-8 text; byte {exc.start} is not") from None
    try:
        frame = loads(text, what="a frame")
    except InputRefused as exc:
        raise BadFrame(str(exc)) from None
    except json.JSONDecodeError as exc:
        raise BadFrame(f"not a JSON object on one line: {exc}") from None
    if not isinstance(frame, dict):
        raise BadFrame("a frame must be a JSON object with a 'type'")
    if ESCAPED_SURROGATE.search(text) and _holds_surrogate(frame):
        frame_id = frame.get("id")
        raise BadFrame(
            "a frame holds a lone surrogate (\\ud800-\\udfff): not Unicode text",
            frame_id if _is_name(frame_id, MAX_ID) else None,
        )
    return frame


def _holds_surrogate(value: object) -> bool:
    """Whether a decoded value holds a surrogate: from strict UTF-8, only a lone escaped
    one can remain (the decoder joins escaped pairs)."""
    if isinstance(value, str):
        return LONE_SURROGATE.search(value) is not None
    if isinstance(value, dict):
        return any(_holds_surrogate(k) or _holds_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_holds_surrogate(item) for item in value)
    return False


@dataclass
class Message:
    id: str
    text: str
    conversation: str
    attachments: int = 0


@dataclass
class Attach:
    """One `attach` frame: a piece of the file `name` sent with message `id`."""

    id: str
    name: str
    mime: str
    size: int
    data: bytes
    last: bool


@dataclass
class ClaimOwner:
    """Wait up to `timeout` seconds for a DM carrying `code` on `platform`."""

    platform: str
    code: str
    timeout: float


CONTROLS = ("status", "schedule_changed", "reload")
"""The frames without content a client may send, by type name."""
MAX_CLAIM_WAIT = 3600.0


def parse_frame(line: bytes) -> Message | Attach | ClaimOwner | str:
    """A client's frame: a `Message`, an `Attach`, a `ClaimOwner`, or the type name of a
    frame without content (`CONTROLS`)."""
    frame = decode(line)
    kind = frame.get("type")
    raw_id = frame.get("id")
    frame_id = raw_id if _is_name(raw_id, MAX_ID) else None
    if kind in CONTROLS:
        return str(kind)
    if kind == "claim_owner":
        return _parse_claim(frame)
    if kind not in ("message", "attach"):
        shown = f"{kind!r:.{SHOWN}}"
        raise BadFrame(
            f"unknown frame type {shown}: send 'message', 'attach', 'status', "
            "'schedule_changed', 'reload' or 'claim_owner'",
            frame_id,
        )
    if frame_id is None:
        raise BadFrame(
            f"{'a message' if kind == 'message' else 'an attach frame'} needs an 'id': "
            f"a printable string of 1 to {MAX_ID} characters"
        )
    if kind == "attach":
        return _parse_attach(frame, frame_id)
    attachments = frame.get("attachments", 0)
    if type(attachments) is not int or not 0 <= attachments <= MAX_ATTACHMENTS:
        raise BadFrame(
            f"'attachments' must be a whole number from 0 to {MAX_ATTACHMENTS}", frame_id
        )
    text = frame.get("text")
    if not isinstance(text, str) or not (text.strip() or attachments):
        raise BadFrame("a message needs a non-empty 'text' string", frame_id)
    conversation = frame.get("conversation", DEFAULT_CONVERSATION)
    if not _is_name(conversation, MAX_CONVERSATION):
        raise BadFrame(
            f"'conversation' must be a printable name of 1 to {MAX_CONVERSATION} characters",
            frame_id,
        )
    return Message(frame_id, text, conversation, attachments)


def _parse_claim(frame: Frame) -> ClaimOwner:
    platform, code, timeout = frame.get("platform"), frame.get("code"), frame.get("timeout")
    if not _is_name(platform, 20) or not _is_name(code, 40):
        raise BadFrame("a claim_owner frame needs a 'platform' and a 'code'")
    if type(timeout) not in (int, float) or not 0 < timeout <= MAX_CLAIM_WAIT:
        raise BadFrame(f"a claim_owner frame needs a 'timeout' of 0 to {MAX_CLAIM_WAIT:g} s")
    return ClaimOwner(platform, code.upper(), float(timeout))


def _parse_attach(frame: Frame, frame_id: str) -> Attach:
    name = frame.get("name")
    if not _is_name(name, MAX_FILE_NAME) or "/" in name or name in (".", ".."):
        raise BadAttach(
            f"an attach frame needs a 'name': a file name (no '/') of 1 to {MAX_FILE_NAME} "
            "printable characters",
            frame_id,
        )
    mime = frame.get("mime")
    if not isinstance(mime, str) or not _MIME.fullmatch(mime):
        raise BadAttach(
            f"an attach frame needs a 'mime' type such as 'image/jpeg' (at most {MAX_MIME} "
            "characters)",
            frame_id,
        )
    size = frame.get("size")
    if type(size) is not int or size < 0:
        raise BadAttach("an attach frame needs the file's 'size' in bytes, 0 or more", frame_id)
    if size > MAX_ATTACHED_BYTES:
        raise BadAttach(
            f"{name} is {size} bytes: the socket takes at most {MAX_ATTACHED_BYTES} bytes of "
            "files per message",
            frame_id,
        )
    last = frame.get("last")
    if not isinstance(last, bool):
        raise BadAttach("an attach frame needs 'last': true or false", frame_id)
    data = frame.get("data")
    if not isinstance(data, str):
        raise BadAttach("an attach frame needs 'data': the piece of the file in base64", frame_id)
    try:
        piece = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise BadAttach(f"the 'data' of {name} is not valid base64", frame_id) from None
    if len(piece) > CHUNK_BYTES:
        raise BadAttach(
            f"a piece of {name} is {len(piece)} bytes: send at most {CHUNK_BYTES} per frame",
            frame_id,
        )
    return Attach(frame_id, name, mime, size, piece, last)


def _is_name(value: object, limit: int) -> bool:
    """An id or a conversation: printable text (no control characters) of 1 to `limit`."""
    return isinstance(value, str) and 0 < len(value) <= limit and value.isprintable()
