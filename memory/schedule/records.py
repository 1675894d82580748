"""The data of scheduled jobs as the layers above see it: where a job goes, a job to make,
a stored job, one run of it; and the errors a schedule can be refused with."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from inputs.text import lone_surrogate
from memory.schedule.timing import BadSchedule, When, upcoming
from memory.store.records import from_epoch, iso

MAX_TEXT = 4000
MAX_NAME = 80
MAX_COUNT = 1_000_000
"""The most runs a `count` may ask for: more than ten years of every minute."""
JOB_COLUMNS = (
    "id, person_id, name, kind, spec, timezone, text, prompt, platform, chat, thread, "
    "chat_kind, identity, next_run, until, remaining, created_at, runs, failures, last_error"
)


class TooManyJobs(BadSchedule):
    """The person has `schedule.max_jobs_per_person` live jobs already."""


class NoSuchJob(LookupError):
    """No job with that id for this person (whether absent or someone else's)."""


@dataclass(frozen=True)
class Target:
    """Where a job's runs go: a chat of the person's (a DM, or the group it was made in),
    and the identity of theirs it is meant for (None in a group)."""

    platform: str
    chat: str
    thread: str
    chat_kind: Literal["dm", "group"]
    identity: str | None


@dataclass(frozen=True)
class NewJob:
    """A job to make: `text` is sent as written, `prompt` is run as a turn of the person."""

    person: str
    when: When
    target: Target
    text: str | None = None
    prompt: str | None = None
    name: str | None = None
    until: datetime | None = None
    count: int | None = None

    def __post_init__(self) -> None:
        text, prompt = _present(self.text), _present(self.prompt)
        if (text is None) == (prompt is None):
            which = "both" if text is not None else "neither"
            raise BadSchedule(
                f"a job takes exactly one of text or prompt (got {which}); send text for a "
                "reminder sent as written, or prompt for a task the assistant runs and answers"
            )
        what = "text" if text is not None else "prompt"
        body = text if text is not None else prompt
        if body is not None and len(body) > MAX_TEXT:
            raise BadSchedule(
                f"the job's {what} has {len(body)} characters, more than {MAX_TEXT}; send a "
                "shorter one"
            )
        if self.name is not None and len(self.name) > MAX_NAME:
            raise BadSchedule(
                f"the job's name has {len(self.name)} characters, more than {MAX_NAME}; send "
                "a shorter one"
            )
        for field, value in ((what, body), ("name", self.name)):
            surrogate = lone_surrogate(value or "")
            if surrogate is not None:
                raise BadSchedule(
                    f"the job's {field} holds {surrogate}, which is not text (bytes that are "
                    "not UTF-8, or a lone surrogate); send it as UTF-8 text"
                )
        if self.when.kind == "once" and (self.until is not None or self.count is not None):
            raise BadSchedule(
                "until and count are for repeating jobs (cron or every); send the job "
                "without them, or make it repeat"
            )
        if self.count is not None and self.count < 1:
            raise BadSchedule(
                f"count {self.count} would never run; send a count of 1 or more, or none "
                "to repeat until cancelled"
            )
        if self.count is not None and self.count > MAX_COUNT:
            raise BadSchedule(
                f"count is more than {MAX_COUNT:,}, the most runs a job may have; send a count "
                f"from 1 to {MAX_COUNT:,}, or none to repeat until cancelled"
            )
        object.__setattr__(self, "text", text)
        object.__setattr__(self, "prompt", prompt)
        object.__setattr__(self, "name", _present(self.name))


@dataclass(frozen=True)
class Job:
    """A stored job. `remaining`: runs left (None: no count); `runs`: runs claimed so far;
    `failures`/`last_error`: failed delivery attempts (`last_error` clears on success)."""

    id: int
    person: str
    name: str | None
    when: When
    text: str | None
    prompt: str | None
    target: Target
    next_run: datetime | None
    until: datetime | None
    remaining: int | None
    created_at: datetime
    runs: int
    failures: int
    last_error: str | None

    def upcoming(self, n: int = 3) -> list[datetime]:
        """The job's next `n` runs (UTC), `next_run` first."""
        if self.next_run is None or n < 1:
            return []
        left = None if self.remaining is None else self.remaining - 1
        later = upcoming(self.when, self.next_run, n=n - 1, until=self.until, remaining=left)
        return [self.next_run, *later]

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "person": self.person,
            "name": self.name,
            "kind": self.when.kind,
            "spec": self.when.spec,
            "timezone": self.when.timezone,
            "text": self.text,
            "prompt": self.prompt,
            "target": {
                "platform": self.target.platform,
                "chat": self.target.chat,
                "thread": self.target.thread,
                "chat_kind": self.target.chat_kind,
                "identity": self.target.identity,
            },
            "next_run": iso(self.next_run),
            "next_runs": [iso(run) for run in self.upcoming()],
            "until": iso(self.until),
            "remaining": self.remaining,
            "created_at": iso(self.created_at),
            "runs": self.runs,
            "failures": self.failures,
            "last_error": self.last_error,
        }


@dataclass(frozen=True)
class Run:
    """One claimed run of a job: `delivery` is its id (a platform may dedupe on it);
    `late`: sent more than a minute after `due`; `missed`: a once beyond `schedule.grace`,
    to be dropped with a note to the person instead of sent."""

    job: Job
    due: datetime
    delivery: str
    attempts: int
    late: bool
    missed: bool


def job_from_row(row: Any) -> Job:
    """A `Job` from a row of `JOB_COLUMNS`."""
    return Job(
        id=int(row["id"]),
        person=row["person_id"],
        name=row["name"],
        when=When(row["kind"], row["spec"], row["timezone"]),
        text=row["text"],
        prompt=row["prompt"],
        target=Target(
            row["platform"], row["chat"], row["thread"], row["chat_kind"], row["identity"]
        ),
        next_run=None if row["next_run"] is None else from_epoch(row["next_run"]),
        until=None if row["until"] is None else from_epoch(row["until"]),
        remaining=row["remaining"],
        created_at=from_epoch(row["created_at"]),
        runs=int(row["runs"]),
        failures=int(row["failures"]),
        last_error=row["last_error"],
    )


def _present(value: str | None) -> str | None:
    return value if value is not None and value.strip() else None
