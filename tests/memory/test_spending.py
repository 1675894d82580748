"""The periods usage is read in (a person's local day and month) and amounts as shown."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from memory.spending import last_days, summary, this_month, today, usd
from memory.store.usage import UsageTotal

BERLIN = ZoneInfo("Europe/Berlin")


def test_a_day_is_the_persons_local_day_even_when_the_clocks_change() -> None:
    spring = today(datetime(2026, 3, 29, 12, tzinfo=UTC), BERLIN)
    assert spring.start == datetime(2026, 3, 29, tzinfo=BERLIN)
    assert spring.end.timestamp() - spring.start.timestamp() == 23 * 3600
    tokyo = today(datetime(2026, 12, 7, 20, tzinfo=UTC), ZoneInfo("Asia/Tokyo"))
    assert tokyo.start.date().isoformat() == "2026-12-08"


def test_december_ends_at_the_first_of_january() -> None:
    month = this_month(datetime(2026, 12, 31, 22, 59, tzinfo=UTC), BERLIN)  # 23:59 there
    assert (month.start.date().isoformat(), month.end.date().isoformat()) == (
        "2026-12-01",
        "2027-01-01",
    )


def test_the_last_days_end_with_today() -> None:
    period = last_days(datetime(2026, 3, 30, 12, tzinfo=UTC), BERLIN, 30)
    assert period.start == datetime(2026, 3, 1, tzinfo=BERLIN)
    assert period.end == datetime(2026, 3, 31, tzinfo=BERLIN)


def test_amounts_show_cents_above_a_dollar_and_tenths_of_a_cent_below() -> None:
    assert (usd(12.345), usd(0.01234), usd(0)) == ("$12.35", "$0.0123", "$0.0000")


def test_a_summary_counts_cached_input_and_the_calls_without_a_price() -> None:
    total = UsageTotal("x", 3, 100, 20, 1000, 50, 0.5, 1)
    assert summary(total) == (
        "3 model calls, 1,150 tokens in (1,000 from the cache), 20 out, $0.5000 "
        "(+1 on a model without a price)"
    )
    assert summary(UsageTotal("x", 0, 0, 0, 0, 0, 0.0, 0)) == "nothing"
