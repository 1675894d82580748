"""The admin page's budgets: everyone's amounts and spending, and a form that sets a
person's own amounts as `kioku people budget` does."""

from __future__ import annotations

from datetime import UTC, datetime

from memory.budgets.limits import Budget, own_budget, set_budget
from memory.store.usage import UsageRecord
from tests.helpers.web_rig import WebRig
from tests.web.browser import Browser


async def test_the_admin_page_shows_each_persons_spending_against_their_budget(
    rig: WebRig, browser: Browser
) -> None:
    await set_budget(rig.store, "aiko", rig.now[0], daily_usd=0.5)
    await rig.store.record_usage(
        UsageRecord(datetime.now(UTC), "aiko", None, None, "reply", "m", cost_usd=0.75)
    )
    await browser.sign_in("owner")
    page = await browser.get("/admin")
    aiko = page.split('id="budget-aiko"', 1)[1].split("</tr>", 1)[0]
    assert "today: $0.7500 of $0.5000 <strong>used up</strong>" in aiko
    assert 'name="daily" inputmode="decimal" size="6" value="0.5"' in aiko
    assert "no budget" in page.split('id="budget-ben"', 1)[1].split("</tr>", 1)[0]
    assert 'id="budget-owner"' not in page


async def test_the_form_sets_a_persons_own_amounts_and_blank_means_the_configured_one(
    rig: WebRig, browser: Browser
) -> None:
    await set_budget(rig.store, "aiko", rig.now[0], daily_usd=0.5)
    await browser.sign_in("owner")
    page = await browser.post("/admin/budgets/aiko", daily="", monthly="10")
    assert "Budget of aiko saved; it applies from now on." in page
    assert await own_budget(rig.store, "aiko") == Budget(None, 10.0)


async def test_an_amount_the_form_cannot_take_changes_nothing_and_says_why(
    rig: WebRig, browser: Browser
) -> None:
    await browser.sign_in("owner")
    page = await browser.post("/admin/budgets/aiko", status=400, daily="-2", monthly="")
    assert "The budget of aiko is unchanged: daily: &#39;-2&#39; is below zero" in page
    assert await own_budget(rig.store, "aiko") == Budget()


async def test_the_owners_budget_and_an_unknown_persons_are_refused(
    rig: WebRig, browser: Browser
) -> None:
    await browser.sign_in("owner")
    owner = await browser.post("/admin/budgets/owner", status=400, daily="1", monthly="")
    assert "the owner has no budget" in owner
    nobody = await browser.post("/admin/budgets/carol", status=400, daily="1", monthly="")
    assert "no person &#39;carol&#39;" in nobody


async def test_a_person_cannot_set_budgets(rig: WebRig, browser: Browser) -> None:
    await browser.sign_in("aiko")
    await browser.post("/admin/budgets/aiko", status=403, daily="100", monthly="")
    assert await own_budget(rig.store, "aiko") == Budget()
