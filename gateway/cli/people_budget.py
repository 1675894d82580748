"""`kioku people budget`: what a person may spend on the model, per day and per month.

The amounts are rows of state.db, which the daemon reads at every turn: a change applies
to the person's next message, with no restart. Exit codes: 0 done, 1 refused (the reason
on stderr), 2 usage error.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from gateway.cli.common import fail, logged_settings, person_id, with_store

if TYPE_CHECKING:
    from config.settings import Settings
    from memory.budgets.standing import Allowance
    from memory.store.database import Store


CONFIGURED = {"day": "budgets.daily_usd", "month": "budgets.monthly_usd"}


def _amount(value: str | None, option: str) -> float | None:
    """The dollars given to `option`, else a usage error saying what to write."""
    from inputs.amounts import parse_usd

    try:
        return None if value is None else parse_usd(value)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint=f"'{option}'") from None


def people_budget(
    person: str = typer.Argument(..., callback=person_id, help="The person."),
    daily: str | None = typer.Option(
        None,
        "--daily",
        metavar="USD",
        help="US dollars per day (their zone's), such as 0.50; 0: nothing.",
    ),
    monthly: str | None = typer.Option(
        None,
        "--monthly",
        metavar="USD",
        help="US dollars per calendar month, such as 10; 0: nothing.",
    ),
    clear: bool = typer.Option(
        False, "--clear", help="Drop their own amounts: budgets.daily_usd / monthly_usd apply."
    ),
) -> None:
    """Show or set what a person may spend on the model (the owner has no budget); without
    options, show it with what they spent so far. Applies at once, also while kioku runs."""
    import time

    from memory.budgets.limits import OwnerHasNoBudget, UnknownPerson, clear_budget, set_budget

    daily_usd, monthly_usd = _amount(daily, "--daily"), _amount(monthly, "--monthly")
    setting = daily_usd is not None or monthly_usd is not None
    if clear and setting:
        fail("give --daily/--monthly or --clear, not both", code=2)
    settings = logged_settings()
    try:
        if clear:
            with_store(settings, lambda store: clear_budget(store, person))
        elif setting:
            with_store(
                settings,
                lambda store: set_budget(
                    store, person, time.time(), daily_usd=daily_usd, monthly_usd=monthly_usd
                ),
            )
        shown = with_store(settings, lambda store: _standing(store, settings, person))
    except (UnknownPerson, OwnerHasNoBudget) as exc:
        fail(f"refused: {exc}")
    typer.echo(_describe(person, settings, shown))


async def _standing(store: Store, settings: Settings, person: str) -> list[Allowance]:
    """`person`'s allowances now; `UnknownPerson` for someone state.db does not hold."""
    from datetime import UTC, datetime

    from memory.access.identities import get_person
    from memory.budgets.limits import Budget, unknown_person
    from memory.budgets.standing import allowances

    if await get_person(store, person) is None:
        raise unknown_person(person)
    configured = Budget.configured(settings.budgets)
    default_zone = settings.schedule.default_timezone
    return await allowances(store, person, configured, default_zone, datetime.now(UTC))


def _describe(person: str, settings: Settings, shown: list[Allowance]) -> str:
    from memory.access.people import OWNER
    from memory.schedule.timing import zone_name
    from memory.spending import usd

    if person == OWNER:
        return "The owner has no budget: budgets hold back everyone else, never the owner."
    if not shown:
        return (
            f"{person} has no budget: no amount of their own, and neither "
            "budgets.daily_usd nor budgets.monthly_usd is set."
        )
    lines = [f"{person}'s budget ({zone_name(shown[0].period.zone)} time):"]
    for allowance in shown:
        period = allowance.period
        name = "this month" if period.kind == "month" else "today"
        source = "their own" if allowance.own else CONFIGURED[period.kind]
        state = "used up" if allowance.used_up else "left"
        lines.append(
            f"  {name}: {usd(allowance.spent_usd)} spent of {usd(allowance.limit_usd)} "
            f"({source}), {state}; renews {period.renews:%Y-%m-%d %H:%M}"
        )
    return "\n".join(lines)
