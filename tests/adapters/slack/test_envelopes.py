"""`read_envelope` against the recorded corpus: every payload Slack really sent is read,
a null slack-bolt copes with is read too, and what it refuses is what bolt fails on while
building its request (`AsyncBoltRequest` runs `build_context` on the body)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from slack_bolt.request.async_request import AsyncBoltRequest

from adapters.slack.envelopes import read_envelope
from tests.fakes.slack import RECORDED, envelope, event_callback, recorded

SOCKET_ONLY = ("socket_hello", "socket_disconnect")  # Socket Mode's own: no body
# Every recorded payload but the Web API's answers and the form a slash command is posted as.
PAYLOADS = sorted(
    p.stem
    for p in RECORDED.glob("*.json")
    if not p.stem.startswith("web_") and "content_type" not in recorded(p.stem)
)
BODIES = [name for name in PAYLOADS if name not in SOCKET_ONLY]
# Nulls slack-bolt fails on: ignoring_self_events reads `req.body.get("event", {})
# .get("bot_id")`; internals.py build_context `len(body["response_urls"])`.
NULL_REFUSED = ("event", "response_urls")


def body_of(name: str) -> dict[str, Any]:
    """The body bolt gets for a recorded payload: a Socket Mode message's payload, or an
    event alone wrapped in the recorded Events API body."""
    payload: dict[str, Any] = recorded(name)
    if "envelope_id" in payload:
        return payload["payload"]  # type: ignore[no-any-return]
    if payload.get("type") in ("message", "app_mention"):
        return event_callback(payload)
    return payload


def read(body: Any) -> dict[str, Any] | None:
    return read_envelope(json.dumps(envelope(body)), socket_mode=True)


def nulled(body: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """`body` with one field made null, for every field of it and of its event."""
    variants = [(key, body | {key: None}) for key in body]
    event = body.get("event")
    if isinstance(event, dict):
        variants += [(f"event.{key}", body | {"event": event | {key: None}}) for key in event]
    return variants


@pytest.mark.parametrize("name", PAYLOADS)
def test_a_recorded_socket_mode_message_is_read(name: str) -> None:
    message = recorded(name) if name.startswith("socket_") else envelope(body_of(name))
    assert read_envelope(json.dumps(message), socket_mode=True) is not None


@pytest.mark.parametrize("name", BODIES)
def test_a_recorded_body_is_read_over_http(name: str) -> None:
    assert read_envelope(json.dumps(body_of(name))) is not None


# A slash command is also checked for what kioku needs of it (slack.commands.check_command).
@pytest.mark.parametrize("name", [name for name in BODIES if "command" not in body_of(name)])
def test_a_null_anywhere_bolt_copes_with_is_read(name: str) -> None:
    for field, body in nulled(body_of(name)):
        if field in NULL_REFUSED:
            assert read(body) is None, field
        else:
            AsyncBoltRequest(mode="socket_mode", body=body)  # bolt builds it: no error
            assert read(body) is not None, field


@pytest.mark.parametrize(
    "change",
    [
        {"response_urls": None},
        {"authorizations": "bot"},
        {"authorizations": [1]},
        {"team": 7},
        {"user": True},
        {"enterprise": ["id"]},
    ],
    ids=str,
)
def test_a_field_of_a_kind_bolt_fails_on_is_refused(change: dict[str, Any]) -> None:
    body = recorded("app_mention_enterprise_null") | change
    with pytest.raises((TypeError, AttributeError)):
        AsyncBoltRequest(mode="socket_mode", body=body)
    assert read(body) is None


def test_an_event_that_is_not_an_object_is_refused() -> None:
    assert read(recorded("app_mention_enterprise_null") | {"event": "app_mention"}) is None


def test_a_socket_mode_retry_reason_that_is_no_string_is_refused() -> None:
    message = recorded("socket_message_channels_retry") | {"retry_reason": 1}
    assert read_envelope(json.dumps(message), socket_mode=True) is None
