"""A real Matrix homeserver for the tests: `matrix-synapse` from the package registry, on
127.0.0.1, with a throwaway SQLite database and a generated configuration.

Synapse is the reference homeserver; what kioku's Matrix adapter reads from it is what a
real server sends. One Synapse serves a whole test session (`synapse_server` in
tests/conftest.py), each test module registering its own users with the shared secret.
Where Synapse cannot be imported, the tests that need it skip, saying why.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import os
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import aiohttp

from tests.helpers.door_daemon import free_port

SERVER_NAME = "kioku.test"
SHARED_SECRET = "kioku-test-registration-secret"
STARTS_WITHIN = 120.0
# Every rate limit of Synapse's configuration, raised past anything a test does: a test
# of kioku's own handling of M_LIMIT_EXCEEDED asks for it through the admin API.
_NO_LIMIT = {"per_second": 1000, "burst_count": 1000}
_RATE_LIMITS = {
    "rc_message": _NO_LIMIT,
    "rc_registration": _NO_LIMIT,
    "rc_registration_token_validity": _NO_LIMIT,
    "rc_login": {"address": _NO_LIMIT, "account": _NO_LIMIT, "failed_attempts": _NO_LIMIT},
    "rc_joins": {"local": _NO_LIMIT, "remote": _NO_LIMIT},
    "rc_joins_per_room": _NO_LIMIT,
    "rc_invites": {"per_room": _NO_LIMIT, "per_user": _NO_LIMIT, "per_issuer": _NO_LIMIT},
    "rc_3pid_validation": _NO_LIMIT,
    "rc_admin_redaction": _NO_LIMIT,
    "rc_key_requests": _NO_LIMIT,
    "rc_media_create": _NO_LIMIT,
    "rc_delayed_event_mgmt": _NO_LIMIT,
    "rc_reports": _NO_LIMIT,
    "rc_room_creation": _NO_LIMIT,
}


def synapse_version() -> str | None:
    """Synapse's version if it can be imported here, else None."""
    try:
        from importlib.metadata import version

        import synapse  # noqa: F401
    except ImportError:
        return None
    return version("matrix-synapse")


def skip_reason() -> str | None:
    """Why the real-homeserver tests cannot run on this machine, or None if they can."""
    if synapse_version() is None:
        return (
            "matrix-synapse is not installed (pip install -e '.[dev]' installs it); "
            "the Matrix tests run against a real Synapse"
        )
    return None


def _config(folder: Path, port: int) -> dict[str, object]:
    return {
        "server_name": SERVER_NAME,
        "public_baseurl": f"http://127.0.0.1:{port}/",
        "pid_file": str(folder / "homeserver.pid"),
        "listeners": [
            {
                "port": port,
                "bind_addresses": ["127.0.0.1"],
                "type": "http",
                "tls": False,
                "x_forwarded": False,
                "resources": [{"names": ["client"], "compress": False}],
            }
        ],
        "database": {"name": "sqlite3", "args": {"database": str(folder / "homeserver.db")}},
        "media_store_path": str(folder / "media"),
        "signing_key_path": str(folder / "signing.key"),
        "registration_shared_secret": SHARED_SECRET,
        "enable_registration": False,
        "report_stats": False,
        "macaroon_secret_key": secrets.token_hex(16),
        "form_secret": secrets.token_hex(16),
        "trusted_key_servers": [],
        "suppress_key_server_warning": True,
        "presence": {"enabled": False},
        "url_preview_enabled": False,
        **_RATE_LIMITS,
    }


@dataclass(frozen=True)
class Account:
    """A user registered on the test homeserver, with a fresh login (its own device)."""

    user_id: str
    password: str
    access_token: str
    device_id: str


@dataclass
class Synapse:
    """A running homeserver: `url` is its client API base."""

    url: str
    folder: Path
    version: str
    started_in: float
    process: subprocess.Popen[bytes]

    async def register(self, localpart: str, *, admin: bool = False) -> Account:
        """A new user, through the shared-secret admin registration (no captcha, no email)."""
        password = secrets.token_urlsafe(12)
        endpoint = f"{self.url}/_synapse/admin/v1/register"
        async with aiohttp.ClientSession() as http:
            async with http.get(endpoint) as answer:
                nonce = (await answer.json())["nonce"]
            mac = hmac.new(SHARED_SECRET.encode(), digestmod=hashlib.sha1)
            role = b"admin" if admin else b"notadmin"
            mac.update(b"\x00".join([nonce.encode(), localpart.encode(), password.encode(), role]))
            body = {
                "nonce": nonce,
                "username": localpart,
                "password": password,
                "admin": admin,
                "mac": mac.hexdigest(),
            }
            async with http.post(endpoint, json=body) as answer:
                registered = await answer.json()
                if answer.status != 200:
                    raise RuntimeError(f"registering {localpart}: {registered}")
        return Account(
            registered["user_id"], password, registered["access_token"], registered["device_id"]
        )

    async def limit_messages(self, admin: Account, user_id: str, per_second: int) -> None:
        """Hold `user_id` to `per_second` messages (burst 1), through the admin API: a test
        of M_LIMIT_EXCEEDED; `per_second` 0 lifts the override again."""
        url = f"{self.url}/_synapse/admin/v1/users/{user_id}/override_ratelimit"
        headers = {"Authorization": f"Bearer {admin.access_token}"}
        async with aiohttp.ClientSession(headers=headers) as http:
            if per_second == 0:
                request = http.delete(url)
            else:
                request = http.post(url, json={"messages_per_second": per_second, "burst_count": 1})
            async with request as answer:
                assert answer.status == 200, await answer.text()

    def log_text(self) -> str:
        return (self.folder / "synapse.log").read_text("utf-8", "replace")


@contextmanager
def running_synapse(folder: Path) -> Iterator[Synapse]:
    """Synapse on a free port of 127.0.0.1, stopped (SIGTERM, then SIGKILL) at the end."""
    import yaml
    from signedjson.key import generate_signing_key, write_signing_keys

    version = synapse_version()
    assert version is not None, skip_reason()
    folder.mkdir(parents=True, exist_ok=True)
    port = free_port()
    with (folder / "signing.key").open("w") as keys:
        write_signing_keys(keys, [generate_signing_key("a_test")])
    config = folder / "homeserver.yaml"
    config.write_text(yaml.safe_dump(_config(folder, port)), "utf-8")
    started = time.monotonic()
    with (folder / "synapse.log").open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "synapse.app.homeserver", "--config-path", str(config)],
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=folder,
            env={**os.environ, "SYNAPSE_CACHE_FACTOR": "0.1"},
        )
    server = Synapse(f"http://127.0.0.1:{port}", folder, version, 0.0, process)
    try:
        asyncio.run(_wait_serving(server))
        server.started_in = time.monotonic() - started
        yield server
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


async def _wait_serving(server: Synapse) -> None:
    """Until the client API answers `/versions` (or Synapse exits: its log says why)."""
    deadline = time.monotonic() + STARTS_WITHIN
    async with aiohttp.ClientSession() as http:
        while time.monotonic() < deadline:
            if server.process.poll() is not None:
                raise RuntimeError(f"Synapse exited at start:\n{server.log_text()[-3000:]}")
            try:
                async with http.get(f"{server.url}/_matrix/client/versions") as answer:
                    if answer.status == 200:
                        return
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.1)
    raise RuntimeError(f"Synapse did not serve within {STARTS_WITHIN} s:\n{server.log_text()}")
