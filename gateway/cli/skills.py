"""`kioku skills`: see and manage skills — a person's own (`--person P`) or the shared ones.

Without `--person` a command works on the shared skills in `$KIOKU_HOME/skills/`, which
only the owner manages; with it, on that person's `people/<P>/skills/` (and `list`/`show`
show what that person sees: their own skills, then the shared ones they do not shadow).
The commands work on the files directly under the same locks as the daemon. Exit codes:
0 done, 1 refused (the reason on stderr), 2 usage error.
"""

from __future__ import annotations

import asyncio
import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

import typer

from config.logs import configure_from
from config.paths import ensure_home
from config.settings import Settings
from gateway.cli.common import fail, settings_or_exit
from memory.access.people import InvalidPersonId, validate_person_id
from memory.skills.files import SkillProblem
from memory.skills.format import SkillError
from memory.skills.imports import ImportReport
from memory.skills.library import ListedSkill, SkillListing, SkillsLibrary
from memory.skills.proposals import Proposal

app = typer.Typer(
    help="See and manage skills: each person's own and the shared ones you manage.",
    no_args_is_help=True,
)

OWNER_BY = "owner"
APPROVED_BY = "agent, approved by the owner"


def _person(value: str | None) -> str | None:
    if value is None:
        return None
    try:
        return validate_person_id(value)
    except InvalidPersonId as exc:
        raise typer.BadParameter(str(exc)) from None


PERSON = typer.Option(
    None, "--person", "-p", callback=_person, help="This person's skills (default: the shared)."
)
JSON = typer.Option(False, "--json", help="Print JSON.")


@app.command("list")
def list_command(person: str | None = PERSON, as_json: bool = JSON) -> None:
    """List skills with their use counts; unusable skill folders are reported, not listed."""
    library = _library()
    listing = _run(library.listing(person))
    if as_json:
        data = {
            "person": person,
            "skills": [_skill_json(listed) for listed in listing.skills],
            "problems": [_problem_json(problem) for problem in listing.problems],
        }
        typer.echo(json.dumps(data, ensure_ascii=False, indent=2))
    else:
        typer.echo(_list_text(library, person, listing))
    _warn(listing.problems)


@app.command("show")
def show(
    name: str = typer.Argument(..., help="The skill's name."),
    person: str | None = PERSON,
    as_json: bool = JSON,
) -> None:
    """Print a skill: where it is, its files and use counts, then its SKILL.md."""
    library = _library()
    view = _run(library.view(person, name, count_use=False))
    listed = _run(library.entry(view.skill))
    if as_json:
        data = {**_skill_json(listed), "files": view.files, "content": view.content}
        typer.echo(json.dumps(data, ensure_ascii=False, indent=2))
        return
    doc, usage = view.skill.doc, listed.usage
    lines = [
        f"{doc.name} — {_scope_label(listed)}",
        str(view.skill.folder),
        f"description: {doc.description}",
    ]
    lines += [f"category: {doc.category}"] if doc.category else []
    lines += [f"tags: {', '.join(doc.tags)}"] if doc.tags else []
    lines += [f"version: {doc.version}"] if doc.version else []
    lines += [
        f"files: {', '.join(view.files)}",
        f"views: {usage.views}, last used: {usage.last_used or 'never'}",
        f"created: {usage.created_at or 'unknown'} by {usage.created_by or 'unknown'}",
        f"updated: {usage.updated_at or 'unknown'} by {usage.updated_by or 'unknown'}",
        "",
        view.content.rstrip("\n"),
    ]
    typer.echo("\n".join(lines))


@app.command("promote")
def promote(
    name: str = typer.Argument(..., help="The person's skill to share."),
    person: str = typer.Option(..., "--person", "-p", callback=_person, help="Whose skill."),
    replace: bool = typer.Option(False, "--replace", help="Overwrite a shared skill of that name."),
) -> None:
    """Copy a person's own skill into the shared skills, for everyone."""
    skill = _run(_library().promote(person, name, OWNER_BY, replace))
    typer.echo(
        f"Promoted {name}: it is now a shared skill ({skill.folder}). {person}'s own copy stays "
        f"and still comes first for {person}; `kioku skills delete {name} --person {person}` "
        "removes it."
    )


@app.command("delete")
def delete(
    name: str = typer.Argument(..., help="The skill's name."),
    person: str | None = PERSON,
) -> None:
    """Delete a skill folder (a person's with --person, else the shared one)."""
    _run(_library().delete(person, name))
    where = f"{person}'s skills" if person else "the shared skills"
    typer.echo(f"Deleted {name} from {where}.")


@app.command("import")
def import_command(
    folder: Path = typer.Argument(
        ..., exists=True, file_okay=False, help="A folder of skills, flat or in category folders."
    ),
    person: str | None = PERSON,
    replace: bool = typer.Option(False, "--replace", help="Overwrite skills of the same name."),
) -> None:
    """Import a folder of Agent Skills (e.g. ~/.hermes/skills), for a person or shared."""
    library = _library()
    report = _run(library.import_folder(folder, person, f"import from {folder}", replace))
    typer.echo(_import_text(report, library.root(person)))
    _print_skipped(report)
    if report.skipped:
        fail(f"{len(report.skipped)} skill(s) were not imported; the reasons are above.")


@app.command("pending")
def pending(as_json: bool = JSON) -> None:
    """List the agent's skill writes waiting for approval (skills.write_approval = true)."""
    proposals, problems = _run(_library().pending())
    if as_json:
        typer.echo(json.dumps([_proposal_json(p) for p in proposals], ensure_ascii=False, indent=2))
    elif proposals:
        typer.echo("\n".join(_proposal_line(p) for p in proposals))
    else:
        typer.echo("No skill changes are waiting for approval.")
    for problem in problems:
        print(f"warning: unreadable proposal {problem}", file=sys.stderr)


@app.command("approve")
def approve(
    proposal_id: str = typer.Argument(..., help="The id shown by `kioku skills pending`."),
) -> None:
    """Apply a waiting skill change (checked again against the skills as they are now)."""
    proposal, message = _run(_library().approve(proposal_id, APPROVED_BY))
    typer.echo(f"Approved {proposal.id} ({proposal.person}: {proposal.summary}). {message}")


@app.command("reject")
def reject(
    proposal_id: str = typer.Argument(..., help="The id shown by `kioku skills pending`."),
) -> None:
    """Drop a waiting skill change without applying it."""
    proposal = _run(_library().reject(proposal_id))
    typer.echo(f"Rejected {proposal.id} ({proposal.person}: {proposal.summary}).")


async def import_hermes_skills(settings: Settings, hermes_home: Path, person: str) -> None:
    """Part of `kioku import --format hermes`: bring `<hermes home>/skills` to the person."""
    source = hermes_home / "skills"
    if not source.is_dir():
        return
    library = SkillsLibrary(settings.home, settings.skills)
    try:
        report = await library.import_folder(source, person, f"import from {source}")
    except SkillError as exc:
        print(f"Skills not imported: {exc}", file=sys.stderr)
        return
    typer.echo(_import_text(report, library.root(person)))
    _print_skipped(report)


# -- helpers -----------------------------------------------------------------------------------


def _library() -> SkillsLibrary:
    settings = settings_or_exit()
    configure_from(settings)
    ensure_home(settings.home)
    return SkillsLibrary(settings.home, settings.skills)


def _run(work: Any) -> Any:
    """Run one library call; a refusal ends the command with its reason, exit 1."""
    try:
        return asyncio.run(work)
    except SkillError as exc:
        fail(str(exc))


def _list_text(library: SkillsLibrary, person: str | None, listing: SkillListing) -> str:
    if person is None:
        head = f"Shared skills in {library.shared_root}"
    else:
        head = f"Skills {person} can use (own in {library.personal_root(person)}, then shared)"
    if not listing.skills:
        return f"{head}: none."
    lines = [f"{head}:"]
    width = max(len(listed.skill.name) for listed in listing.skills)
    for listed in listing.skills:
        usage = listed.usage
        last = f", last {usage.last_used[:10]}" if usage.last_used else ""
        lines.append(
            f"  {listed.skill.name:<{width}}  {_scope_label(listed):<14}  "
            f"{usage.views} view(s){last}  {' '.join(listed.skill.doc.description.split())}"
        )
    return "\n".join(lines)


def _scope_label(listed: ListedSkill) -> str:
    if listed.skill.scope == "shared":
        return "shared"
    return "own, shadows shared" if listed.shadows_shared else "own"


def _warn(problems: list[SkillProblem]) -> None:
    for problem in problems:
        print(f"warning: skipped {problem.folder}: {problem.reason}", file=sys.stderr)


def _skill_json(listed: ListedSkill) -> dict[str, Any]:
    doc = listed.skill.doc
    return {
        "name": doc.name,
        "description": doc.description,
        "scope": listed.skill.scope,
        "shadows_shared": listed.shadows_shared,
        "category": doc.category,
        "tags": list(doc.tags),
        "version": doc.version,
        "path": str(listed.skill.folder),
        "usage": asdict(listed.usage),
    }


def _problem_json(problem: SkillProblem) -> dict[str, str]:
    return {"folder": str(problem.folder), "scope": problem.scope, "reason": problem.reason}


def _proposal_json(proposal: Proposal) -> dict[str, Any]:
    return {
        "id": proposal.id,
        "person": proposal.person,
        "created_at": proposal.created_at,
        "summary": proposal.summary,
        "request": proposal.request.as_mapping(),
    }


def _proposal_line(proposal: Proposal) -> str:
    request = proposal.request
    detail = ""
    if request.action == "patch":
        detail = f": {_short(request.old_string)} -> {_short(request.new_string)}"
    return f"{proposal.id}  {proposal.created_at}  {proposal.person}  {proposal.summary}{detail}"


def _short(text: str | None) -> str:
    flat = " ".join((text or "").split())
    return repr(flat if len(flat) <= 40 else flat[:39] + "…")


def _import_text(report: ImportReport, root: Path) -> str:
    lines = []
    if report.imported:
        lines.append(
            f"Imported {len(report.imported)} skill(s) into {root}: " + ", ".join(report.imported)
        )
    if report.replaced:
        lines.append(f"Replaced {len(report.replaced)}: " + ", ".join(report.replaced))
    if report.unchanged:
        lines.append(f"Already there, unchanged: {', '.join(report.unchanged)}")
    if not (report.imported or report.replaced or report.unchanged):
        lines.append("No skills imported.")
    return "\n".join(lines)


def _print_skipped(report: ImportReport) -> None:
    for folder, reason in report.skipped:
        print(f"Skipped {folder}: {reason}", file=sys.stderr)


def register(parent: typer.Typer) -> None:
    parent.add_typer(app, name="skills")
