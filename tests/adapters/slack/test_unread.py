"""bolt's error handler in kioku: a request no listener takes is acknowledged quietly, any
other error a listener raises is logged at ERROR and answered 500, as bolt itself does."""

from __future__ import annotations

from slack_bolt.error import BoltUnhandledRequestError
from slack_bolt.request.async_request import AsyncBoltRequest
from structlog.testing import capture_logs

from adapters.slack.unread import on_error
from tests.fakes.slack import recorded


async def test_an_unhandled_request_is_acknowledged_and_logged_at_debug() -> None:
    body = recorded("member_joined_channel")
    request = AsyncBoltRequest(mode="socket_mode", body=body)
    unhandled = BoltUnhandledRequestError(request=request, current_response=None)
    with capture_logs() as logs:
        answer = await on_error(unhandled, body)
    assert answer is not None and answer.status == 200 and answer.body == ""
    [line] = logs
    assert line["log_level"] == "debug"
    assert line["kind"] == "event_callback/member_joined_channel"


async def test_a_listener_that_fails_is_logged_at_error_and_not_acknowledged() -> None:
    with capture_logs() as logs:
        answer = await on_error(RuntimeError("listener broke"), recorded("message_im_docs"))
    assert answer is None
    [line] = logs
    assert line["event"] == "slack_listener_failed" and line["log_level"] == "error"
    assert "listener broke" in line["error"]
