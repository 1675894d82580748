"""Pairing codes: shape, limits, resending, expiry, approval and denial, on a real store."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from adapters.base import Inbound
from config.settings import Settings
from gateway.identity import Identities
from memory.access import codes
from memory.access.identities import ensure_person, link_identity, person_for
from memory.access.people import PERSON_ID, slug
from memory.store.database import Store
from memory.store.scalar import scalar_now

T0 = 1_700_000_000.0


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def ids(store: Store, clock: Clock) -> Identities:
    return Identities(store, Settings(), clock=clock)


def dm(sender: str, name: str | None = None) -> Inbound:
    return Inbound(sender.split(":")[0], sender, sender, "hi", is_direct=True, sender_name=name)


def test_codes_are_eight_unambiguous_characters() -> None:
    made = {codes.new_code() for _ in range(200)}
    assert len(made) == 200
    for code in made:
        assert len(code) == 8
        assert not set(code) & set("0O1IL")
        assert set(code) <= set(codes.ALPHABET)


@given(st.text(alphabet=codes.ALPHABET, min_size=8, max_size=8), st.sampled_from([" ", "-", ""]))
def test_normalise_code_accepts_any_case_and_separators(code: str, separator: str) -> None:
    typed = f" {code[:4].lower()}{separator}{code[4:]} "
    assert codes.normalise_code(typed) == code


@given(st.text())
def test_slug_is_a_valid_person_id_or_none(text: str) -> None:
    made = slug(text)
    assert made is None or PERSON_ID.fullmatch(made)


async def test_stranger_gets_the_same_code_again_only_after_ten_minutes(
    ids: Identities, clock: Clock
) -> None:
    first = await ids.admit(dm("telegram:1"))
    clock.now += codes.PAIRING_RESEND - 1
    quiet = await ids.admit(dm("telegram:1"))
    clock.now += 1
    again = await ids.admit(dm("telegram:1"))
    assert first.reply and quiet.reply is None and again.reply == first.reply


async def test_a_fourth_stranger_on_a_platform_gets_silence(
    ids: Identities, store: Store, clock: Clock
) -> None:
    replies = [(await ids.admit(dm(f"telegram:{n}"))).reply for n in range(4)]
    assert all(replies[:3]) and replies[3] is None
    assert len(await codes.pending_pairings(store, clock.now)) == 3
    assert (await ids.admit(dm("discord:1"))).reply is not None


async def test_expired_requests_are_purged_and_make_room(
    ids: Identities, store: Store, clock: Clock
) -> None:
    for n in range(3):
        await ids.admit(dm(f"telegram:{n}"))
    clock.now += codes.PAIRING_TTL
    assert await codes.pending_pairings(store, clock.now) == []
    reply = (await ids.admit(dm("telegram:9"))).reply
    assert reply is not None
    assert await store.read(lambda db: scalar_now(db, "SELECT count(*) FROM pairing_requests")) == 1


async def test_approve_creates_a_person_named_after_the_display_name(
    ids: Identities, store: Store, clock: Clock
) -> None:
    await ids.admit(dm("telegram:5", name="José Díaz"))
    [request] = await codes.pending_pairings(store, clock.now)
    approval = await codes.approve_pairing(store, request.code.lower(), None, clock.now)
    assert approval == codes.Approval("jose-diaz", "telegram:5", created=True)
    assert (await ids.admit(dm("telegram:5"))).person == "jose-diaz"
    assert await codes.pending_pairings(store, clock.now) == []


async def test_approve_without_a_usable_name_uses_the_identity(
    ids: Identities, store: Store, clock: Clock
) -> None:
    await ids.admit(dm("telegram:5", name="山田"))
    [request] = await codes.pending_pairings(store, clock.now)
    approval = await codes.approve_pairing(store, request.code, None, clock.now)
    assert approval.person == "telegram-5"


async def test_approve_as_an_existing_person_links_to_them(
    ids: Identities, store: Store, clock: Clock
) -> None:
    await ensure_person(store, "alice")
    await link_identity(store, "discord:1", "alice")
    await ids.admit(dm("telegram:5"))
    [request] = await codes.pending_pairings(store, clock.now)
    approval = await codes.approve_pairing(store, request.code, "alice", clock.now)
    assert approval == codes.Approval("alice", "telegram:5", created=False)
    assert await ids.identities_of("alice") == ["discord:1", "telegram:5"]


async def test_approving_an_expired_code_is_refused(
    ids: Identities, store: Store, clock: Clock
) -> None:
    await ids.admit(dm("telegram:5"))
    [request] = await codes.pending_pairings(store, clock.now)
    clock.now += codes.PAIRING_TTL
    with pytest.raises(codes.CodeRefused, match="expired"):
        await codes.approve_pairing(store, request.code, None, clock.now)
    assert await person_for(store, "telegram:5") is None


async def test_approving_an_unknown_code_is_refused(store: Store) -> None:
    with pytest.raises(codes.CodeRefused, match="no pending pairing request"):
        await codes.approve_pairing(store, "ABCDEFGH", None, T0)


async def test_denied_stranger_gets_silence_for_a_day(
    ids: Identities, store: Store, clock: Clock
) -> None:
    await ids.admit(dm("telegram:5"))
    [request] = await codes.pending_pairings(store, clock.now)
    await codes.deny_pairing(store, request.code, clock.now)
    clock.now += codes.PAIRING_RESEND
    assert (await ids.admit(dm("telegram:5"))).reply is None
    clock.now += codes.DENIED_QUIET
    assert (await ids.admit(dm("telegram:5"))).reply is not None


async def test_pairing_reply_names_nobody_but_the_code(ids: Identities, store: Store) -> None:
    await ensure_person(store, "alice", "Alice")
    reply = (await ids.admit(dm("telegram:5", name="Mallory"))).reply
    assert reply is not None
    for secret in ("alice", "Alice", "Mallory", "telegram", "config", "cli:"):
        assert secret not in reply
