"""What kioku is at the moment of a scrape: its lines, its adapters, its files.

Read just before each scrape rather than kept up to date as it changes, so a busy
daemon pays nothing for it between scrapes. File sizes are one `stat` each, run off the
event loop (a disk that hangs must not hold up the chats).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args

from gateway.metrics.exported import Metrics
from gateway.stats import GatewayStats
from gateway.supervisor import State


@dataclass(frozen=True)
class Sources:
    """Where the moment's figures come from: the gateway's stats, the supervisor's
    adapter states (`Supervisor.states`) and state.db's path."""

    gateway: Callable[[], GatewayStats]
    adapters: Callable[[], Mapping[str, Mapping[str, Any]]]
    database: Path


async def refresh(metrics: Metrics, sources: Sources) -> None:
    """Set the gauges that describe the moment."""
    stats = sources.gateway()
    metrics.queued.set(stats.queued)
    metrics.in_flight.set(stats.in_flight)
    metrics.open_sessions.set(stats.open_sessions)
    for platform, adapter in sources.adapters().items():
        metrics.reconnects.labels(platform)  # 0 until the first, rather than no series
        for state in get_args(State):
            metrics.adapter_state.labels(platform, state).set(adapter["state"] == state)
    database, wal = await asyncio.to_thread(_sizes, sources.database)
    metrics.database_bytes.set(database)
    metrics.wal_bytes.set(wal)


def _sizes(path: Path) -> tuple[int, int]:
    """state.db's and its WAL's sizes in bytes (0 for a file not there)."""
    return _size(path), _size(path.with_name(path.name + "-wal"))


def _size(path: Path) -> int:
    try:
        return os.stat(path).st_size
    except FileNotFoundError:
        return 0
