"""Signing in without passwords, and what guards every request afterwards.

`/web` in a chat (or `kioku web login`) gives a one-time link. Opening it shows a
button; pressing it (a POST, so link previewers that fetch URLs cannot use it up)
spends the token and sets a session cookie: HttpOnly, SameSite=Strict, Secure when
the page is reached over https. Every POST must carry the session's CSRF token;
`/admin` is the owner's. Pages never show another person's data because every
handler reads the person from the session, never from the URL.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable

import structlog
from aiohttp import web

from memory.access.people import OWNER
from memory.access.web_tokens import (
    LinkRefused,
    check_web_token,
    end_web_session,
    redeem_web_token,
    web_session,
)
from web.context import SESSION, context, refusal, render
from web.forms import form

log = structlog.get_logger("kioku.web")

COOKIE = "kioku_session"
PUBLIC = ("/login/",)
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
SIGN_IN_HINT = (
    "You are not signed in. Send /web to kioku in a direct message (the owner can also run "
    "`kioku web login`) and open the link it gives you."
)
CSRF_REFUSED = (
    "This form did not come from your current page (its security token is missing or out "
    "of date). Nothing was changed: reload the page and try again."
)
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; "
        "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


@web.middleware
async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Signed-in session, CSRF on every POST, owner-only admin pages, security headers
    (on refusals raised as exceptions too: a 404, a 413, an unreadable form)."""
    try:
        response = await _guarded(request, handler)
    except web.HTTPException as refused:
        refused.headers.update(SECURITY_HEADERS)
        raise
    for name, value in SECURITY_HEADERS.items():
        response.headers.setdefault(name, value)  # a download sets a stricter CSP of its own
    return response


async def _guarded(request: web.Request, handler: Handler) -> web.StreamResponse:
    if request.path.startswith(PUBLIC):
        return await handler(request)
    ctx = context(request)
    cookie = request.cookies.get(COOKIE)
    signed_in = await web_session(ctx.store, cookie, ctx.clock()) if cookie else None
    if signed_in is None:
        return refusal(request, 401, SIGN_IN_HINT)
    request[SESSION] = signed_in
    if request.method == "POST":
        sent = (await form(request)).get("csrf")
        if not isinstance(sent, str) or not secrets.compare_digest(sent, signed_in.csrf):
            log.warning("web_csrf_refused", person=signed_in.person, path=request.path)
            return refusal(request, 403, CSRF_REFUSED)
    if request.path.startswith("/admin") and signed_in.person != OWNER:
        log.warning("web_admin_refused", person=signed_in.person, path=request.path)
        return refusal(request, 403, "This page is the owner's.")
    return await handler(request)


async def login_page(request: web.Request) -> web.Response:
    """The link's landing page: a button, so only a person's click spends the token."""
    ctx = context(request)
    token = request.match_info["token"]
    try:
        who = await check_web_token(ctx.store, token, ctx.clock())
    except LinkRefused as exc:
        return refusal(request, 403, str(exc))
    return render(request, "login.html", who=who)


async def login(request: web.Request) -> web.StreamResponse:
    ctx = context(request)
    token = request.match_info["token"]
    now = ctx.clock()
    try:
        session_id, signed_in = await redeem_web_token(ctx.store, token, now)
    except LinkRefused as exc:
        log.warning("web_link_refused", reason=str(exc).split(";")[0])
        return refusal(request, 403, str(exc))
    log.info("web_signed_in", person=signed_in.person)
    response = web.Response(status=303, headers={"Location": "/"})
    response.set_cookie(
        COOKIE,
        session_id,
        max_age=int(signed_in.expires_at - now),
        path="/",
        httponly=True,
        samesite="Strict",
        secure=is_https(request),
    )
    return response


async def logout(request: web.Request) -> web.StreamResponse:
    ctx = context(request)
    cookie = request.cookies.get(COOKIE, "")
    await end_web_session(ctx.store, cookie)
    log.info("web_signed_out", person=request.pop(SESSION).person)
    response = refusal(request, 200, "You are signed out.")
    response.del_cookie(COOKIE, path="/")
    return response


def is_https(request: web.Request) -> bool:
    """Served over https: directly, behind a proxy that says so (`X-Forwarded-Proto`, which
    Caddy sends, or RFC 7239 `Forwarded`), or because the links point at https (a proxy
    that sends neither). Trusting the headers is safe: they can only make the cookie
    stricter, for the client that sent them."""
    public = context(request).settings.web.public_url or ""
    proto = request.headers.get("X-Forwarded-Proto", "").split(",")[0].strip().lower()
    first = request.headers.get("Forwarded", "").split(",")[0]
    pairs = (pair.strip().lower().partition("=") for pair in first.split(";"))
    forwarded = {name: value.strip('"') for name, _, value in pairs}
    return (
        request.secure
        or "https" in (proto, forwarded.get("proto"))
        or public.lower().startswith("https://")
    )


def routes() -> list[web.RouteDef]:
    return [
        web.get("/login/{token}", login_page),
        web.post("/login/{token}", login),
        web.post("/logout", logout),
    ]
