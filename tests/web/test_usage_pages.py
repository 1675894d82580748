"""The usage sections: a person's page shows their own calls and a per-day SVG chart of
them, never another's; the owner's admin page shows everyone's by person."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from memory.store.usage import UsageRecord
from tests.helpers.web_rig import WebRig
from tests.web.browser import Browser


def call(rig: WebRig, person: str | None, cost: float | None, days_ago: int = 0) -> UsageRecord:
    at = datetime.fromtimestamp(rig.now[0], UTC) - timedelta(days=days_ago)
    group = None if person else "group:discord:9"
    return UsageRecord(at, person, group, None, "reply", "claude-sonnet-4-5", 100, 20, 0, 0, cost)


def bars(page: str) -> dict[str, float]:
    """The chart's bars: day → height."""
    chart = page[page.index('<svg id="usage-chart"') : page.index("</svg>")]
    return {
        day: float(height)
        for height, day in re.findall(r'height="([\d.]+)" fill="[^"]+" data-day="([^"]+)"', chart)
    }


async def test_a_persons_page_shows_their_own_usage_and_a_day_chart(
    rig: WebRig, browser: Browser
) -> None:
    await rig.store.record_usage(
        call(rig, "aiko", 0.25), call(rig, "aiko", 0.5, days_ago=2), call(rig, "ben", 7.0)
    )
    await browser.sign_in("aiko")

    page = await browser.get("/")

    assert "Today: 1 model call, 100 tokens in, 20 out, $0.2500" in page
    assert "$7.00" not in page and "ben" not in page
    heights = bars(page)
    assert len(heights) == 30
    today = datetime.fromtimestamp(rig.now[0], UTC).astimezone().date()
    assert heights[today.isoformat()] > 0
    assert heights[(today - timedelta(days=2)).isoformat()] > heights[today.isoformat()]
    assert heights[(today - timedelta(days=1)).isoformat()] == 0


async def test_a_page_without_usage_says_nothing_was_used(rig: WebRig, browser: Browser) -> None:
    await browser.sign_in("ben")

    page = await browser.get("/")

    assert "Today: nothing" in page
    assert set(bars(page).values()) == {0.0}


async def test_the_admin_page_shows_everyones_usage_by_person(
    rig: WebRig, browser: Browser
) -> None:
    await rig.store.record_usage(
        call(rig, "aiko", 0.25), call(rig, "ben", 7.0), call(rig, None, None)
    )
    await browser.sign_in("owner")

    page = await browser.get("/admin")

    section = page[page.index('<section id="usage">') :]
    assert re.search(r"<td>aiko</td><td>1</td><td>\$0.2500", section)
    assert re.search(r"<td>ben</td><td>1</td><td>\$7.00", section)
    assert "<td>group:discord:9</td><td>1</td><td>$0.0000 <span" in section
    assert "Everyone: 3 model calls" in section and "(+1 on a model without a price)" in section
