"""Who is who: the owner, DM policies, groups and `/link`, against a real store."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adapters.base import Inbound
from config.load import ConfigError
from config.settings import Settings
from gateway.identity import Identities, link_argument, validate_identity
from memory.access import codes
from memory.access.identities import ensure_person, get_person, link_identity, person_for
from memory.store.database import Store
from memory.store.records import Conversation, NewMessage


class Clock:
    def __init__(self) -> None:
        self.now = 1_700_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
async def store(home: Path) -> AsyncIterator[Store]:
    async with await Store.open(home / "state.db") as opened:
        yield opened


@pytest.fixture
def clock() -> Clock:
    return Clock()


def make(store: Store, clock: Clock, **config: Any) -> Identities:
    return Identities(store, Settings(**config), clock=clock)


def dm(sender: str, text: str = "hello", name: str | None = None) -> Inbound:
    platform = sender.split(":", 1)[0]
    return Inbound(platform, sender, sender, text, is_direct=True, sender_name=name)


def group(sender: str, text: str = "hi @kioku") -> Inbound:
    platform = sender.split(":", 1)[0]
    return Inbound(platform, "g1", sender, text, is_direct=False, addressed=True)


async def test_owner_holds_the_daemon_cli_identity_and_configured_ones(
    store: Store, clock: Clock
) -> None:
    ids = make(store, clock, owner={"identities": ["telegram:42"]})
    await ids.ensure_owner(1000)
    assert await ids.identities_of("owner") == ["cli:1000", "telegram:42"]
    admission = await ids.admit(dm("telegram:42"))
    assert (admission.person, admission.admitted) == ("owner", True)


async def test_owner_identity_added_by_reload_is_owner_at_once(store: Store, clock: Clock) -> None:
    ids = make(store, clock)
    await ids.ensure_owner(1000)
    ids.reload(Settings(owner={"identities": ["discord:123456789012345"]}))
    admission = await ids.admit(dm("discord:123456789012345"))
    assert admission.person == "owner"
    assert "discord:123456789012345" in await ids.identities_of("owner")


@pytest.mark.parametrize("bad", ["telegram", "telgram:1", "telegram:", "telegram: 1", ":1"])
def test_invalid_owner_identity_is_a_config_error_naming_it(
    store: Store, clock: Clock, bad: str
) -> None:
    with pytest.raises(ConfigError, match=r"owner\.identities") as raised:
        make(store, clock, owner={"identities": [bad]})
    assert repr(bad) in str(raised.value)


def test_allow_entry_of_another_platform_is_a_config_error(store: Store, clock: Clock) -> None:
    with pytest.raises(ConfigError, match=r"telegram\.allow: 'discord:1' is not a telegram"):
        make(store, clock, telegram={"allow": ["discord:1"]})


def test_failed_reload_keeps_the_previous_settings(store: Store, clock: Clock) -> None:
    ids = make(store, clock, owner={"identities": ["telegram:42"]})
    with pytest.raises(ConfigError):
        ids.reload(Settings(owner={"identities": ["nonsense"]}))
    assert ids._owner_identities == {"telegram:42"}


async def test_owner_is_admitted_even_when_the_platform_is_disabled(
    store: Store, clock: Clock
) -> None:
    ids = make(store, clock, cli={"dm_policy": "disabled"})
    await ids.ensure_owner(1000)
    assert (await ids.admit(dm("cli:1000"))).admitted


async def test_disabled_platform_ignores_known_people_too(store: Store, clock: Clock) -> None:
    ids = make(store, clock, telegram={"dm_policy": "disabled"})
    await ensure_person(store, "alice")
    await link_identity(store, "telegram:7", "alice")
    assert await ids.admit(dm("telegram:7")) == (await ids.admit(dm("telegram:8")))
    assert not (await ids.admit(dm("telegram:7"))).admitted
    assert (await ids.admit(dm("telegram:7"))).reply is None


async def test_linked_identity_is_admitted_as_its_person(store: Store, clock: Clock) -> None:
    ids = make(store, clock)
    await ensure_person(store, "alice")
    await link_identity(store, "slack:T1:U1", "alice")
    admission = await ids.admit(dm("slack:T1:U1"))
    assert (admission.person, admission.admitted, admission.reply) == ("alice", True, None)


async def test_allowlist_is_silent_for_strangers(store: Store, clock: Clock) -> None:
    ids = make(store, clock, telegram={"dm_policy": "allowlist"})
    admission = await ids.admit(dm("telegram:9"))
    assert (admission.admitted, admission.reply) == (False, None)
    assert await person_for(store, "telegram:9") is None


async def test_allowed_identity_gets_a_person_named_after_it(store: Store, clock: Clock) -> None:
    ids = make(store, clock, telegram={"dm_policy": "allowlist", "allow": ["telegram:9"]})
    admission = await ids.admit(dm("telegram:9", name="Bo"))
    assert (admission.person, admission.admitted) == ("telegram-9", True)
    person = await get_person(store, "telegram-9")
    assert person is not None and person.display_name == "Bo"


async def test_open_policy_admits_strangers_each_as_their_own_person(
    store: Store, clock: Clock
) -> None:
    ids = make(store, clock, discord={"dm_policy": "open"})
    first = await ids.admit(dm("discord:1"))
    second = await ids.admit(dm("discord:2"))
    again = await ids.admit(dm("discord:1"))
    assert first.person == again.person == "discord-1"
    assert second.person == "discord-2"


async def test_derived_person_id_avoids_an_existing_person(store: Store, clock: Clock) -> None:
    ids = make(store, clock, discord={"dm_policy": "open"})
    await ensure_person(store, "discord-1")
    assert (await ids.admit(dm("discord:1"))).person == "discord-1-2"


async def test_pairing_policy_replies_with_a_code_only(store: Store, clock: Clock) -> None:
    ids = make(store, clock)
    admission = await ids.admit(dm("telegram:5", name="Eve"))
    assert not admission.admitted and admission.person is None
    assert admission.reply is not None
    [request] = await codes.pending_pairings(store, clock.now)
    assert request.code in admission.reply
    assert "owner" in admission.reply and "telegram:" not in admission.reply


async def test_unknown_group_member_is_admitted_as_nobody(store: Store, clock: Clock) -> None:
    ids = make(store, clock, telegram={"dm_policy": "disabled"})
    admission = await ids.admit(group("telegram:77"))
    assert (admission.person, admission.admitted, admission.reply) == (None, True, None)


async def test_known_group_member_speaks_as_their_person(store: Store, clock: Clock) -> None:
    ids = make(store, clock)
    await ensure_person(store, "alice")
    await link_identity(store, "telegram:7", "alice")
    assert (await ids.admit(group("telegram:7"))).person == "alice"


async def test_unknown_platform_is_silent(store: Store, clock: Clock) -> None:
    ids = make(store, clock)
    admission = await ids.admit(Inbound("irc", "c", "irc:a", "hi", is_direct=True))
    assert not admission.admitted and admission.reply is None


async def test_approval_by_another_process_takes_effect_on_the_next_message(
    store: Store, clock: Clock, home: Path
) -> None:
    ids = make(store, clock)
    await ids.admit(dm("telegram:5"))
    async with await Store.open(home / "state.db") as other:
        [request] = await codes.pending_pairings(other, clock.now)
        await codes.approve_pairing(other, request.code, "eve", clock.now)
    assert (await ids.admit(dm("telegram:5"))).person == "eve"


# -- /link -------------------------------------------------------------------------------


async def code_for(ids: Identities, sender: str, person: str) -> str:
    reply = await ids.link_command(dm(sender, "/link"), person, "")
    return reply.split("Your link code: ", 1)[1].split()[0]


async def test_link_code_links_a_stranger_on_another_platform(store: Store, clock: Clock) -> None:
    ids = make(store, clock)
    await ids.ensure_owner(1000)
    await ensure_person(store, "alice")
    await link_identity(store, "telegram:7", "alice")
    code = await code_for(ids, "telegram:7", "alice")
    admission = await ids.admit(dm("discord:123", f"/link {code.lower()}"))
    assert not admission.admitted and admission.reply and admission.reply.startswith("Linked")
    assert await ids.identities_of("alice") == ["discord:123", "telegram:7"]
    assert (await ids.admit(dm("discord:123"))).person == "alice"


async def test_link_code_merges_a_matrix_identity_into_the_telegram_person(
    store: Store, clock: Clock
) -> None:
    ids = make(store, clock)
    await ensure_person(store, "alice")
    await link_identity(store, "telegram:7", "alice")
    code = await code_for(ids, "telegram:7", "alice")
    admission = await ids.admit(dm("matrix:@alice:example.org", f"/link {code}"))
    assert admission.reply and admission.reply.startswith("Linked")
    assert await ids.identities_of("alice") == ["matrix:@alice:example.org", "telegram:7"]
    assert (await ids.admit(dm("matrix:@alice:example.org"))).person == "alice"


async def test_link_code_works_once(store: Store, clock: Clock) -> None:
    ids = make(store, clock)
    await ensure_person(store, "alice")
    code = await code_for(ids, "telegram:7", "alice")
    await ids.admit(dm("discord:1", f"/link {code}"))
    reply = (await ids.admit(dm("discord:2", f"/link {code}"))).reply
    assert reply and reply.startswith("That code is wrong or has expired")
    assert await person_for(store, "discord:2") is None


async def test_link_code_expires_after_ten_minutes(store: Store, clock: Clock) -> None:
    ids = make(store, clock)
    await ensure_person(store, "alice")
    code = await code_for(ids, "telegram:7", "alice")
    clock.now += codes.LINK_TTL
    reply = (await ids.admit(dm("discord:1", f"/link {code}"))).reply
    assert reply and "wrong or has expired" in reply


async def test_five_wrong_codes_lock_link_for_an_hour(store: Store, clock: Clock) -> None:
    ids = make(store, clock)
    await ensure_person(store, "alice")
    code = await code_for(ids, "telegram:7", "alice")
    replies = [(await ids.admit(dm("discord:1", "/link AAAAAAAA"))).reply for _ in range(5)]
    assert replies[0] and "4 attempts left" in replies[0]
    assert replies[4] and "locked for this account until" in replies[4]
    locked = (await ids.admit(dm("discord:1", f"/link {code}"))).reply
    assert locked and "locked" in locked
    clock.now += codes.LOCKOUT - 1
    code = await code_for(ids, "telegram:7", "alice")
    clock.now += 1
    reply = (await ids.admit(dm("discord:1", f"/link {code}"))).reply
    assert reply and reply.startswith("Linked")


async def test_lockout_is_per_identity(store: Store, clock: Clock) -> None:
    ids = make(store, clock)
    await ensure_person(store, "alice")
    for _ in range(5):
        await ids.admit(dm("discord:1", "/link AAAAAAAA"))
    code = await code_for(ids, "telegram:7", "alice")
    reply = (await ids.admit(dm("discord:2", f"/link {code}"))).reply
    assert reply and reply.startswith("Linked")


async def test_link_moves_identity_from_an_empty_auto_created_person(
    store: Store, clock: Clock
) -> None:
    ids = make(store, clock, discord={"dm_policy": "open"})
    await ensure_person(store, "alice")
    assert (await ids.admit(dm("discord:1"))).person == "discord-1"
    code = await code_for(ids, "telegram:7", "alice")
    reply = await ids.link_command(dm("discord:1"), "discord-1", code)
    assert reply.startswith("Linked")
    assert await get_person(store, "discord-1") is None


async def test_link_refuses_to_merge_an_identity_whose_person_has_history(
    store: Store, clock: Clock
) -> None:
    ids = make(store, clock)
    await ensure_person(store, "alice")
    await ensure_person(store, "bob")
    await link_identity(store, "discord:1", "bob")
    session = await store.open_session(Conversation("discord", "1", "dm", "bob"))
    await store.append(session.id, NewMessage(role="user", content="hi", speaker="bob"))
    code = await code_for(ids, "telegram:7", "alice")
    reply = await ids.link_command(dm("discord:1"), "bob", code)
    assert "kioku people link discord:1 --to alice" in reply
    assert await person_for(store, "discord:1") == "bob"


async def test_link_from_an_owner_identity_never_moves_it(store: Store, clock: Clock) -> None:
    ids = make(store, clock)
    await ids.ensure_owner(1000)
    await ensure_person(store, "alice")
    code = await code_for(ids, "telegram:7", "alice")
    reply = await ids.link_command(dm("cli:1000"), "owner", code)
    assert "kioku people link" in reply
    assert await person_for(store, "cli:1000") == "owner"


async def test_stranger_link_is_silent_when_the_platform_is_disabled(
    store: Store, clock: Clock
) -> None:
    ids = make(store, clock, discord={"dm_policy": "disabled"})
    await ensure_person(store, "alice")
    code = await code_for(ids, "telegram:7", "alice")
    admission = await ids.admit(dm("discord:1", f"/link {code}"))
    assert (admission.admitted, admission.reply) == (False, None)


@pytest.mark.parametrize(
    ("text", "argument"),
    [("/link", ""), ("/link  ab cd ", "ab cd"), ("/LINK@kioku_bot X", "X"), ("/linked", None)],
)
def test_link_argument_parsing(text: str, argument: str | None) -> None:
    assert link_argument(text) == argument


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=st.text(max_size=40))
async def test_any_link_argument_gets_a_reply_and_never_raises(
    store: Store, clock: Clock, text: str
) -> None:
    ids = make(store, clock)
    clock.now += codes.LOCKOUT
    reply = await ids.link_command(dm("discord:1"), None, text)
    assert reply


def test_validate_identity_accepts_slack_team_and_user() -> None:
    assert validate_identity("slack:T1:U2") == "slack:T1:U2"
