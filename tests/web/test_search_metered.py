"""The web page's search is timed for `/metrics` like the tool's and /search's."""

from __future__ import annotations

from gateway.metrics.exported import Metrics
from tests.helpers.web_rig import WebRig
from tests.web.browser import Browser


async def test_a_search_on_the_page_is_observed_by_the_meter(rig: WebRig, browser: Browser) -> None:
    metrics = Metrics()
    rig.ctx.meter = metrics
    await browser.sign_in("aiko")
    await browser.get("/search?q=bicycle")
    assert metrics.registry.get_sample_value("kioku_search_duration_seconds_count") == 1
