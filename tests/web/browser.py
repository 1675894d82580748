"""A signed-in browser for the web tests: one HTTP client, its session cookie and CSRF token."""

from __future__ import annotations

import re

import aiohttp

from tests.helpers.web_rig import WebRig

CSRF = re.compile(r'name="csrf" value="([^"]+)"')
PLAN = re.compile(r'name="plan" value="([^"]*)"')
"""The fingerprint a deletion's confirmation page carries (HTML-escaped)."""


class Browser:
    """An HTTP client holding one signed-in session and its CSRF token."""

    def __init__(self, rig: WebRig, http: aiohttp.ClientSession) -> None:
        self.rig, self.http, self.csrf = rig, http, ""

    async def sign_in(self, person: str) -> Browser:
        async with self.http.post(await self.rig.link(person)) as response:
            assert response.status == 200
        self.csrf = CSRF.search(await self.get("/")).group(1)  # type: ignore[union-attr]
        return self

    async def get(self, path: str, status: int = 200) -> str:
        async with self.http.get(self.rig.url + path) as response:
            assert response.status == status, await response.text()
            return await response.text()

    async def post(self, path: str, status: int = 200, csrf: str | None = None, **data: str) -> str:
        form = {"csrf": self.csrf if csrf is None else csrf, **data}
        async with self.http.post(self.rig.url + path, data=form) as response:
            assert response.status == status, await response.text()
            return await response.text()

    async def redirected(self, path: str, **data: str) -> str:
        """POST a form that must answer 303; the address it leads to."""
        form = {"csrf": self.csrf, **data}
        async with self.http.post(self.rig.url + path, data=form, allow_redirects=False) as got:
            assert got.status == 303, await got.text()
            return got.headers["Location"]
