"""The owner's pages: pairing requests, people and identities, everyone's model usage and budgets,
adapters, errors, database and kept media.

Pairing decisions call `memory.access.codes.approve_pairing` / `deny_pairing` (one store
transaction each), exactly as `kioku pairing approve|deny` does, and log the same events.
The auth middleware has already refused anyone but the owner.
"""

from __future__ import annotations

import structlog
from aiohttp import web

from inputs.amounts import parse_usd
from memory.access.codes import CodeRefused, approve_pairing, deny_pairing, pending_pairings
from memory.access.identities import list_people
from memory.access.people import InvalidPersonId, validate_person_id
from memory.budgets.limits import Budget, UnknownPerson, put_budget
from memory.media import count_media
from memory.skills.format import SkillError
from web.budget_view import budget_view
from web.context import context, render
from web.forms import form
from web.usage_view import everyone_usage_view

log = structlog.get_logger("kioku.web")
APPROVED_BY = "owner (web)"


async def admin(
    request: web.Request, error: str | None = None, notice: str | None = None
) -> web.Response:
    ctx = context(request)
    pairings = await pending_pairings(ctx.store, ctx.clock())
    people = await list_people(ctx.store)
    status = await ctx.status() if ctx.status else None
    proposals, problems = await ctx.skills().pending()
    return render(
        request,
        "admin.html",
        status=400 if error else 200,
        pairings=pairings,
        people=people,
        adapters=(status or {}).get("adapters"),
        events=ctx.errors.events(),
        database_bytes=await ctx.store.size_bytes(),
        media=await count_media(ctx.store),
        proposals=proposals,
        proposal_problems=problems,
        **await everyone_usage_view(ctx),
        error=error,
        notice=notice,
        **await budget_view(ctx, people),
    )


async def approve(request: web.Request) -> web.Response:
    ctx = context(request)
    fields = await form(request)
    code = fields.get("code", "")
    as_person = fields.get("as_person", "").strip() or None
    if as_person is not None:
        try:
            validate_person_id(as_person)
        except InvalidPersonId as exc:
            return await admin(request, error=str(exc))
    try:
        approval = await approve_pairing(ctx.store, code, as_person, ctx.clock())
    except CodeRefused as exc:
        return await admin(request, error=str(exc))
    log.info("pairing_approved", identity=approval.identity, person=approval.person, by="web")
    state = "a new person" if approval.created else "an existing person"
    return await admin(
        request, notice=f"Approved: {approval.identity} is now {approval.person} ({state})."
    )


async def deny(request: web.Request) -> web.Response:
    ctx = context(request)
    code = (await form(request)).get("code", "")
    try:
        denied = await deny_pairing(ctx.store, code, ctx.clock())
    except CodeRefused as exc:
        return await admin(request, error=str(exc))
    log.info("pairing_denied", identity=denied.identity, by="web")
    return await admin(
        request, notice=f"Denied: {denied.identity} gets no answer (and no new code for 24 hours)."
    )


async def proposal(request: web.Request) -> web.Response:
    """POST /admin/proposals/{id}/{approve|reject}, as `kioku skills approve|reject`."""
    library = context(request).skills()
    proposal_id = request.match_info["id"]
    try:
        if request.match_info["decision"] == "approve":
            done, message = await library.approve(proposal_id, APPROVED_BY)
            notice = f"Approved {done.id} ({done.person}: {done.summary}). {message}"
        else:
            done = await library.reject(proposal_id)
            notice = f"Rejected {done.id} ({done.person}: {done.summary})."
    except SkillError as exc:
        return await admin(request, error=str(exc))
    log.info(
        "skill_proposal_decided",
        proposal=done.id,
        person=done.person,
        decision=request.match_info["decision"],
        by="web",
    )
    return await admin(request, notice=notice)


async def budget(request: web.Request) -> web.Response:
    """POST /admin/budgets/{person}: their own daily and monthly amounts, as
    `kioku people budget` sets them; a blank field lets the configured amount apply."""
    ctx = context(request)
    person = request.match_info["person"]
    fields = await form(request)
    try:
        validate_person_id(person)
        daily, monthly = (_amount(fields, period) for period in ("daily", "monthly"))
        await put_budget(ctx.store, person, Budget(daily, monthly), ctx.clock())
    except (ValueError, UnknownPerson) as exc:
        return await admin(request, error=f"The budget of {person} is unchanged: {exc}")
    log.info("budget_set", person=person, by="web")
    return await admin(request, notice=f"Budget of {person} saved; it applies from now on.")


def _amount(fields: dict[str, str], period: str) -> float | None:
    """The dollars of a budget field (blank: None); a ValueError naming the field else."""
    text = fields.get(period, "").strip()
    try:
        return parse_usd(text) if text else None
    except ValueError as exc:
        raise ValueError(f"{period}: {exc}") from None


def routes() -> list[web.RouteDef]:
    return [
        web.get("/admin", admin),
        web.post("/admin/pairing/approve", approve),
        web.post("/admin/pairing/deny", deny),
        web.post(r"/admin/proposals/{id}/{decision:approve|reject}", proposal),
        web.post("/admin/budgets/{person}", budget),
    ]
