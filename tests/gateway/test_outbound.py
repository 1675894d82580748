"""The one way out (`gateway.outbound.Dispatcher`) with a recording adapter: the setting
`media.long_replies_as_file` as now configured rides on every message, a platform that
is down is an error for a reminder and a logged warning for a reply."""

from __future__ import annotations

import pytest
from structlog.testing import capture_logs

from adapters.base import Address, Delta, Inbound
from gateway.outbound import Dispatcher, Undeliverable
from tests.helpers.recording_adapter import RecordingAdapter

TO = Address("telegram", "100", "")


async def nothing(_: Inbound) -> None:
    return None


async def test_every_message_carries_long_replies_as_file_as_now_configured() -> None:
    telegram = RecordingAdapter(nothing)
    setting = [False]
    outbound = Dispatcher({"telegram": telegram}.get, lambda: setting[0])
    await outbound.send(TO, "before the reload")
    setting[0] = True
    await outbound.reply(TO, "after it", more=True)
    first, second = telegram.replies
    assert (first.text, first.long_as_file, first.more) == ("before the reload", False, False)
    assert (second.text, second.long_as_file, second.more) == ("after it", True, True)


async def test_a_platform_that_is_down_is_an_error_to_send_and_a_warning_to_reply() -> None:
    outbound = Dispatcher(lambda platform: None, lambda: False)
    with pytest.raises(Undeliverable, match="telegram is not connected"):
        await outbound.send(TO, "a reminder")
    with capture_logs() as logs:
        await outbound.reply(TO, "an answer", 7)
    assert [(e["event"], e["session"]) for e in logs] == [("outlet_down", 7)]


async def test_a_refused_reply_is_logged_and_not_raised() -> None:
    telegram = RecordingAdapter(nothing)
    telegram.refuse_sends = True
    outbound = Dispatcher({"telegram": telegram}.get, lambda: False)
    with capture_logs() as logs:
        await outbound.reply(TO, "an answer")
    (failed,) = logs
    assert failed["event"] == "send_failed" and "refused" in failed["error"]


class BreaksAfterOne(RecordingAdapter):
    """A streaming client whose connection closes after the first piece."""

    async def stream(self, delta: Delta) -> None:
        if self.deltas:
            raise ConnectionError("the client went away")
        await super().stream(delta)


async def test_a_streaming_answer_stops_streaming_after_a_failed_piece() -> None:
    cli = BreaksAfterOne(nothing, "cli", streams=True)
    outbound = Dispatcher({"cli": cli}.get, lambda: False)
    on_text = outbound.streamer(Address("cli", "1", ""))
    assert on_text is not None
    with capture_logs() as logs:
        for piece in ("one ", "two ", "three"):
            await on_text(piece)
    assert [delta.text for delta in cli.deltas] == ["one "]
    assert [entry["event"] for entry in logs] == ["stream_failed"]
