"""`kioku doctor` for the web page's links: a link kioku sends to a phone must open there,
which an address of this machine only (127.0.0.1) never does."""

from __future__ import annotations

from adapters.platforms import PLATFORMS
from config.settings import Settings
from gateway.doctor.finding import Finding
from web.links import LOCAL_PLATFORMS, base_url, local_only

FIX = (
    "set web.public_url to the address people open (https behind a proxy), or web.listen to "
    "this machine's home-network or Tailscale/WireGuard address; see docs/web.md, From a phone"
)


def check_web_links(settings: Settings) -> list[Finding]:
    """A problem when the page is on, a remote platform is configured, and the links'
    base opens only here (`/web` then refuses to send them); nothing when the page is off."""
    web = settings.web
    if not web.enabled:
        return []
    remote = [
        platform.name
        for platform in PLATFORMS
        if platform.name not in LOCAL_PLATFORMS and platform.configured(settings)
    ]
    url = base_url(web)
    why = local_only(web)
    if why is None:
        return [Finding("ok", "web page", f"sign-in links open at {url}")]
    if not remote:
        return [Finding("ok", "web page", f"at {url} ({why}; only the CLI is configured)")]
    return [
        Finding(
            "problem",
            "web page",
            f"sign-in links point at {url} ({why}): /web refuses to send them on "
            f"{', '.join(remote)}",
            FIX,
        )
    ]
