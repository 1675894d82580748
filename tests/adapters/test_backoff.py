"""The adapters' reconnect backoff: doubling, capped, and still capped after days of failures."""

from __future__ import annotations

from adapters.backoff import Backoff


def test_delays_double_until_the_cap_and_reset_after_a_success() -> None:
    backoff = Backoff(base=1.0, cap=5.0, jitter=0)
    assert [backoff.next_delay() for _ in range(5)] == [1.0, 2.0, 4.0, 5.0, 5.0]
    backoff.reset()
    assert backoff.next_delay() == 1.0


def test_a_platform_down_for_days_waits_the_cap_without_overflowing() -> None:
    backoff = Backoff(jitter=0, attempts=5_000)
    assert backoff.next_delay() == backoff.cap
