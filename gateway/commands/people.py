"""/whoami, /link and /web: who kioku knows the sender as, linking another of their
accounts, and a sign-in link to the web page. /link and /web refuse in a group: a code
or a sign-in link must not be read by others.
"""

from __future__ import annotations

import time

import structlog

from gateway.commands.context import Context
from memory.access.identities import get_person
from memory.access.web_tokens import issue_web_token
from web.links import LOCAL_PLATFORMS, base_url, local_only, login_url

log = structlog.get_logger("kioku.commands")

LINK_IN_GROUP = (
    "Send /link to me in a direct message: a code shown here could be used by anyone in this chat."
)
WEB_IN_GROUP = "A sign-in link must not be seen by others: send /web to me in a direct message."
WEB_LOCAL_ONLY = (
    "I can't send you a sign-in link that would open: the web page's address is {url}, and "
    "{why}. The owner should set web.public_url to the address your phone opens (e.g. "
    "https://kioku.example.org behind an https proxy), or web.listen to this machine's "
    "home-network or Tailscale/WireGuard address (e.g. 192.168.1.20:8765), then restart "
    "kioku. On the machine itself, `kioku web login` gives a link now."
)


async def whoami(context: Context[str]) -> str:
    person = context.person
    known = await get_person(context.store, person)
    name = f" ({known.display_name})" if known and known.display_name else ""
    head = f"You are {person}{name}."
    if context.in_group:
        return f"{head} Send /whoami in a direct message to see your linked accounts."
    identities = await context.identities.identities_of(person)
    return f"{head}\nLinked accounts: {', '.join(identities) or 'none'}."


async def link(context: Context[str | None]) -> str:
    """Open to an unknown sender too: `/link CODE` is how they become someone kioku knows."""
    return await context.identities.link_command(context.inbound, context.person, context.argument)


async def web(context: Context[str]) -> str:
    settings = context.settings.web
    if not settings.enabled:
        return "The web page is off on this kioku (web.enabled = false)."
    why = local_only(settings)
    if why is not None and context.inbound.platform not in LOCAL_PLATFORMS:
        log.warning("web_link_refused_local_only", platform=context.inbound.platform)
        return WEB_LOCAL_ONLY.format(url=base_url(settings), why=why)
    person = context.person
    token = await issue_web_token(context.store, person, time.time())
    log.info("web_link_issued", person=person, by="chat")
    return f"Your sign-in link (it works once, within 10 minutes):\n{login_url(settings, token)}"
