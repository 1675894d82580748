"""`kioku usage`: what the model calls cost, by person, kind, model or day, for the owner.

Days and the default start (the first of this month) are in the time zone of the
person asked about (`--person`), else kioku's default zone. Works beside a running
daemon (it only reads). Exit codes: 0 shown, 1 refused (an unknown person), 2 usage error.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import TYPE_CHECKING, cast

import typer

from gateway.cli.common import fail, person_id, settings_or_exit, with_store

if TYPE_CHECKING:
    from datetime import tzinfo

    from memory.store.database import Store
    from memory.store.usage import Grouping, UsageTotal

GROUPINGS = ("person", "kind", "model", "day")


def _by(value: str | None) -> str | None:
    if value is not None and value not in GROUPINGS:
        raise typer.BadParameter(f"{value!r} is not a grouping; use one of {', '.join(GROUPINGS)}")
    return value


def _since(value: str | None) -> str | None:
    if value is not None:
        try:
            datetime.fromisoformat(value.strip())
        except ValueError:
            raise typer.BadParameter(
                f"{value!r} is not a date; write it as 2026-01-01 (or 2026-01-01T08:30)"
            ) from None
    return value


def usage_command(
    person: str | None = typer.Option(
        None, "--person", callback=person_id, help="Only this person's calls."
    ),
    since: str | None = typer.Option(
        None,
        "--since",
        callback=_since,
        help="From this date (2026-01-01: midnight in the zone) or time; default: the 1st "
        "of this month.",
    ),
    by: str | None = typer.Option(
        None,
        "--by",
        callback=_by,
        help="Add up by person, kind, model or day (default: kind with --person, else person).",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Show model calls, tokens and cost, added up by person, kind, model or day."""
    from memory.access.identities import get_person
    from memory.schedule.timezones import effective_zone, timezone_of
    from memory.schedule.timing import zone_name
    from memory.spending import this_month, total_of

    settings = settings_or_exit()
    grouping = cast("Grouping", by or ("kind" if person else "person"))
    now = datetime.now().astimezone()

    async def work(store: Store) -> tuple[tzinfo, datetime, list[UsageTotal]]:
        if person is not None and await get_person(store, person) is None:
            raise LookupError(f"no person {person!r}; `kioku people list` shows them")
        own = await timezone_of(store, person) if person is not None else None
        zone = effective_zone(own, settings.schedule.default_timezone)
        start = _start(since, zone) if since else this_month(now, zone).start
        rows = await store.usage_totals(grouping, start, now, person=person, zone=zone)
        return zone, start, rows

    try:
        zone, start, rows = with_store(settings, work)
    except LookupError as exc:
        fail(str(exc))
    total = total_of(rows)
    if as_json:
        shown = {
            "person": person,
            "by": grouping,
            "since": start.isoformat(),
            "until": now.isoformat(),
            "zone": zone_name(zone),
            "rows": [row.to_json() for row in rows],
            "total": total.to_json(),
        }
        typer.echo(json.dumps(shown, ensure_ascii=False, indent=2))
        return
    _print(
        rows,
        total,
        grouping,
        f"{start:%Y-%m-%d %H:%M} to {now.astimezone(zone):%Y-%m-%d %H:%M} ({zone_name(zone)})",
    )


def _start(since: str, zone: tzinfo) -> datetime:
    moment = datetime.fromisoformat(since.strip())
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=zone)


def _print(rows: list[UsageTotal], total: UsageTotal, grouping: str, period: str) -> None:
    from memory.spending import usd

    typer.echo(f"Model usage from {period}, by {grouping}:")
    if not rows:
        typer.echo("No model calls.")
        return
    head = (grouping, "calls", "input", "output", "cache read", "cache write", "cost (USD)")
    lines = [head] + [
        (
            row.key or "(nobody)",
            f"{row.calls:,}",
            f"{row.input_tokens:,}",
            f"{row.output_tokens:,}",
            f"{row.cache_read_tokens:,}",
            f"{row.cache_write_tokens:,}",
            usd(row.cost_usd) + (f" +{row.unpriced} unpriced" if row.unpriced else ""),
        )
        for row in [*rows, total]
    ]
    widths = [max(len(line[i]) for line in lines) for i in range(len(head))]
    for line in lines:
        cells = [line[0].ljust(widths[0])] + [
            c.rjust(w) for c, w in zip(line[1:], widths[1:], strict=True)
        ]
        typer.echo("  ".join(cells).rstrip())
    if total.unpriced:
        typer.echo(
            f"{total.unpriced:,} calls were on a model without a price: their cost is unknown "
            'and not counted; set one with [llm.prices."MODEL"] in config.toml.'
        )


def register(parent: typer.Typer) -> None:
    parent.command("usage")(usage_command)
