"""The web page's door: hostile paths, forms, headers and content types, sent as raw
HTTP to the page a real `kioku serve` serves (one daemon for the module, the owner
signed in through `kioku web login`).

Each gets a 4xx with a plain page (never a 500, never a traceback in the page or the
log, nothing logged at ERROR), nothing stored changes, and the next good request is
answered.
"""

from __future__ import annotations

import asyncio
import os
import re
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from subprocess import PIPE
from urllib.parse import quote_from_bytes

import aiohttp
import pytest
import pytest_asyncio

from tests.helpers.daemon import Daemon, module_daemon, stored_texts
from tests.helpers.hostile import BIG, ITEMS, unhandled
from tests.helpers.paths import KIOKU
from web.app import MAX_HEADER_FIELD, MAX_HEADERS, MAX_REQUEST_LINE
from web.auth import COOKIE
from web.forms import MAX_FORM_FIELDS

pytestmark = pytest.mark.asyncio(loop_scope="module")

CSRF = re.compile(r'name="csrf" value="([^"]+)"')
FORM = b"application/x-www-form-urlencoded"


@dataclass
class Page:
    daemon: Daemon
    home: Path
    port: int
    cookie: str
    csrf: str

    async def raw(self, request: bytes) -> tuple[int, bytes, bytes]:
        """Send bytes as they are; (status, headers, body) of the answer."""
        reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
        try:
            writer.write(request)
            answer = await asyncio.wait_for(reader.read(), 30)
        finally:
            writer.close()
        head, _, body = answer.partition(b"\r\n\r\n")
        return int(head.split(b" ", 2)[1]), head, body

    def request(
        self, method: str, path: bytes, headers: bytes = b"", body: bytes | None = None
    ) -> bytes:
        """A request as bytes; a body is sent with its Content-Length (unless None)."""
        length = b"" if body is None else b"Content-Length: %d\r\n" % len(body)
        return (
            f"{method} ".encode() + path + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
            + f"Cookie: {COOKIE}={self.cookie}\r\n".encode() + length + headers + b"\r\n"
            + (body or b"")
        )  # fmt: skip

    def post(self, path: bytes, body: bytes, content_type: bytes = FORM) -> bytes:
        return self.request("POST", path, b"Content-Type: " + content_type + b"\r\n", body)

    def signed(self, fields: bytes) -> bytes:
        return f"csrf={self.csrf}&".encode() + fields

    def log(self) -> str:
        return self.daemon.log.read_text()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def page(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Page]:
    port = free_port()
    listen = {"KIOKU_WEB__ENABLED": "true", "KIOKU_WEB__LISTEN": f"127.0.0.1:{port}"}
    async with module_daemon(tmp_path_factory.mktemp("doors-web"), **listen) as daemon:
        login = await asyncio.create_subprocess_exec(
            str(KIOKU), "web", "login", stdout=PIPE, stderr=PIPE, env={**os.environ, **listen}
        )
        out, err = await asyncio.wait_for(login.communicate(), 60)
        assert login.returncode == 0, err.decode()
        async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
            async with http.post(out.decode().split()[0]) as signed_in:
                assert signed_in.status == 200
            async with http.get(f"http://127.0.0.1:{port}/") as home_page:
                csrf = CSRF.search(await home_page.text())
            cookie = next(c.value for c in http.cookie_jar if c.key == COOKIE)
        assert csrf is not None
        yield Page(daemon, daemon.home, port, cookie, csrf.group(1))


def stored(home: Path) -> tuple[object, ...]:
    """What the owner has: the turns in state.db and every file of every person."""
    files = {str(f): f.read_bytes() for f in sorted((home / "people").rglob("*")) if f.is_file()}
    return stored_texts(home), files


@pytest_asyncio.fixture(loop_scope="module")
async def held(page: Page) -> AsyncIterator[Page]:
    """The page, checked after the test: nothing stored changed, nothing logged at ERROR
    or unhandled, and a good request is still answered."""
    before = stored(page.home)
    yield page
    assert stored(page.home) == before
    log = page.log()
    assert unhandled(log) == []
    assert [line for line in log.splitlines() if '"level": "error"' in line] == []
    status, _, body = await page.raw(page.request("GET", b"/notes"))
    assert status == 200 and b"MEMORY.md" in body


def check_plain_refusal(answer: tuple[int, bytes, bytes], *expected: int) -> None:
    status, head, body = answer
    assert status in expected, (status, body[:300])
    assert b"Traceback" not in body and b"Error handling request" not in body
    assert re.search(rb"(?i)content-type: text/(plain|html)", head)
    if status != 400:  # the HTTP parser's own refusals come before the page's headers
        assert b"X-Content-Type-Options: nosniff" in head


PATHS = {
    "nul": (b"/skills/a\x00b", 400),
    "nul-escaped": (b"/skills/a%00b", 404),
    "over-the-request-line": (b"/skills/" + b"a" * MAX_REQUEST_LINE, 400),
    "a-long-name": (b"/skills/" + b"a" * 5000, 404),
    "invalid-percent": (b"/skills/%zz%e9%", 404),
    "percent-invalid-utf8": (b"/skills/%ff%fe%ed%a0%80", 404),
    "dot-dot": (b"/skills/../../config.toml", 404),
    "dot-dot-escaped": (b"/skills/%2e%2e%2f%2e%2e%2fconfig.toml", 404),
    "a-session-past-64-bits": (b"/sessions/99999999999999999999", 404),
    "a-session-in-arabic-digits": (b"/sessions/%D9%A1", 404),
    "a-session-not-a-number": (b"/sessions/1e3", 404),
    "a-link-with-nul": (b"/login/%00", 403),
    "a-link-too-long": (b"/login/" + b"x" * 7000, 403),
    "a-link-with-a-surrogate": (b"/login/%ed%a0%80", 403),
    "raw-utf8-in-the-path": ("/skills/京都".encode(), 400),
}


@pytest.mark.parametrize("name", PATHS)
async def test_a_hostile_path_gets_a_plain_4xx(held: Page, name: str) -> None:
    path, status = PATHS[name]
    check_plain_refusal(await held.raw(held.request("GET", path)), status)
    posted = held.post(path, held.signed(b"content=x"))
    check_plain_refusal(await held.raw(posted), status, 405)  # 405: a page that takes no form


@pytest.mark.parametrize("name", ITEMS)
async def test_each_corpus_item_as_a_form_field_gets_a_plain_4xx(held: Page, name: str) -> None:
    """As the pairing code the owner approves: no code matches, so nothing may change."""
    field = quote_from_bytes(ITEMS[name]).encode()
    body = held.signed(b"code=" + field + b"&as_person=")
    check_plain_refusal(await held.raw(held.post(b"/admin/pairing/approve", body)), 400, 413)


@pytest.mark.parametrize("name", ITEMS)
async def test_each_corpus_item_as_the_whole_form_body_gets_a_plain_4xx(
    held: Page, name: str
) -> None:
    answer = await held.raw(held.post(b"/notes/user/add", ITEMS[name]))
    check_plain_refusal(answer, 400, 403, 413)


FORMS = {
    "invalid-utf8": (b"content=\xff\xfe", FORM, 400),
    "invalid-utf8-escaped": (b"content=%ff%fe", FORM, 400),
    "a-surrogate-escaped": (b"content=%ed%a0%80", FORM, 400),
    "nul": (b"content=a%00b", FORM, 400),
    "a-control-in-a-name": (b"con%1btent=a", FORM, 400),
    "a-field-twice": (b"content=a&content=b", FORM, 400),
    "too-many-fields": (b"&".join(b"f%d=1" % n for n in range(MAX_FORM_FIELDS)), FORM, 400),
    "ten-mb": (b"content=" + b"x" * BIG, FORM, 413),
    "json": (b'{"content": "a"}', b"application/json", 415),
    "multipart": (
        b'--z\r\nContent-Disposition: form-data; name="content"\r\n\r\na\r\n--z--\r\n',
        b"multipart/form-data; boundary=z",
        415,
    ),
    "multipart-without-a-boundary": (b"content=a", b"multipart/form-data", 415),
    "latin-1": (b"content=%e9", FORM + b"; charset=latin-1", 415),
    "an-unknown-charset": (b"content=a", FORM + b"; charset=bogus", 415),
}


@pytest.mark.parametrize("name", FORMS)
async def test_a_hostile_form_with_a_good_csrf_token_gets_a_plain_4xx(
    held: Page, name: str
) -> None:
    body, content_type, status = FORMS[name]
    for path in (b"/notes/user/add", b"/admin/pairing/approve", b"/logout"):
        answer = await held.raw(held.post(path, held.signed(body), content_type))
        check_plain_refusal(answer, status)


def chunked(body: bytes) -> bytes:
    return b"".join(b"%x\r\n%s\r\n" % (len(body[i : i + 65536]), body[i : i + 65536])
                    for i in range(0, len(body), 65536)) + b"0\r\n\r\n"  # fmt: skip


HEADERS = {
    "a-huge-header": (b"X-Big: " + b"a" * (MAX_HEADER_FIELD + 1) + b"\r\n", 400),
    "too-many-headers": (b"".join(b"X-%d: a\r\n" % n for n in range(MAX_HEADERS + 1)), 400),
    "a-huge-cookie": (b"Cookie: a=" + b"b" * (MAX_HEADER_FIELD + 1) + b"\r\n", 400),
    "a-nul-in-a-cookie": (b"Cookie: kioku_session=\x00\r\n", 400),
    "a-bad-content-length": (b"Content-Length: -5\r\n", 400),
    "two-content-lengths": (b"Content-Length: 1\r\nContent-Length: 2\r\n", 400),
    "a-bad-transfer-encoding": (b"Transfer-Encoding: gzip, chunked, x\r\n", 400),
}


@pytest.mark.parametrize("name", HEADERS)
async def test_hostile_headers_get_a_plain_400(held: Page, name: str) -> None:
    headers, status = HEADERS[name]
    check_plain_refusal(await held.raw(held.request("GET", b"/", headers)), status)


async def test_a_chunked_body_past_the_limit_gets_413(held: Page) -> None:
    body = chunked(held.signed(b"content=" + b"x" * BIG))
    headers = b"Content-Type: " + FORM + b"\r\nTransfer-Encoding: chunked\r\n"
    request = held.request("POST", b"/notes/user/add", headers) + body
    check_plain_refusal(await held.raw(request), 413)


async def test_not_http_at_all_gets_a_plain_400(held: Page) -> None:
    check_plain_refusal(
        await held.raw(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n"), 400
    )


async def test_a_cookie_that_is_no_session_is_signed_out(held: Page) -> None:
    request = held.request("GET", b"/notes").replace(
        f"{COOKIE}={held.cookie}".encode(), b"kioku_session=%ff%ed%a0%80; ;;=; =x"
    )
    check_plain_refusal(await held.raw(request), 401)


async def test_a_good_form_is_still_taken(page: Page) -> None:
    body = page.signed(b"content=" + quote_from_bytes("京都の抹茶が好き".encode()).encode())
    status, _, answer = await page.raw(page.post(b"/notes/user/add", body))
    assert status == 200, answer[:300]
    notes = (page.home / "people" / "owner" / "USER.md").read_text()
    assert "京都の抹茶が好き" in notes
