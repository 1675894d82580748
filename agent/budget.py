"""Whether a person may still spend on the model: the check made before every turn, every
review and every closing summary of theirs.

Where they stand is `memory.budgets.standing`'s (their own amounts or `budgets.*`, their
zone's day and month, the usage recorded against them). The check comes before a turn
starts, so a turn that crosses the budget is finished and the next one is refused.
"""

from __future__ import annotations

from datetime import UTC, datetime

from agent.tools.context import Services
from memory.budgets.limits import Budget
from memory.budgets.standing import Allowance, allowances, used_up


class Budgets:
    """The budget check of every person, on the agent's store and settings."""

    def __init__(self, services: Services) -> None:
        self.services = services

    async def reached(self, person: str | None, now: datetime | None = None) -> Allowance | None:
        """The allowance `person` has used up (the month's before the day's: it renews
        later), or None while they may go on: the owner, a group's unknown member and
        anyone without a budget always may."""
        if person is None:
            return None
        settings = self.services.settings
        configured = Budget.configured(settings.budgets)
        found = await allowances(
            self.services.store,
            person,
            configured,
            settings.schedule.default_timezone,
            now or datetime.now(UTC),
        )
        return used_up(found)

    async def may_spend(self, person: str | None) -> bool:
        """Whether background work of `person`'s (a review, a summary) may call the model."""
        return await self.reached(person) is None
