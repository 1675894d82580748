"""Where the web page is reached: the address printed in sign-in links, and whether that
address can open anywhere but on the machine kioku runs on."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from config.settings import WebSettings

# Platforms whose people sit at the machine itself: a link to 127.0.0.1 opens there.
LOCAL_PLATFORMS = frozenset({"cli"})


def base_url(settings: WebSettings) -> str:
    """`public_url` when set (behind a proxy), else `http://<listen>`; no trailing slash."""
    return (settings.public_url or f"http://{settings.listen}").rstrip("/")


def login_url(settings: WebSettings, token: str) -> str:
    return f"{base_url(settings)}/login/{token}"


def local_only(settings: WebSettings) -> str | None:
    """Why a link on `base_url` cannot open on another device (a phone), or None when it
    can: a loopback host opens only on this machine, and a wildcard one (0.0.0.0, ::) is
    where kioku listens, not an address anyone can open."""
    host = (urlsplit(base_url(settings)).hostname or "").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return f"{host} is this machine only"
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return None
    if address.is_loopback:
        return f"{host} is this machine only"
    if address.is_unspecified:
        return f"{host} means every address of this machine, and no device can open it"
    return None


def split_listen(listen: str) -> tuple[str, int]:
    """`host:port` (or `[::1]:port`) as (host, port); `ValueError` saying what is wrong."""
    host, sep, port = listen.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"web.listen must be host:port, e.g. 127.0.0.1:8765 (got {listen!r})")
    return host.strip("[]"), int(port)
