"""The status check: what the commands print must be there, as JSON types; the rest passes."""

from __future__ import annotations

from typing import Any

import pytest

from gateway.client.status_shape import MAX_COUNT, status_problem

FULL = {
    "type": "status",
    "pid": 12,
    "started_at": "2025-06-01T10:00:00+00:00",
    "adapters": {"cli": {"state": "running", "since": None, "last_error": None, "extra": 1}},
    "open_sessions": 0,
    "in_flight": MAX_COUNT,
    "queued": 0,
    "conversations": [{"key": "cli:default", "session_id": None, "queued": 2, "busy": False}],
    "catch_up": {
        "discord": {
            "at": "2025-06-01T10:00:05+00:00",
            "messages": 3,
            "answered": 3,
            "unanswered": 0,
            "already_had": 0,
        }
    },
    "database_bytes": 4096,
    "media": {"files": 2, "bytes": 70_000},
    "mcp": {"notes": {"state": "ok", "transport": "stdio", "allow": ["owner"], "tools": []}},
    "something_new": {"any": ["shape"]},
}


def test_a_full_status_and_a_bare_one_can_be_shown() -> None:
    assert status_problem(FULL) is None
    assert status_problem({"type": "status"}) is None


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"pid": -1}, "pid: should be a count"),
        ({"queued": True}, "queued: should be a count"),
        ({"database_bytes": 1.5}, "database_bytes: should be a count"),
        ({"media": {"files": -1}}, "media.files: should be a count"),
        ({"media": {"bytes": "1 MB"}}, "media.bytes: should be a count"),
        ({"in_flight": MAX_COUNT + 1}, "in_flight: should be a count"),
        ({"started_at": 5}, "started_at: should be text"),
        ({"adapters": {"cli": {"since": "x"}}}, "adapters.cli.state: missing"),
        ({"conversations": [{"key": "k", "busy": "yes"}]}, "conversations.0.busy: should be"),
        ({"conversations": [{"key": "k", "queued": None}]}, "conversations.0.queued: should"),
        ({"mcp": {"n": {"state": "ok", "transport": "t", "tools": [{}]}}}, "mcp.n.tools.0.tool"),
        ({"mcp": {"n": {"state": "ok", "transport": "t", "allow": "owner"}}}, "mcp.n.allow:"),
        ({"catch_up": {"slack": {"messages": 1}}}, "catch_up.slack.at: missing"),
        ({"catch_up": {"slack": {"at": "t", "answered": -1}}}, "catch_up.slack.answered: should"),
    ],
)
def test_a_field_of_the_wrong_type_is_named(change: dict[str, Any], says: str) -> None:
    problem = status_problem({**FULL, **change})
    assert problem is not None and problem.startswith(says)


def test_a_long_value_is_shortened_in_the_problem() -> None:
    problem = status_problem({"type": "status", "database_bytes": "x" * 1000})
    assert problem is not None and len(problem) < 120
