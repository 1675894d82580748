"""Skill writes that wait for the owner (`skills.write_approval = true`).

A proposal is the checked request itself, kept as `people/<person>/skills/.proposals/<id>.json`
(hidden, so it is never taken for a skill). Approving plans it again against the files
as they are then and applies it; rejecting deletes it. Ids are short random hex, unique
across persons, so the owner can approve one without naming whose it is.
"""

from __future__ import annotations

import json
import re
import secrets
from dataclasses import dataclass
from pathlib import Path

from inputs.limits import loads
from memory.access.people import InvalidPersonId, validate_person_id
from memory.skills.format import SkillError
from memory.skills.manage import SkillRequest
from memory.skills.usage import now
from plumbing.files import atomic_write

PROPOSALS = ".proposals"
PROPOSAL_ID = re.compile(r"[0-9a-f]{8}")


@dataclass(frozen=True)
class Proposal:
    id: str
    person: str
    request: SkillRequest
    created_at: str
    path: Path

    @property
    def summary(self) -> str:
        return f"{self.request.action} {self.request.target}"


def save_proposal(root: Path, home: Path, person: str, request: SkillRequest) -> Proposal:
    """Store `request` for approval (call under the person's skills lock)."""
    folder = root / PROPOSALS
    folder.mkdir(mode=0o700, exist_ok=True)
    while True:
        proposal_id = secrets.token_hex(4)
        if not list(home.glob(f"people/*/skills/{PROPOSALS}/{proposal_id}.json")):
            break
    created_at = now()
    data = {"id": proposal_id, "person": person, "created_at": created_at, **request.as_mapping()}
    path = folder / f"{proposal_id}.json"
    atomic_write(path, json.dumps(data, indent=1, ensure_ascii=False).encode())
    return Proposal(proposal_id, person, request, created_at, path)


def list_proposals(home: Path) -> tuple[list[Proposal], list[str]]:
    """Every waiting proposal, oldest first, and the files that could not be read."""
    proposals: list[Proposal] = []
    problems: list[str] = []
    for path in sorted(home.glob(f"people/*/skills/{PROPOSALS}/*.json")):
        try:
            proposals.append(_load(path))
        except SkillError as exc:
            problems.append(f"{path}: {exc}")
    proposals.sort(key=lambda p: (p.created_at, p.id))
    return proposals, problems


def find_proposal(home: Path, proposal_id: str) -> Proposal:
    """The proposal with this id, or `SkillError` saying how to find the right one."""
    if not PROPOSAL_ID.fullmatch(proposal_id):
        raise SkillError(f"{proposal_id!r} is not a proposal id (8 hex digits, e.g. 3fa2c1d0).")
    for path in home.glob(f"people/*/skills/{PROPOSALS}/{proposal_id}.json"):
        try:
            return _load(path)
        except SkillError as exc:
            raise SkillError(f"{path}: {exc}; delete the file to drop the proposal.") from None
    raise SkillError(
        f"There is no waiting proposal {proposal_id}; `kioku skills pending` lists them."
    )


def _load(path: Path) -> Proposal:
    try:
        data = loads(path.read_bytes(), what="the proposal")
    except (OSError, ValueError) as exc:  # ValueError: not UTF-8, not JSON, too deep
        raise SkillError(f"cannot be read ({exc})") from None
    if not isinstance(data, dict):
        raise SkillError("is not a proposal (expected a JSON object)")
    person = path.parent.parent.parent.name
    try:
        validate_person_id(person)
    except InvalidPersonId as exc:
        raise SkillError(str(exc)) from None
    return Proposal(
        id=path.stem,
        person=person,
        request=SkillRequest.from_mapping(data),
        created_at=str(data.get("created_at", "")),
        path=path,
    )
