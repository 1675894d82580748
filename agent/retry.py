"""The agent's one backoff, shared by model calls and MCP reconnects.

Doubling from a base, capped, jittered. The adapters have their own (`adapters/backoff.py`)
because agent/ imports no adapter; see `backoff_delay` for why the two differ.
"""

from __future__ import annotations

import random

MAX_DOUBLINGS = 64
"""Past this the cap has long been reached; it keeps `2**retry` from overflowing a float
for a connection that has been failing for days."""


def backoff_delay(retry: int, base: float, cap: float) -> float:
    """The wait before retry number `retry` (0-based): `base` doubled per retry, capped at
    `cap`, drawn from the upper half so that callers failing together do not retry together.

    Unlike the adapters' stateful `Backoff`, this is a pure function of the retry number:
    a model call counts its retries within one deadline, an MCP server its failures since
    it last connected.
    """
    ceiling = min(cap, base * 2 ** min(retry, MAX_DOUBLINGS))
    return random.uniform(ceiling / 2, ceiling)
