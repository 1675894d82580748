"""`kioku pairing` and `kioku people` through the real entry point: output and exit codes."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

from adapters.base import Inbound
from config.settings import Settings
from gateway.identity import Identities
from memory.access.identities import ensure_person, link_identity, person_for
from memory.store.database import Store
from memory.store.records import Conversation, NewMessage

T = TypeVar("T")
Kioku = Callable[..., subprocess.CompletedProcess[str]]


def with_store(home: Path, work: Callable[[Store], Awaitable[T]]) -> T:
    async def run() -> T:
        async with await Store.open(home / "state.db") as store:
            return await work(store)

    return asyncio.run(run())


def stranger_writes(home: Path, sender: str, name: str | None = None) -> str:
    """A stranger's DM under the default pairing policy; returns their code."""

    async def work(store: Store) -> str:
        ids = Identities(store, Settings())
        reply = (
            await ids.admit(Inbound("telegram", sender, sender, "hi", True, sender_name=name))
        ).reply
        assert reply is not None
        return reply.split("Your pairing code: ", 1)[1].split()[0]

    return with_store(home, work)


def person_of(home: Path, identity: str) -> str | None:
    return with_store(home, lambda store: person_for(store, identity))


def test_pairing_list_json_gives_code_platform_identity_name_and_expiry(
    kioku: Kioku, home: Path
) -> None:
    code = stranger_writes(home, "telegram:5", "Eve")
    done = kioku("pairing", "list", "--json")
    assert done.returncode == 0, done.stderr
    [request] = json.loads(done.stdout)
    assert set(request) == {"code", "platform", "identity", "display_name", "expires_at"}
    assert (request["code"], request["platform"], request["identity"]) == (
        code,
        "telegram",
        "telegram:5",
    )
    assert request["display_name"] == "Eve" and request["expires_at"].endswith("+00:00")


def test_pairing_approve_in_lower_case_creates_the_person(kioku: Kioku, home: Path) -> None:
    code = stranger_writes(home, "telegram:5", "Eve")
    done = kioku("pairing", "approve", code.lower())
    assert done.returncode == 0, done.stderr
    assert "telegram:5 is now eve (a new person)" in done.stdout
    assert person_of(home, "telegram:5") == "eve"
    assert json.loads(kioku("pairing", "list", "--json").stdout) == []


def test_pairing_approve_as_links_to_an_existing_person(kioku: Kioku, home: Path) -> None:
    with_store(home, lambda store: ensure_person(store, "alice"))
    code = stranger_writes(home, "telegram:5")
    done = kioku("pairing", "approve", code, "--as", "alice")
    assert done.returncode == 0, done.stderr
    assert "an existing person" in done.stdout
    assert person_of(home, "telegram:5") == "alice"


def test_pairing_approve_wrong_code_exits_1_with_the_reason(kioku: Kioku) -> None:
    done = kioku("pairing", "approve", "ABCDEFGH")
    assert done.returncode == 1
    assert "no pending pairing request has the code 'ABCDEFGH'" in done.stderr


def test_pairing_deny_removes_the_request(kioku: Kioku, home: Path) -> None:
    code = stranger_writes(home, "telegram:5")
    done = kioku("pairing", "deny", code)
    assert done.returncode == 0, done.stderr
    assert "Denied: telegram:5" in done.stdout
    assert kioku("pairing", "approve", code).returncode == 1


def test_people_list_json_gives_persons_with_identities(kioku: Kioku, home: Path) -> None:
    async def seed(store: Store) -> None:
        await ensure_person(store, "alice", "Alice")
        await link_identity(store, "telegram:7", "alice")
        await link_identity(store, "discord:8", "alice")

    with_store(home, seed)
    done = kioku("people", "list", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [
        {"person": "owner", "display_name": None, "identities": []},
        {"person": "alice", "display_name": "Alice", "identities": ["discord:8", "telegram:7"]},
    ]


def test_people_link_creates_the_person_and_moves_the_identity(kioku: Kioku, home: Path) -> None:
    async def seed(store: Store) -> None:
        await ensure_person(store, "bob")
        await link_identity(store, "discord:8", "bob")

    with_store(home, seed)
    done = kioku("people", "link", "discord:8", "--to", "alice")
    assert done.returncode == 0, done.stderr
    assert "Linked discord:8 to alice (a new person)." in done.stdout
    assert "It belonged to bob" in done.stdout
    assert person_of(home, "discord:8") == "alice"


def test_people_link_rejects_a_malformed_identity_as_usage_error(kioku: Kioku) -> None:
    done = kioku("people", "link", "telegram123", "--to", "alice")
    assert done.returncode == 2
    assert "platform:id" in done.stderr


def test_people_unlink_refuses_the_owners_own_cli_identity(kioku: Kioku, home: Path) -> None:
    identity = f"cli:{os.getuid()}"
    with_store(home, lambda store: link_identity(store, identity, "owner"))
    done = kioku("people", "unlink", identity)
    assert done.returncode == 1
    assert "owner's own CLI account" in done.stderr
    assert person_of(home, identity) == "owner"


def test_people_unlink_makes_the_identity_a_stranger(kioku: Kioku, home: Path) -> None:
    async def seed(store: Store) -> None:
        await ensure_person(store, "alice")
        await link_identity(store, "telegram:7", "alice")

    with_store(home, seed)
    done = kioku("people", "unlink", "telegram:7")
    assert done.returncode == 0, done.stderr
    assert person_of(home, "telegram:7") is None
    assert kioku("people", "unlink", "telegram:7").returncode == 1


def test_people_forget_asks_and_keeps_everything_on_no(kioku: Kioku, home: Path) -> None:
    async def seed(store: Store) -> None:
        await ensure_person(store, "alice")
        await link_identity(store, "telegram:7", "alice")
        session = await store.open_session(Conversation("telegram", "7", "dm", "alice"))
        await store.append(session.id, NewMessage(role="user", content="hi", speaker="alice"))

    with_store(home, seed)
    done = kioku("people", "forget", "alice", input="n\n")
    assert done.returncode == 1
    assert "direct-message sessions: 1 (1 turns)" in done.stdout
    assert "Nothing was removed." in done.stderr
    assert person_of(home, "telegram:7") == "alice"
    done = kioku("people", "forget", "alice", input="y\n")
    assert done.returncode == 0, done.stderr
    assert "Forgot alice." in done.stdout
    assert person_of(home, "telegram:7") is None


def test_people_forget_yes_skips_the_question_and_refuses_the_owner(
    kioku: Kioku, home: Path
) -> None:
    (home / "people" / "carol").mkdir(parents=True)
    done = kioku("people", "forget", "carol", "--yes")
    assert done.returncode == 0, done.stderr
    assert not (home / "people" / "carol").exists()
    done = kioku("people", "forget", "owner", "--yes")
    assert done.returncode == 1 and "owner cannot be forgotten" in done.stderr


def test_people_tz_sets_shows_and_clears_a_persons_zone(kioku: Kioku, home: Path) -> None:
    with_store(home, lambda store: ensure_person(store, "alice"))
    done = kioku("people", "tz", "alice", "Asia/Tokyo")
    assert done.returncode == 0, done.stderr
    assert "alice's time zone is now Asia/Tokyo (it is " in done.stdout
    assert "JST there" in done.stdout
    assert "is Asia/Tokyo" in kioku("people", "tz", "alice").stdout
    done = kioku(
        "people",
        "tz",
        "alice",
        "--clear",
        env={"KIOKU_SCHEDULE__DEFAULT_TIMEZONE": "Europe/Berlin"},
    )
    assert done.returncode == 0, done.stderr
    assert "no time zone of their own now: Europe/Berlin applies, from schedule" in done.stdout


def test_people_tz_refuses_an_unknown_zone_or_person(kioku: Kioku, home: Path) -> None:
    with_store(home, lambda store: ensure_person(store, "alice"))
    done = kioku("people", "tz", "alice", "Mars/Olympus")
    assert done.returncode == 1
    assert "is not a time zone; send an IANA name such as Asia/Tokyo" in done.stderr
    done = kioku("people", "tz", "nobody")
    assert done.returncode == 1 and "no person 'nobody'" in done.stderr
    done = kioku("people", "tz", "alice", "Asia/Tokyo", "--clear")
    assert done.returncode == 2
