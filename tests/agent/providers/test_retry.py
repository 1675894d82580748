"""The retry policy on its own: backoff bounds, retry-after parsing, what is retried."""

from __future__ import annotations

import time
from email.utils import formatdate

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent.providers import ProviderAuthError, ProviderUnavailable, RetryPolicy
from agent.providers.retry import call_with_retries, retry_after_seconds


@given(
    retry=st.integers(min_value=0, max_value=40),
    base=st.floats(min_value=0.001, max_value=5),
    cap=st.floats(min_value=0.01, max_value=60),
)
def test_backoff_is_jittered_exponential_and_capped(retry: int, base: float, cap: float) -> None:
    policy = RetryPolicy(base_delay=base, max_delay=cap)
    ceiling = min(cap, base * 2**retry)
    assert ceiling / 2 <= policy.backoff(retry, None) <= ceiling


@given(st.floats(min_value=0, max_value=3600))
def test_retry_after_wins_over_backoff(seconds: float) -> None:
    assert RetryPolicy().backoff(3, seconds) == seconds


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after": "2"}, 2.0),
        ({"retry-after": "0.25"}, 0.25),
        ({"retry-after-ms": "150", "retry-after": "9"}, 0.15),
        ({"retry-after": "soon"}, None),
        ({}, None),
    ],
)
def test_retry_after_header_forms(headers: dict[str, str], expected: float | None) -> None:
    assert retry_after_seconds(headers) == expected


def test_retry_after_as_http_date() -> None:
    wait = retry_after_seconds({"retry-after": formatdate(time.time() + 30, usegmt=True)})
    assert wait is not None and 25 <= wait <= 31


async def test_non_retryable_errors_are_raised_at_once() -> None:
    calls = 0

    async def attempt() -> str:
        nonlocal calls
        calls += 1
        raise ProviderAuthError("401")

    with pytest.raises(ProviderAuthError):
        await call_with_retries(attempt, RetryPolicy(base_delay=0.001))
    assert calls == 1


async def test_retryable_errors_are_retried_until_success() -> None:
    outcomes: list[str | Exception] = [
        ProviderUnavailable("503", retryable=True),
        ProviderUnavailable("429", retryable=True, retry_after=0.001),
        "done",
    ]

    async def attempt() -> str:
        outcome = outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    assert await call_with_retries(attempt, RetryPolicy(base_delay=0.001)) == "done"
