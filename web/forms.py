"""Reading a posted form: the one parser every POST of the page goes through.

The page's forms post `application/x-www-form-urlencoded` in UTF-8 (the browser's
default for a UTF-8 page). The body is at most `form_limit()` bytes (the application's
`client_max_size`: above it aiohttp answers 413 before reading on), then it is decoded
strictly — percent-escapes too, where aiohttp's own `post()` would turn invalid UTF-8
into U+FFFD and fail with a 500 on a raw invalid byte or an unknown charset. A form
kioku did not make gets a 4xx with a plain page saying what is wrong, and nothing is
changed: another content type (415), more than `MAX_FORM_FIELDS` fields, a field sent
twice, or a control character other than tab and newline (400).
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl

from aiohttp import web

from config.settings import Settings

BYTES_PER_CHAR = 12
"""A 4-byte UTF-8 character, percent-encoded: the most a form spends on one character."""
FORM_OVERHEAD = 16 * 1024
"""The other fields (the CSRF token, a name) beside the biggest one."""
MAX_FORM_FIELDS = 20
"""The page's biggest form has four fields."""
FORM_TYPE = "application/x-www-form-urlencoded"

_FORM = web.RequestKey("form", dict[str, str])
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


async def form(request: web.Request) -> dict[str, str]:
    """The posted form's fields, read once per request (the CSRF check reads it first)."""
    if _FORM in request:
        fields: dict[str, str] = request[_FORM]
        return fields
    fields = _parse(await _body(request))
    request[_FORM] = fields
    return fields


async def _body(request: web.Request) -> str:
    if not request.body_exists:
        return ""
    if request.content_type != FORM_TYPE or (request.charset or "utf-8").lower() != "utf-8":
        raise web.HTTPUnsupportedMediaType(
            text=f"kioku's forms are sent as {FORM_TYPE} in UTF-8; "
            f"this request is {request.headers.get('Content-Type', 'of no type')[:100]}. "
            "Nothing was changed."
        )
    body = await request.read()
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _refused(f"the form is not UTF-8 text (byte {exc.start} is not)") from None


def _parse(body: str) -> dict[str, str]:
    try:
        pairs = parse_qsl(
            body, keep_blank_values=True, errors="strict", max_num_fields=MAX_FORM_FIELDS
        )
    except UnicodeDecodeError:
        raise _refused("a field of the form is not UTF-8 text once unescaped") from None
    except ValueError:
        raise _refused(f"the form has more than {MAX_FORM_FIELDS} fields") from None
    fields: dict[str, str] = {}
    for name, value in pairs:
        shown = repr(name[:40])
        if name in fields:
            raise _refused(f"the form sends the field {shown} twice")
        if control := _CONTROL.search(name) or _CONTROL.search(value):
            raise _refused(
                f"the field {shown} holds the control character U+{ord(control.group()):04X}; "
                "only text, tabs and new lines are kept"
            )
        fields[name] = value
    return fields


def form_limit(settings: Settings) -> int:
    """The largest body a form may post: the largest SKILL.md the settings allow
    (`skills.max_skill_chars`, the biggest thing the page edits), percent-encoded."""
    return settings.skills.max_skill_chars * BYTES_PER_CHAR + FORM_OVERHEAD


def _refused(problem: str) -> web.HTTPBadRequest:
    return web.HTTPBadRequest(text=f"This form cannot be read: {problem}. Nothing was changed.")
