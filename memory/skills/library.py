"""Memory layer 3: skills, the procedures the agent writes for a person and reads next time.

Two places hold skills: the person's own `people/<person>/skills/` (the agent writes
there, for that person only) and the owner's shared `$KIOKU_HOME/skills/` (read-only
to the agent). A person's skill shadows a shared one of the same name. Only an index
(name and one line each) goes into the system prompt; bodies are read on demand.
This class is the async face of the blocking modules beside it: every file operation
runs in a worker thread, and every refusal is a `SkillError` saying what to do next.
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import structlog

from config.settings import SkillsSettings
from memory.access.people import person_dir, validate_person_id
from memory.safety import scan_text
from memory.skills import usage as skills_usage
from memory.skills.files import (
    Skill,
    SkillProblem,
    list_files,
    load_skill,
    read_bytes,
    read_folder,
    remove_folder,
    replace_folder,
    root_lock,
    scan_root,
    supporting_file,
)
from memory.skills.format import (
    SKILL_FILE,
    Scope,
    SkillError,
    check_file_path,
    check_name,
    one_line,
)
from memory.skills.imports import ImportReport, import_skills
from memory.skills.manage import SkillRequest, execute, plan
from memory.skills.proposals import Proposal, find_proposal, list_proposals, save_proposal
from memory.skills.usage import SkillUsage

log = structlog.get_logger("kioku.skills")

INDEX_DESCRIPTION = 200
"""Characters of a description shown in the index (the full text is in skill_view)."""


@dataclass(frozen=True)
class ListedSkill:
    skill: Skill
    usage: SkillUsage
    shadows_shared: bool = False


@dataclass(frozen=True)
class SkillListing:
    """What one person (or a group: `person=None`) can use, sorted by name, and what was skipped."""

    skills: list[ListedSkill]
    problems: list[SkillProblem]


@dataclass(frozen=True)
class SkillView:
    skill: Skill
    file: str
    content: str
    files: list[str]


@dataclass(frozen=True)
class ManageResult:
    """The outcome of a write: done, or waiting for approval as `proposal`."""

    message: str
    proposal: Proposal | None = None


class SkillsLibrary:
    """Every person's skills and the shared ones under one kioku home."""

    def __init__(self, home: Path, settings: SkillsSettings) -> None:
        self.home = home
        self.settings = settings
        self.shared_root = home / "skills"

    def personal_root(self, person: str) -> Path:
        return person_dir(self.home, person) / "skills"

    def root(self, person: str | None) -> Path:
        """The place a command works on: a person's skills, or the shared ones (None)."""
        return self.shared_root if person is None else self.personal_root(person)

    async def listing(self, person: str | None, category: str | None = None) -> SkillListing:
        """The skills `person` can use (shared only for None), and the folders skipped."""
        listing = await asyncio.to_thread(self._listing_sync, person)
        if category is None:
            return listing
        wanted = category.strip().lower()
        kept = [s for s in listing.skills if (s.skill.doc.category or "").lower() == wanted]
        return SkillListing(kept, listing.problems)

    async def index(self, person: str | None) -> str:
        """The block for the system prompt: one line per skill, by name, within the size cap.

        Skipped skill folders are logged here, once per session start, for the owner.
        """
        listing = await self.listing(person)
        for problem in listing.problems:
            log.warning("skill_skipped", folder=str(problem.folder), reason=problem.reason)
        lines: list[str] = []
        used = 0
        for position, listed in enumerate(listing.skills):
            doc = listed.skill.doc
            line = f"- {doc.name}: {one_line(doc.description, INDEX_DESCRIPTION)}"
            rest = len(listing.skills) - position
            more = f"- … and {rest} more: call skills_list to see them all."
            if used + len(line) + 1 + (len(more) + 1) * (rest > 1) > self.settings.index_max_chars:
                lines.append(more)
                break
            lines.append(line)
            used += len(line) + 1
        return "\n".join(lines)

    async def find(self, person: str | None, name: str) -> Skill:
        """The skill `name` as `person` sees it (their own first, then the shared one)."""
        check_name(name)
        return await asyncio.to_thread(self._find_sync, person, name)

    async def view(
        self, person: str | None, name: str, file: str | None = None, count_use: bool = True
    ) -> SkillView:
        """SKILL.md (or one supporting file) and the skill's files; counts a use by default."""
        skill = await self.find(person, name)
        relative = PurePosixPath(SKILL_FILE)
        if file is not None:
            relative = check_file_path(file, for_write=False)
        view = await asyncio.to_thread(self._view_sync, skill, relative)
        if count_use:
            root = skill.folder.parent
            async with _task_lock(root):
                await asyncio.to_thread(_record_view, root, name)
        return view

    async def entry(self, skill: Skill) -> ListedSkill:
        """`skill` with its usage record and whether it shadows a shared one, as listed."""

        def read() -> ListedSkill:
            usage = skills_usage.read_usage(skill.folder.parent).get(skill.name, SkillUsage())
            shared = (self.shared_root / skill.name / SKILL_FILE).is_file()
            return ListedSkill(skill, usage, skill.scope == "personal" and shared)

        return await asyncio.to_thread(read)

    async def usage(self, person: str | None) -> dict[str, SkillUsage]:
        return await asyncio.to_thread(skills_usage.read_usage, self.root(person))

    async def manage(
        self, person: str, request: SkillRequest, by: str, approval: bool = False
    ) -> ManageResult:
        """Apply a write to `person`'s own skills, or, with `approval`, store it as a proposal."""
        root = self.personal_root(person)
        async with _task_lock(root):
            if not approval:
                planned = await asyncio.to_thread(
                    execute, root, self.shared_root, request, self.settings, by
                )
                return ManageResult(planned.done)
            proposal = await asyncio.to_thread(self._propose_sync, root, person, request)
        return ManageResult(
            f"Proposed, not applied yet: the owner must approve it (proposal {proposal.id}: "
            f"{proposal.summary}). Do not repeat the call; tell the person the change is "
            "waiting for approval.",
            proposal,
        )

    async def delete(self, person: str | None, name: str) -> None:
        """Delete a skill from a person's place or the shared one (owner's command)."""
        check_name(name)
        root = self.root(person)
        async with _task_lock(root):
            await asyncio.to_thread(self._delete_sync, root, name)

    async def promote(self, person: str, name: str, by: str, replace: bool = False) -> Skill:
        """Copy `person`'s own skill into the shared place, for everyone."""
        check_name(name)
        source = await asyncio.to_thread(self._find_sync, person, name, False)
        async with _task_lock(self.shared_root):
            await asyncio.to_thread(self._promote_sync, source, by, replace)
        return await self.find(None, name)

    async def import_folder(
        self, source: Path, person: str | None, by: str, replace: bool = False
    ) -> ImportReport:
        """Copy a folder of Agent Skills (flat or nested in categories) into one place."""
        root = self.root(person)
        async with _task_lock(root):
            return await asyncio.to_thread(import_skills, source, root, self.settings, by, replace)

    async def pending(self) -> tuple[list[Proposal], list[str]]:
        return await asyncio.to_thread(list_proposals, self.home)

    async def approve(self, proposal_id: str, by: str) -> tuple[Proposal, str]:
        """Apply a waiting proposal to its person's skills (checked again first), then drop it."""
        proposal = await asyncio.to_thread(find_proposal, self.home, proposal_id)
        result = await self.manage(proposal.person, proposal.request, by)
        await asyncio.to_thread(proposal.path.unlink, True)
        return proposal, result.message

    async def reject(self, proposal_id: str) -> Proposal:
        proposal = await asyncio.to_thread(find_proposal, self.home, proposal_id)
        await asyncio.to_thread(proposal.path.unlink, True)
        return proposal

    # -- blocking halves, run in worker threads --------------------------------------------

    def _listing_sync(self, person: str | None) -> SkillListing:
        max_chars = self.settings.max_skill_chars
        shared, problems = scan_root(self.shared_root, "shared", max_chars)
        usage = {"shared": skills_usage.read_usage(self.shared_root)}
        own: list[Skill] = []
        if person is not None:
            own, own_problems = scan_root(self.personal_root(person), "personal", max_chars)
            problems += own_problems
            usage["personal"] = skills_usage.read_usage(self.personal_root(person))
        mine = {skill.name for skill in own}
        shared_names = {skill.name for skill in shared}
        listed = [
            ListedSkill(s, usage["personal"].get(s.name, SkillUsage()), s.name in shared_names)
            for s in own
        ]
        listed += [
            ListedSkill(s, usage["shared"].get(s.name, SkillUsage()))
            for s in shared
            if s.name not in mine
        ]
        listed.sort(key=lambda item: item.skill.name)
        return SkillListing(listed, problems)

    def _find_sync(self, person: str | None, name: str, shared_too: bool = True) -> Skill:
        roots: list[tuple[Path, Scope]] = []
        if person is not None:
            roots.append((self.personal_root(person), "personal"))
        if shared_too:
            roots.append((self.shared_root, "shared"))
        for root, scope in roots:
            folder = root / name
            if folder.is_dir() or folder.is_symlink():
                try:
                    return load_skill(root, name, scope, self.settings.max_skill_chars)
                except SkillError as exc:
                    raise SkillError(
                        f"The skill '{name}' cannot be used: {str(exc).rstrip('.')}."
                    ) from None
        where = "shared skill" if person is None else "skill for this person"
        raise SkillError(f"There is no {where} '{name}'. Call skills_list to see the names.")

    def _view_sync(self, skill: Skill, relative: PurePosixPath) -> SkillView:
        files = list_files(skill.folder)
        if relative == PurePosixPath(SKILL_FILE):
            return SkillView(skill, SKILL_FILE, skill.doc.text, files)
        data = read_bytes(supporting_file(skill.folder, relative), self.settings.max_file_bytes)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise SkillError(f"{relative} is a binary file; it cannot be shown as text.") from None
        finding = scan_text(text)
        if finding is not None:
            raise SkillError(f"{relative} is blocked by the safety check ({finding}).")
        return SkillView(skill, str(relative), text, files)

    def _propose_sync(self, root: Path, person: str, request: SkillRequest) -> Proposal:
        with root_lock(root):
            plan(root, self.shared_root, request, self.settings)
            return save_proposal(root, self.home, validate_person_id(person), request)

    def _delete_sync(self, root: Path, name: str) -> None:
        with root_lock(root):
            folder = root / name
            if not (folder.is_dir() or folder.is_symlink()):
                raise SkillError(f"There is no skill '{name}' in {root}.")
            remove_folder(root, name)
            skills_usage.forget(root, name)

    def _promote_sync(self, source: Skill, by: str, replace: bool) -> None:
        files = read_folder(source.folder, self.settings.max_file_bytes)
        with root_lock(self.shared_root):
            target = self.shared_root / source.name
            exists = target.exists() or target.is_symlink()
            if exists and not replace:
                raise SkillError(
                    f"A shared skill '{source.name}' already exists; add --replace to overwrite it."
                )
            replace_folder(self.shared_root, source.name, files)
            skills_usage.record_write(self.shared_root, source.name, by, created=not exists)


def _record_view(root: Path, name: str) -> None:
    with root_lock(root):
        skills_usage.record_view(root, name)


_LOCKS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[Path, asyncio.Lock]] = (
    weakref.WeakKeyDictionary()
)


@contextlib.asynccontextmanager
async def _task_lock(root: Path) -> AsyncIterator[None]:
    """Serialise this process's tasks on one place before they queue for its file lock."""
    locks = _LOCKS.setdefault(asyncio.get_running_loop(), {})
    async with locks.setdefault(root, asyncio.Lock()):
        yield
