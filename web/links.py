"""Where the web page is reached: the address printed in sign-in links."""

from __future__ import annotations

from config.settings import WebSettings


def base_url(settings: WebSettings) -> str:
    """`public_url` when set (behind a proxy), else `http://<listen>`; no trailing slash."""
    return (settings.public_url or f"http://{settings.listen}").rstrip("/")


def login_url(settings: WebSettings, token: str) -> str:
    return f"{base_url(settings)}/login/{token}"


def split_listen(listen: str) -> tuple[str, int]:
    """`host:port` (or `[::1]:port`) as (host, port); `ValueError` saying what is wrong."""
    host, sep, port = listen.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"web.listen must be host:port, e.g. 127.0.0.1:8765 (got {listen!r})")
    return host.strip("[]"), int(port)
