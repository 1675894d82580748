"""A session that a deletion removed or ended while the daemon held it live is not given
a title, summary or review from the live copy when it closes: that copy still holds the
deleted turns, and writing from it would bring them back."""

from __future__ import annotations

from memory.history.erase import erase, survey
from memory.history.erase_rows import END_REASON
from memory.history.selection import Asker, Selection
from tests.gateway.history.conftest import AIKO, held_anywhere
from tests.helpers.gateway_rig import Chat, GatewayRig


async def test_a_session_ended_by_a_deletion_gets_no_title_from_its_live_copy(
    rig: GatewayRig,
) -> None:
    assert rig.api is not None
    aiko = Chat(rig, AIKO)
    await aiko("my password is hunter2")
    await aiko("and tea is nice")
    [entry] = rig.gateway.sessions.open_sessions()
    plan = await survey(rig.store, Asker.owner(), Selection(matching="hunter2"))
    done = await erase(rig.store, plan)  # as `kioku history delete --matching` does
    assert done.ended == (entry.session.id,)
    requests = len(rig.api.requests)
    await rig.gateway.sessions.close(entry.key, "idle")
    session = await rig.store.get_session(entry.session.id)
    assert session is not None and session.end_reason == END_REASON
    assert (session.title, session.summary) == (None, None)
    assert held_anywhere(rig.home, "hunter2") == []
    assert len(rig.api.requests) == requests  # no review, no title asked of the model


async def test_a_session_deleted_whole_stays_deleted_when_it_closes(rig: GatewayRig) -> None:
    assert rig.api is not None
    aiko = Chat(rig, AIKO)
    await aiko("my password is hunter2")
    [entry] = rig.gateway.sessions.open_sessions()
    plan = await survey(rig.store, Asker.owner(), Selection(sessions=(entry.session.id,)))
    await erase(rig.store, plan)
    requests = len(rig.api.requests)
    await rig.gateway.sessions.close(entry.key, "shutdown")
    assert await rig.store.get_session(entry.session.id) is None
    assert len(rig.api.requests) == requests
    await aiko("hello")
    [fresh] = rig.gateway.sessions.open_sessions()
    assert fresh.session.external_id != entry.session.external_id


async def test_an_open_session_still_gets_its_title_and_summary(rig: GatewayRig) -> None:
    aiko = Chat(rig, AIKO)
    await aiko("tea talk")
    [entry] = rig.gateway.sessions.open_sessions()
    await rig.gateway.sessions.close(entry.key, "new")
    session = await rig.store.get_session(entry.session.id)
    assert session is not None and session.end_reason == "new" and session.title
