"""`kioku web login`: a one-time sign-in link to the web page, for the owner.

It writes the token to state.db directly (WAL lets it run beside the daemon), so it
works whether or not the daemon is running; the link works once the daemon serves.
"""

from __future__ import annotations

import time

import typer

from config.loggers import get_logger
from config.paths import ensure_home
from gateway.cli.common import fail, run_async, settings_or_exit
from memory.access.people import OWNER

log = get_logger("kioku.web")
app = typer.Typer(help="The web page where people read and correct what kioku remembers.")


@app.command("login")
def login() -> None:
    """Print a one-time sign-in link for the owner (valid 10 minutes)."""
    from config.logs import configure_from
    from memory.access.web_tokens import issue_web_token
    from memory.store.database import Store
    from web.links import login_url

    settings = settings_or_exit()
    configure_from(settings)
    if not settings.web.enabled:
        fail("The web page is off (web.enabled = false); turn it on and restart the daemon.")

    async def issue() -> str:
        async with await Store.open(ensure_home(settings.home) / "state.db") as store:
            return await issue_web_token(store, OWNER, time.time())

    token = run_async(issue())
    log.info("web_link_issued", person=OWNER, by="cli")
    typer.echo(f"{login_url(settings.web, token)}\nThis link signs you in once, within 10 minutes.")


def register(parent: typer.Typer) -> None:
    parent.add_typer(app, name="web")
