"""What `kioku search` is asked: one query, or a --queries file of them, with since/until.

Shared by the lexical path (gateway.cli.search) and the one that searches by meaning
too (gateway.cli.search_fused). Dates are checked before anything is opened; the
person's time zone is looked up only for a search that needs their clock.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from gateway.cli.common import EXIT_USAGE, fail
from inputs.limits import InputRefused, loads
from inputs.text import text_lines
from memory.access.people import OWNER, InvalidPersonId, validate_person_id

if TYPE_CHECKING:
    from memory.search.when import When

MAX_QUERY_LINE = 65_536
"""Bytes in one line of a --queries file; a query longer than a few hundred words finds nothing
more."""
QUERY_LINE = (
    'each line must be {"person": P, "query": Q, "limit": N}, '
    'and may add "since" and "until" (YYYY-MM-DD)'
)


class Ask(NamedTuple):
    """One search to run: whose history, the query, how many sessions, since/until as typed."""

    person: str
    query: str
    limit: int
    since: str | None = None
    until: str | None = None


def check_dates(since: str | None, until: str | None) -> None:
    """Exit 2 with the reason when since/until are not dates (before anything is opened)."""
    from datetime import UTC

    from memory.search.when import BadDate, when_for

    try:
        when_for(UTC, since, until)
    except BadDate as exc:
        fail(str(exc), EXIT_USAGE)


def read_queries(path: Path) -> list[Ask]:
    """Every search of a --queries file; exit 1 naming each bad line."""
    batch, problems = [], []
    try:
        for line in text_lines(path, MAX_QUERY_LINE):
            if line.refused is None and not line.text.strip():
                continue
            try:
                if line.refused is not None:
                    raise ValueError(line.refused)
                batch.append(_query_line(line.text))
            except ValueError as exc:
                problems.append(f"{path} line {line.number}: {exc}")
    except InputRefused as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"cannot read {path}: {exc.strerror}")
    if problems:
        fail("\n".join([*problems, QUERY_LINE]))
    if not batch:
        fail(f"{path} is empty (no line holds a query); {QUERY_LINE}")
    return batch


def _query_line(line: str) -> Ask:
    try:
        row = loads(line, what="the JSON")
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(row, dict) or not isinstance(row.get("query"), str):
        raise ValueError('expected an object with a string "query"')
    person = row.get("person", OWNER)
    try:
        validate_person_id(person)
    except InvalidPersonId as exc:
        raise ValueError(str(exc)) from None
    limit = row.get("limit", 10)
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= 100:
        raise ValueError("limit must be a whole number from 1 to 100")
    since, until = row.get("since"), row.get("until")
    if not all(value is None or isinstance(value, str) for value in (since, until)):
        raise ValueError("since and until must be dates as text (YYYY-MM-DD)")
    from datetime import UTC

    from memory.search.when import when_for

    when_for(UTC, since, until)  # BadDate is a ValueError: reported with the line
    return Ask(person, row["query"], limit, since, until)


def timed(ask: Ask) -> bool:
    """Whether the search needs the person's clock: only then is their zone looked up."""
    from memory.search.when import says_time

    return ask.since is not None or ask.until is not None or says_time(ask.query)


def clock(ask: Ask, own_zone: str | None, default_zone: str | None) -> When | None:
    """The person's clock in their zone and the bounds asked for (None: not `timed`)."""
    if not timed(ask):
        return None
    from memory.schedule.timezones import effective_zone
    from memory.search.when import BadDate, when_for

    try:
        return when_for(effective_zone(own_zone, default_zone), ask.since, ask.until)
    except BadDate as exc:
        fail(str(exc), EXIT_USAGE)
