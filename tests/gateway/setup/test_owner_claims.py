"""The one-time owner code: the first DM carrying it on its platform claims, once."""

from __future__ import annotations

import asyncio

import pytest

from gateway.owner_claims import ALPHABET, ClaimBusy, OwnerClaims, carries, new_code


def test_a_code_is_six_unambiguous_characters() -> None:
    code = new_code()
    assert len(code) == 6 and set(code) <= set(ALPHABET)


def test_the_code_counts_as_a_word_in_any_case() -> None:
    assert carries("/start k7qx2m", "K7QX2M") and carries("K7QX2M", "K7QX2M")
    assert not carries("XK7QX2M", "K7QX2M") and not carries("hello", "K7QX2M")


async def test_the_first_dm_carrying_the_code_claims_and_nobody_after() -> None:
    claims = OwnerClaims()
    waiting = claims.expect("telegram", "K7QX2M", 5)
    assert not claims.take("telegram", "telegram:9", "K7QX2M", is_direct=False)  # a group
    assert not claims.take("discord", "discord:9", "K7QX2M", is_direct=True)  # elsewhere
    assert not claims.take("telegram", "telegram:8", "hello", is_direct=True)
    assert claims.take("telegram", "telegram:1", "/start K7QX2M", is_direct=True)
    assert not claims.take("telegram", "telegram:2", "K7QX2M", is_direct=True)
    assert await waiting == "telegram:1"


async def test_an_expired_code_claims_nothing() -> None:
    claims = OwnerClaims()
    assert await claims.expect("slack", "K7QX2M", 0.01) is None
    assert not claims.take("slack", "slack:T:U", "K7QX2M", is_direct=True)


async def test_one_claim_at_a_time_per_platform() -> None:
    claims = OwnerClaims()
    waiting = claims.expect("telegram", "AAAAAA", 5)
    with pytest.raises(ClaimBusy):
        claims.expect("telegram", "BBBBBB", 5)
    claims.take("telegram", "telegram:1", "AAAAAA", is_direct=True)
    await asyncio.wait_for(waiting, 1)
