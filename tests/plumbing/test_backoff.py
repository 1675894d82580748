"""The one backoff: doubling, capped, still capped after days of failures, jittered as
each caller needs."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from plumbing.backoff import Backoff, backoff_delay, doubling


def test_delays_double_until_the_cap_and_reset_after_a_success() -> None:
    backoff = Backoff(base=1.0, cap=5.0, jitter=0)
    assert [backoff.next_delay() for _ in range(5)] == [1.0, 2.0, 4.0, 5.0, 5.0]
    backoff.reset()
    assert backoff.next_delay() == 1.0


def test_a_platform_down_for_days_waits_the_cap_without_overflowing() -> None:
    backoff = Backoff(jitter=0, attempts=5_000)
    assert backoff.next_delay() == backoff.cap


def test_a_factor_too_large_to_compute_waits_the_cap() -> None:
    assert doubling(100, 1.0, 60.0, factor=1e300) == 60.0


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
