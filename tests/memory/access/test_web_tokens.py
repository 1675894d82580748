"""Web sign-in through the store: a link works once, expires, and only its hash is kept."""

from __future__ import annotations

import pytest

from memory.access.identities import ensure_person
from memory.access.web_tokens import (
    LINK_TTL,
    SESSION_TTL,
    LinkRefused,
    check_web_token,
    end_web_session,
    issue_web_token,
    redeem_web_token,
    web_session,
)
from memory.store.database import Store

T0 = 1_700_000_000.0


@pytest.fixture(autouse=True)
async def aiko(store: Store) -> None:
    await ensure_person(store, "aiko")


async def test_a_token_signs_in_once_and_checking_it_does_not_spend_it(store: Store) -> None:
    token = await issue_web_token(store, "aiko", T0)
    assert await check_web_token(store, token, T0) == "aiko"
    session_id, session = await redeem_web_token(store, token, T0 + 1)
    assert session.person == "aiko" and session.expires_at == T0 + 1 + SESSION_TTL
    assert await web_session(store, session_id, T0 + 2) == session
    with pytest.raises(LinkRefused, match="already used"):
        await redeem_web_token(store, token, T0 + 2)


async def test_an_expired_or_unknown_token_is_refused(store: Store) -> None:
    token = await issue_web_token(store, "aiko", T0)
    with pytest.raises(LinkRefused, match="expired"):
        await check_web_token(store, token, T0 + LINK_TTL)
    with pytest.raises(LinkRefused, match="not valid"):
        await redeem_web_token(store, "made-up", T0)


async def test_no_token_is_issued_for_an_unknown_person(store: Store) -> None:
    with pytest.raises(LookupError, match="no person 'ghost'"):
        await issue_web_token(store, "ghost", T0)


async def test_signing_out_or_the_session_ttl_ends_a_session(store: Store) -> None:
    first, _ = await redeem_web_token(store, await issue_web_token(store, "aiko", T0), T0)
    second, session = await redeem_web_token(store, await issue_web_token(store, "aiko", T0), T0)
    await end_web_session(store, first)
    assert await web_session(store, first, T0 + 1) is None
    assert await web_session(store, second, session.expires_at) is None


async def test_only_hashes_of_tokens_and_session_ids_are_stored(store: Store) -> None:
    token = await issue_web_token(store, "aiko", T0)
    session_id, _ = await redeem_web_token(store, token, T0)
    rows = await store.read(
        lambda db: db.execute(
            "SELECT token_hash AS hash FROM web_tokens "
            "UNION ALL SELECT session_hash FROM web_sessions"
        ).fetchall()
    )
    stored = {row["hash"] for row in rows}
    assert len(stored) == 2 and not stored & {token, session_id}
