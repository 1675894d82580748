"""The agent's one backoff, as model calls and MCP reconnects use it."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from agent.retry import backoff_delay


@given(
    retry=st.integers(min_value=0, max_value=40),
    base=st.floats(min_value=0.001, max_value=5),
    cap=st.floats(min_value=0.01, max_value=300),
)
def test_delay_doubles_from_base_up_to_cap_jittered_in_the_upper_half(
    retry: int, base: float, cap: float
) -> None:
    ceiling = min(cap, base * 2**retry)
    assert ceiling / 2 <= backoff_delay(retry, base, cap) <= ceiling


def test_a_server_failing_for_days_waits_the_cap_without_overflowing() -> None:
    assert 150.0 <= backoff_delay(100_000, 1.0, 300.0) <= 300.0
