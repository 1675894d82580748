"""`kioku skills`: see and manage skills — the owner's, another person's, or the shared ones.

Like every kioku command, a command works for the owner unless `--person P` names
someone else: on their own skills in `people/<P>/skills/`, and `list`/`show` show what
they can use (their own skills, then the shared ones they do not shadow, each marked).
`--shared` works on the shared skills in `$KIOKU_HOME/skills/` alone, which only the
owner manages. The commands work on the files directly under the same locks as the
daemon. Exit codes: 0 done, 1 refused (the reason on stderr), 2 usage error.
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from config.paths import ensure_home
from gateway.cli.common import (
    EXIT_USAGE,
    fail,
    person_id,
    print_skill_import,
    run_async,
    settings_or_exit,
)
from memory.access.people import OWNER

if TYPE_CHECKING:
    from memory.skills.files import SkillProblem
    from memory.skills.library import ListedSkill, SkillListing, SkillsLibrary
    from memory.skills.proposals import Proposal

app = typer.Typer(
    help="See and manage skills: the owner's, another person's (--person), the shared (--shared).",
    no_args_is_help=True,
)

OWNER_BY = "owner"
APPROVED_BY = "agent, approved by the owner"


PERSON = typer.Option(
    None, "--person", "-p", callback=person_id, help="Whose skills (default: the owner's)."
)
SEEN_BY = typer.Option(
    None,
    "--person",
    "-p",
    callback=person_id,
    help="Whose view: their own skills and the shared ones (default: the owner's).",
)
SHARED_ONLY = typer.Option(False, "--shared", help="The shared skills only.")
SHARED = typer.Option(False, "--shared", help="The shared skills instead of a person's.")
JSON = typer.Option(False, "--json", help="Print JSON.")


@app.command("list")
def list_command(
    person: str | None = SEEN_BY, shared: bool = SHARED_ONLY, as_json: bool = JSON
) -> None:
    """List the owner's (or P's) own skills and the shared ones, marked, with use counts.

    Unusable skill folders are reported as warnings, not listed.
    """
    person = _place(person, shared)
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
    person: str | None = SEEN_BY,
    shared: bool = SHARED_ONLY,
    as_json: bool = JSON,
) -> None:
    """Print a skill: whose it is, where, its files and use counts, then its SKILL.md.

    The owner's (or P's) own skill of that name comes first, else the shared one.
    """
    person = _place(person, shared)
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
    name: str = typer.Argument(..., help="The own skill to share."),
    person: str | None = PERSON,
    replace: bool = typer.Option(False, "--replace", help="Overwrite a shared skill of that name."),
) -> None:
    """Copy the owner's (or P's) own skill into the shared skills, for everyone."""
    person = person or OWNER
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
    shared: bool = SHARED,
) -> None:
    """Delete one of the owner's (or P's) own skills, or with --shared a shared one."""
    person = _place(person, shared)
    _run(_library().delete(person, name))
    where = f"{person}'s skills" if person else "the shared skills"
    typer.echo(f"Deleted {name} from {where}.")


@app.command("import")
def import_command(
    folder: Path = typer.Argument(
        ..., exists=True, file_okay=False, help="A folder of skills, flat or in category folders."
    ),
    person: str | None = PERSON,
    shared: bool = SHARED,
    replace: bool = typer.Option(False, "--replace", help="Overwrite skills of the same name."),
) -> None:
    """Import a folder of Agent Skills (e.g. ~/.hermes/skills) for the owner, P, or shared.

    Flat (DIR/<name>/SKILL.md) or in category folders; each skill is checked and copied whole.
    """
    person = _place(person, shared)
    report = _run(_library().import_folder(folder, person, f"import from {folder}", replace))
    print_skill_import(report)
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
    """Apply a waiting skill change to its person's own skills (checked again first)."""
    proposal, message = _run(_library().approve(proposal_id, APPROVED_BY))
    typer.echo(f"Approved {proposal.id} ({proposal.person}: {proposal.summary}). {message}")


@app.command("reject")
def reject(
    proposal_id: str = typer.Argument(..., help="The id shown by `kioku skills pending`."),
) -> None:
    """Drop a waiting skill change without applying it."""
    proposal = _run(_library().reject(proposal_id))
    typer.echo(f"Rejected {proposal.id} ({proposal.person}: {proposal.summary}).")


# -- helpers -----------------------------------------------------------------------------------


def _place(person: str | None, shared: bool) -> str | None:
    """The person a command works for (the owner by default), or None for the shared skills."""
    if shared and person is not None:
        fail("Give either --person or --shared, not both.", EXIT_USAGE)
    return None if shared else person or OWNER


def _library() -> SkillsLibrary:
    from config.logs import configure_from
    from memory.skills.library import SkillsLibrary

    settings = settings_or_exit()
    configure_from(settings)
    ensure_home(settings.home)
    return SkillsLibrary(settings.home, settings.skills)


def _run(work: Any) -> Any:
    """Run one library call; a refusal ends the command with its reason, exit 1."""
    from memory.skills.format import SkillError

    try:
        return run_async(work)
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


def register(parent: typer.Typer) -> None:
    parent.add_typer(app, name="skills")
