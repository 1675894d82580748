"""`kioku search`, `kioku import`, `kioku export`: the history store from the shell.

They open state.db directly (WAL lets them run beside the daemon). Exit codes:
0 done, 1 refused (the reason on stderr), 2 usage error.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from contextlib import nullcontext
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from config.paths import ensure_home
from gateway.cli import search_fused
from gateway.cli.common import (
    EXIT_USAGE,
    essentials_or_exit,
    fail,
    no_person,
    person_id,
    print_skill_import,
    require_person,
    run_async,
    settings_or_exit,
)
from gateway.cli.search_asks import Ask, check_dates, clock, read_queries, timed
from inputs.limits import InputRefused
from memory.access.people import OWNER

if TYPE_CHECKING:
    from config.settings import Settings
    from memory.importers.hermes_home import HermesImport
    from memory.importers.jsonl import Parsed
    from memory.store.records import ImportCounts, SessionResult

MAX_PROBLEMS_SHOWN = 50
PROGRESS_FROM = 5000


class Format(StrEnum):
    jsonl = "jsonl"
    hermes = "hermes"


def register(parent: typer.Typer) -> None:
    parent.command("search")(search_command)
    parent.command("import")(import_command)
    parent.command("export")(export_command)


def _open(home: Path) -> Any:
    from memory.store.database import Store

    return Store.open(ensure_home(home) / "state.db")


# -- search ------------------------------------------------------------------------------


def search_command(
    query: str | None = typer.Argument(None, help="What to look for, in any words or language."),
    person: str = typer.Option(OWNER, "--person", "-p", callback=person_id, help="Whose history."),
    limit: int = typer.Option(10, "--limit", "-n", min=1, max=100, help="Sessions to show."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of text."),
    queries: Path | None = typer.Option(
        None,
        "--queries",
        help='Run every line {"person", "query", "limit"[, "since", "until"]} of this file.',
    ),
    since: str | None = typer.Option(
        None, "--since", help="Only turns from this day (YYYY-MM-DD) or time on, in their zone."
    ),
    until: str | None = typer.Option(
        None, "--until", help="Only turns up to this day (inclusive) or time, in their zone."
    ),
) -> None:
    """Search a person's past sessions (every platform, never anyone else's DMs)."""
    if queries is not None and (query is not None or since or until):
        fail("--queries FILE runs alone; put since/until on its lines", EXIT_USAGE)
    if queries is None and query is None and since is None and until is None:
        fail("give a QUERY, --since/--until, or --queries FILE", EXIT_USAGE)
    if queries is None:
        check_dates(since, until)
    known = essentials_or_exit()
    batch = (
        read_queries(queries)
        if queries is not None
        else [Ask(person, query or "", limit, since, until)]
    )
    fused = search_fused.wanted(known.home)
    if fused is not None:
        answered = run_async(search_fused.answers(fused, batch, known.default_timezone))
    else:
        answered = _search_current(known.home, batch, known.default_timezone)
    if answered is None:
        answered = run_async(_search_opened(known.home, batch, known.default_timezone))
    if queries is not None:
        for results in answered:
            sys.stdout.write(json.dumps([r.to_json() for r in results], ensure_ascii=False) + "\n")
        return
    results = answered[0]
    if as_json:
        typer.echo(json.dumps([r.to_json() for r in results], ensure_ascii=False, indent=2))
    else:
        _render(results, query or _period(since, until))


def _period(since: str | None, until: str | None) -> str:
    return f"from {since or 'the start'} to {until or 'now'}"


def _search_current(
    home: Path, batch: list[Ask], default_zone: str | None
) -> list[list[SessionResult]] | None:
    """The answers, read straight from a state.db already in this kioku's layout; None
    when it is not (then the store is opened, and upgrades it)."""
    from contextlib import closing

    from memory.access.identities import has_person
    from memory.search.ranking import Scope, search_in
    from memory.store.quick_read import open_current

    path = home / "state.db"
    db = open_current(path)
    if db is None:
        return None
    with closing(db):
        for person in {ask.person for ask in batch}:
            if not has_person(db, person):
                no_person(person, path)
        answers = []
        for ask in batch:
            when = None
            if timed(ask):
                from memory.schedule.timezones import timezone_in

                when = clock(ask, timezone_in(db, ask.person), default_zone)
            scope = Scope.of_person(ask.person)
            answers.append(search_in(db, ask.query, scope, limit=ask.limit, when=when))
        return answers


async def _search_opened(
    home: Path, batch: list[Ask], default_zone: str | None
) -> list[list[SessionResult]]:
    from memory.schedule.timezones import timezone_of
    from memory.search.ranking import Scope, search

    async with await _open(home) as store:
        answers = []
        for ask in batch:
            await require_person(store, ask.person)
            own = await timezone_of(store, ask.person) if timed(ask) else None
            when = clock(ask, own, default_zone)
            scope = Scope.of_person(ask.person)
            answers.append(await search(store, ask.query, scope, limit=ask.limit, when=when))
        return answers


def _render(results: list[SessionResult], query: str) -> None:
    from rich.console import Console
    from rich.markup import escape

    console = Console(highlight=False)
    if not results:
        console.print(f"No sessions match {escape(query)!r}.")
        return
    for rank, result in enumerate(results, start=1):
        title = escape(result.title or result.session)
        when = result.started_at.strftime("%Y-%m-%d %H:%M")
        console.print(
            f"[bold]{rank}. {title}[/bold]  [dim]{result.platform} · {when} · "
            f"{result.score:.2f}[/dim]"
        )
        if result.summary:
            console.print(f"   [italic]{escape(result.summary)}[/italic]")
        for hit in result.hits:
            console.print(f"   [cyan]{hit.role}[/cyan] {_bold(hit.snippet)}")
        console.print()


def _bold(snippet: str) -> str:
    """`**word**` markers from search become rich bold; everything else is escaped."""
    from rich.markup import escape

    parts = snippet.split("**")
    return "".join(
        escape(p) if i % 2 == 0 else f"[bold yellow]{escape(p)}[/bold yellow]"
        for i, p in enumerate(parts)
    )


# -- import / export ---------------------------------------------------------------------


def import_command(
    file: Path = typer.Argument(..., help="A jsonl file, or a Hermes home folder."),
    fmt: Format = typer.Option(Format.jsonl, "--format", "-f", help="jsonl or hermes."),
    person: str | None = typer.Option(
        None, "--person", "-p", callback=person_id, help="hermes: who the history is (owner)."
    ),
    skip_invalid: bool = typer.Option(
        False, "--skip-invalid", help="Import the valid lines even if some are invalid."
    ),
) -> None:
    """Import history: kioku jsonl (one message a line) or a Hermes Agent home folder."""
    if fmt is Format.jsonl and person is not None:
        fail("jsonl lines name their own person; --person is for --format hermes", EXIT_USAGE)
    if not file.exists():
        fail(f"{file} does not exist")
    # A Hermes home brings notes and skills, which need every setting; jsonl only the home.
    settings = settings_or_exit() if fmt is Format.hermes else None
    home = essentials_or_exit().home if settings is None else settings.home
    run_async(_import(settings, home, file, fmt, person or OWNER, skip_invalid))


async def _import(
    settings: Settings | None, home: Path, file: Path, fmt: Format, person: str, skip_invalid: bool
) -> None:
    import asyncio

    from memory.importers.jsonl import check_conflicts, store_parsed

    parsed = await asyncio.to_thread(_parse, file, fmt, person)
    async with await _open(home) as store:
        await check_conflicts(store, parsed)
        if parsed.problems:
            _report_problems(parsed, file, skip_invalid)
        with _progress(parsed.messages) as advance:
            if fmt is Format.jsonl:
                counts = await store_parsed(store, parsed, advance)
                typer.echo(_summary(counts, 0, len(parsed.problems)))
                return
            from memory.importers.hermes_home import HermesHistory, import_hermes_home
            from memory.notes.journal import NotesJournal
            from memory.notes.person_notes import PersonNotes
            from memory.skills.library import SkillsLibrary

            assert isinstance(parsed, HermesHistory) and settings is not None
            notes = PersonNotes(settings.home, person, settings.memory.notes, NotesJournal(store))
            skills = SkillsLibrary(settings.home, settings.skills)
            report = await import_hermes_home(store, parsed, file, notes, skills, advance)
    _print_hermes(report, len(parsed.problems))


def _print_hermes(report: HermesImport, skipped: int) -> None:
    if report.notes_error is not None:
        fail(f"History imported, but the Hermes notes were not:\n{report.notes_error}")
    typer.echo(_summary(report.history, report.notes_added, skipped))
    if report.skills_error is not None:
        print(f"Skills not imported: {report.skills_error}", file=sys.stderr)
    elif report.skills is not None:
        print_skill_import(report.skills)


def _parse(file: Path, fmt: Format, person: str) -> Parsed:
    from memory.importers.jsonl import parse_jsonl

    if fmt is Format.hermes:
        from memory.importers.hermes import HermesError
        from memory.importers.hermes_home import read_hermes_history

        try:
            return read_hermes_history(file, person)
        except HermesError as exc:
            fail(str(exc))
    if file.is_dir():
        fail(f"{file} is a folder; for a Hermes home pass --format hermes")
    try:
        return parse_jsonl(file)
    except InputRefused as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"cannot read {file}: {exc.strerror}")


def _report_problems(parsed: Parsed, file: Path, skip_invalid: bool) -> None:
    problems = sorted(parsed.problems, key=lambda p: p.line)
    shown = [f"{file} {p}" if p.line else f"{file}: {p}" for p in problems[:MAX_PROBLEMS_SHOWN]]
    if len(problems) > MAX_PROBLEMS_SHOWN:
        shown.append(f"... and {len(problems) - MAX_PROBLEMS_SHOWN} more")
    print("\n".join(shown), file=sys.stderr)
    if not skip_invalid:
        fail(
            f"Nothing imported: {len(problems)} invalid line(s). Fix them, or pass "
            "--skip-invalid to import the rest."
        )
    parsed.drop_refused()


def _progress(total: int) -> Any:
    """A progress bar on stderr for large imports on a terminal; otherwise nothing."""
    if total < PROGRESS_FROM or not sys.stderr.isatty():
        return nullcontext(None)
    return _ProgressBar(total)


class _ProgressBar:
    def __init__(self, total: int) -> None:
        from rich.console import Console
        from rich.progress import Progress

        self.progress = Progress(console=Console(stderr=True), transient=True)
        self.task = self.progress.add_task("importing", total=total)

    def __enter__(self) -> Callable[[int], None]:
        self.progress.start()
        return lambda done: self.progress.advance(self.task, done)

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()


def _summary(counts: ImportCounts, notes_added: int, skipped: int) -> str:
    text = (
        f"Imported {counts.sessions_added} session(s) and {counts.messages_added} message(s); "
        f"{counts.messages_present} already present."
    )
    if notes_added:
        text += f" Added {notes_added} note(s)."
    if skipped:
        text += f" Skipped {skipped} invalid line(s)."
    return text


def export_command(
    person: str = typer.Option(OWNER, "--person", "-p", callback=person_id, help="Whose history."),
) -> None:
    """Write a person's sessions as jsonl on stdout (the format `kioku import` reads)."""
    run_async(_export(essentials_or_exit().home, person))


async def _export(home: Path, person: str) -> None:
    from memory.importers.jsonl import export_jsonl

    async with await _open(home) as store:
        await require_person(store, person)
        async for line in export_jsonl(store, person):
            sys.stdout.write(line + "\n")
