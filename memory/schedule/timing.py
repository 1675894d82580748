"""When a scheduled job runs: parsing what a person or the model asked for, and next runs.

A job is due at instants in UTC, but is written and shown in the person's own zone.
Cron expressions and their next runs come from `cronsim`, with its (Debian cron) DST
rules: a job at a fixed local time that falls into a spring-forward gap runs when the
gap ends (02:30 on that day → 03:00), and one in the hour repeated at fall-back runs
once, at the first occurrence. An `at` time without offset is local time in the
person's zone, taken as Python's `fold=0` does: a time in the gap moves forward by the
gap (02:30 → 03:30), an ambiguous one is its first occurrence. An `every` job counts
from its creation: its slots are creation + k * interval, whatever the wall clock does.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from itertools import islice
from typing import Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from cronsim import CronSim, CronSimError

from inputs.durations import parse_duration

Kind = Literal["once", "cron", "every"]
_OFFSET = re.compile(r"^([+-])(\d{2}):(\d{2})$")
_ZONE_SHAPE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_+\-]*(/[A-Za-z0-9][A-Za-z0-9_+\-]*){0,2}")
_DATE_ONLY = re.compile(r"^\s*\d{4}-\d{2}-\d{2}\s*$")
_CRON_FIELDS = ("minute", "hour", "day of month", "month", "day of week")
_CRON_EXAMPLE = '"0 9 * * 1" (Mondays at 09:00)'
MAX_AHEAD = timedelta(days=3653)
"""The furthest a one-shot may lie ahead, and the longest `every`: ten years."""
MAX_SPEC_CHARS = 400
"""The longest `at`, `in`, `cron` or `every` taken: a cron listing every value of every
field is about 360 characters."""
CRON_CHECK_RUNS = 400
CRON_CHECK_SPAN = timedelta(days=366)
"""How far `schedule.min_interval` is checked for a cron: its runs in the next year, and
at most this many of them (a few tens of milliseconds at worst)."""


class BadSchedule(ValueError):
    """A schedule that cannot be kept; `str()` says what was wrong and what to send instead."""


@dataclass(frozen=True)
class When:
    """How a job repeats: `spec` is the UTC instant (ISO 8601) of a `once`, the 5-field
    expression of a `cron`, or the seconds (an int, as text) of an `every`. `timezone`
    is the zone it was asked in, the one a cron runs in."""

    kind: Kind
    spec: str
    timezone: str


def zone_named(name: str) -> tzinfo:
    """The zone `name`: an IANA name (`Asia/Tokyo`) or a fixed offset `+09:00` (what
    `zone_name` gives for a server whose local zone has no IANA name)."""
    text = name.strip() if isinstance(name, str) else ""
    offset = _OFFSET.match(text)
    if offset:
        sign = -1 if offset.group(1) == "-" else 1
        hours, minutes = int(offset.group(2)), int(offset.group(3))
        if hours < 24 and minutes < 60:
            return timezone(sign * timedelta(hours=hours, minutes=minutes))
    try:
        if _ZONE_SHAPE.fullmatch(text):
            return ZoneInfo(text)
    except (ZoneInfoNotFoundError, ValueError, OSError):  # OSError: a folder ("America")
        pass
    raise BadSchedule(
        f"{name!r} is not a time zone; send an IANA name such as Asia/Tokyo, Europe/Berlin "
        "or America/New_York (the zone of the nearest big city)"
    )


def zone_name(zone: tzinfo) -> str:
    """The name `zone_named` takes back: the IANA key, or `+HH:MM` for a fixed offset."""
    if isinstance(zone, ZoneInfo):
        return zone.key
    if zone is UTC:
        return "UTC"
    offset = zone.utcoffset(None) or timedelta(0)
    return _format_offset(offset)


def parse_when(
    *,
    at: str | None,
    in_: str | None,
    cron: str | None,
    every: str | None,
    zone: tzinfo,
    now: datetime,
    min_interval: float,
) -> When:
    """The schedule asked for by exactly one of `at`, `in_`, `cron`, `every` (blank counts
    as absent); `BadSchedule` for anything that cannot run."""
    given = {
        name: value.strip()
        for name, value in (("at", at), ("in", in_), ("cron", cron), ("every", every))
        if value is not None and value.strip()
    }
    if len(given) != 1:
        which = "none" if not given else " and ".join(sorted(given))
        raise BadSchedule(
            f"a schedule takes exactly one of at, in, cron or every (got {which}); send "
            'for example in: "20m", at: "2026-12-04T09:00", cron: "0 8 * * 1" or every: "1d"'
        )
    name = zone_name(zone)
    ((kind, value),) = given.items()
    if len(value) > MAX_SPEC_CHARS:
        raise BadSchedule(
            f"{kind} is {len(value):,} characters long, more than the {MAX_SPEC_CHARS} a "
            'schedule may have; send a short one, such as in: "20m" or cron: "0 8 * * 1"'
        )
    if kind == "at":
        due = _parse_at(value, zone)
        if due <= now:
            raise BadSchedule(
                f"at {value!r} is {local_time(due, zone)}, which has passed (it is now "
                f"{local_time(now, zone)}); send a future time, or `in` with a delay"
            )
        if due - now > MAX_AHEAD:
            raise BadSchedule(f"at {value!r} is more than ten years ahead; send a nearer time")
        return When("once", due.astimezone(UTC).isoformat(), name)
    if kind == "in":
        seconds = _duration(value, "in")
        return When("once", (now + timedelta(seconds=seconds)).astimezone(UTC).isoformat(), name)
    if kind == "every":
        seconds = _duration(value, "every")
        if seconds < min_interval:
            raise BadSchedule(
                f"every {value!r} is shorter than the minimum of {duration_text(min_interval)} "
                f"(schedule.min_interval); send every {duration_text(min_interval)} or longer, "
                "or a cron expression for fixed times"
            )
        return When("every", str(max(1, round(seconds))), name)
    when = When("cron", _parse_cron(value), name)
    first_run(when, now)
    _refuse_close_runs(when, now, min_interval)
    return when


def _refuse_close_runs(when: When, now: datetime, min_interval: float) -> None:
    """`BadSchedule` when two runs of the cron `when` in the next `CRON_CHECK_SPAN` (at most
    `CRON_CHECK_RUNS` of them) come closer than `min_interval` seconds: a cron may not buy
    more runs than `every` may. Gaps are real time, so a daylight saving change counts."""
    zone = zone_named(when.timezone)
    end = now + CRON_CHECK_SPAN
    previous: datetime | None = None
    for local in islice(CronSim(when.spec, now.astimezone(zone)), CRON_CHECK_RUNS):
        run = local.astimezone(UTC)
        if run > end:
            return
        if previous is not None and (run - previous).total_seconds() < min_interval:
            least = duration_text(min_interval)
            raise BadSchedule(
                f"cron {when.spec!r} runs {duration_text((run - previous).total_seconds())} "
                f"apart ({local_time(previous, zone)} and {local_time(run, zone)}), closer "
                f"than the minimum of {least} (schedule.min_interval); send a cron whose runs "
                f'are at least {least} apart, for example {_CRON_EXAMPLE}, or every: "{least}"'
            )
        previous = run


def first_run(when: When, now: datetime) -> datetime:
    """The first run of a job made at `now` (UTC): an `every` runs one interval after it."""
    if when.kind == "every":
        return (now + timedelta(seconds=int(when.spec))).astimezone(UTC)
    if when.kind == "once":
        return datetime.fromisoformat(when.spec)
    found = next_after(when, now)
    if found is None:
        raise BadSchedule(
            f"{when.kind} {when.spec!r} never runs after {now.isoformat()}; send a time to come"
        )
    return found


def next_after(when: When, after: datetime) -> datetime | None:
    """The run after `after` (UTC): a cron's next match, `after` + the interval of an
    `every` (`after` being one of its slots), a once's instant if later, else None."""
    if when.kind == "once":
        due = datetime.fromisoformat(when.spec)
        return due if due > after else None
    if when.kind == "every":
        return (after + timedelta(seconds=int(when.spec))).astimezone(UTC)
    zone = zone_named(when.timezone)
    try:
        found = next(CronSim(when.spec, after.astimezone(zone)))
    except StopIteration:
        return None
    return found.astimezone(UTC)


def next_slot(when: When, created: datetime, now: datetime) -> datetime | None:
    """The first run after `now` of a job made at `created`: the next step for a daemon
    that was up, one jump over every slot missed while it was down. An `every` keeps to
    its slots, created + k * interval, also after a run moved by hand."""
    if when.kind == "once":
        return None
    if when.kind == "every":
        step = int(when.spec)
        passed = max(0, math.floor((now - created).total_seconds() / step))
        return (created + timedelta(seconds=step * (passed + 1))).astimezone(UTC)
    return next_after(when, now)


def upcoming(
    when: When,
    after: datetime,
    *,
    n: int = 3,
    until: datetime | None = None,
    remaining: int | None = None,
) -> list[datetime]:
    """Up to `n` runs after `after` (for an `every`, `after` is its creation or one of its
    runs: a job just made lists `upcoming(when, now)`), none past `until`, at most
    `remaining`. A stored job's are `Job.upcoming()`, from its `next_run` on."""
    limit = n if remaining is None else min(n, remaining)
    runs: list[datetime] = []
    current = next_after(when, after)
    while current is not None and len(runs) < limit:
        if until is not None and current > until:
            break
        runs.append(current)
        current = next_after(when, current)
    return runs


def local_time(dt: datetime, zone: tzinfo) -> str:
    """`dt` as a person reads it: "Tue 4 Dec 09:00 JST" (seconds only when not zero; the
    offset "+09:00" where the zone has no abbreviation)."""
    local = dt.astimezone(zone)
    clock = f"{local:%H:%M:%S}" if local.second else f"{local:%H:%M}"
    abbreviation = local.tzname() or ""
    if not abbreviation.isalpha():
        abbreviation = _format_offset(local.utcoffset() or timedelta(0))
    return f"{local:%a} {local.day} {local:%b} {clock} {abbreviation}"


def _parse_at(value: str, zone: tzinfo) -> datetime:
    if _DATE_ONLY.match(value):
        raise BadSchedule(
            f"at {value!r} is a date without a time; send a date and time such as "
            f'"{value.strip()}T09:00"'
        )
    try:
        parsed = datetime.fromisoformat(value.replace(" ", "T", 1))
        if parsed.tzinfo is None:
            # fold=0: a time in a spring-forward gap moves forward, an ambiguous one is the first.
            parsed = parsed.replace(tzinfo=zone, fold=0)
        return parsed.astimezone(UTC)
    except OverflowError:
        raise BadSchedule(f"at {value!r} is beyond the year 9999; send a nearer time") from None
    except ValueError:
        raise BadSchedule(
            f"at {value!r} is not an ISO 8601 date-time; send one such as "
            '"2026-12-04T09:00" (your local time) or "2026-12-04T09:00+09:00"'
        ) from None


def _parse_cron(value: str) -> str:
    fields = value.split()
    if len(fields) != len(_CRON_FIELDS):
        raise BadSchedule(
            f"cron {value!r} has {len(fields)} fields; send 5 ({', '.join(_CRON_FIELDS)}), "
            f"for example {_CRON_EXAMPLE}"
        )
    expression = " ".join(fields)
    try:
        CronSim(expression, datetime(2000, 1, 1, tzinfo=UTC))
    except CronSimError as exc:
        raise BadSchedule(
            f"cron {value!r} is not a cron expression ({exc}); send 5 fields "
            f"({', '.join(_CRON_FIELDS)}), for example {_CRON_EXAMPLE}"
        ) from None
    return expression


def _duration(value: str, option: str) -> float:
    try:
        seconds = parse_duration(value)
    except ValueError:
        raise BadSchedule(
            f"{option} {value!r} is not a duration above zero; send a number and a unit "
            '(s, m, h, d or w), for example "90s", "20m", "2h", "1d" or "1w"'
        ) from None
    if seconds > MAX_AHEAD.total_seconds():
        raise BadSchedule(f"{option} {value!r} is more than ten years; send a shorter duration")
    return seconds


def rule_text(when: When) -> str:
    """How a job repeats, as every listing shows it: "once", "every 15m", or
    "cron 0 8 * * 1 (Asia/Tokyo time)" — a cron job keeps the zone it was made in."""
    if when.kind == "once":
        return "once"
    if when.kind == "cron":
        return f"cron {when.spec} ({when.timezone} time)"
    return f"every {duration_text(int(when.spec))}"


def duration_text(seconds: float) -> str:
    """Seconds as people write a duration: 900 → "15m", 90 → "90s"."""
    for unit, size in (("w", 604_800), ("d", 86_400), ("h", 3600), ("m", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{int(seconds // size)}{unit}"
    return f"{seconds:g}s"


def _format_offset(offset: timedelta) -> str:
    minutes = round(offset.total_seconds() / 60)
    sign = "-" if minutes < 0 else "+"
    return f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"
