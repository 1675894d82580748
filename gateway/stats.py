"""What `kioku status` and the web page show of the gateway: its sessions, its lines and
each platform's last catch-up."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gateway.catch_up.missed import CatchUpReport
from gateway.queues import ConversationQueues
from gateway.sessions import Sessions


@dataclass(frozen=True)
class ConversationStats:
    key: str
    session_id: int | None
    queued: int
    busy: bool


@dataclass(frozen=True)
class GatewayStats:
    open_sessions: int
    in_flight: int
    queued: int
    conversations: list[ConversationStats] = field(default_factory=list)
    catch_up: dict[str, CatchUpReport] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "open_sessions": self.open_sessions,
            "in_flight": self.in_flight,
            "queued": self.queued,
            "catch_up": {name: report.to_json() for name, report in self.catch_up.items()},
            "conversations": [
                {"key": c.key, "session_id": c.session_id, "queued": c.queued, "busy": c.busy}
                for c in self.conversations
            ],
        }


def gateway_stats(
    queues: ConversationQueues, sessions: Sessions, catch_ups: Mapping[str, CatchUpReport]
) -> GatewayStats:
    """The gateway as it is now: every conversation with a line or an open session."""
    lines = {state.key: state for state in queues.states()}
    open_ = {entry.key: entry for entry in sessions.open_sessions()}
    conversations = [
        ConversationStats(
            key,
            open_[key].session.id if key in open_ else None,
            lines[key].queued if key in lines else 0,
            lines[key].busy if key in lines else False,
        )
        for key in sorted(set(lines) | set(open_))
    ]
    return GatewayStats(
        open_sessions=len(open_),
        in_flight=queues.in_flight,
        queued=sum(state.queued for state in lines.values()),
        conversations=conversations,
        catch_up=dict(catch_ups),
    )
