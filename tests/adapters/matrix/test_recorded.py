"""The Matrix events the real Synapse sent in the test suite (tests/fixtures/recorded/
matrix/, PROVENANCE.md there), each read by the adapter's `Reader` as matrix-nio parses
it: what a person expects answered becomes an `Inbound` (addressed where kioku must
answer), an edit or redaction a `Changed`, and kioku's own events and state nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from nio import AsyncClient, Event, MatrixRoom, MegolmEvent

from adapters.base import Changed, Inbound
from adapters.matrix.inbound import Me, Reader
from tests.fakes.recorded import RECORDINGS, recorded_json

FOLDER = RECORDINGS / "matrix"
KIOKU, ALICE, BOB = "@kioku:kioku.test", "@alice:kioku.test", "@bob:kioku.test"
ME = Me(KIOKU, "KIOKUDEVICE", "kioku")

# file -> (room members, what the reader makes of it)
EXPECTED: dict[str, tuple[tuple[str, ...], str]] = {
    "dm_text_decrypted.json": ((KIOKU, ALICE), "direct"),
    "dm_encrypted_without_key.json": ((KIOKU, ALICE), "unreadable"),
    "dm_image_encrypted_file_decrypted.json": ((KIOKU, ALICE), "image"),
    "dm_redaction.json": ((KIOKU, ALICE), "deleted"),
    "dm_edit_decrypted.json": ((KIOKU, ALICE), "edited"),
    "dm_member_join_kioku.json": ((KIOKU, ALICE), "nothing"),
    "room_text_unaddressed.json": ((KIOKU, ALICE, BOB), "unaddressed"),
    "room_text_mention.json": ((KIOKU, ALICE, BOB), "addressed"),
    "room_thread_mention.json": ((KIOKU, ALICE, BOB), "thread"),
    "room_reply_by_kioku_html.json": ((KIOKU, ALICE, BOB), "nothing"),
    "room_thread_reply_by_kioku.json": ((KIOKU, ALICE, BOB), "nothing"),
}


def test_every_recorded_file_has_an_expectation() -> None:
    assert sorted(p.name for p in FOLDER.glob("*.json")) == sorted(EXPECTED)


@pytest.fixture
async def client() -> AsyncIterator[AsyncClient]:
    """A client no test reaches the network with (none of these events needs it)."""
    client = AsyncClient("http://127.0.0.1:9", KIOKU)
    yield client
    await client.close()


def _room(members: tuple[str, ...]) -> MatrixRoom:
    room = MatrixRoom("!recorded:kioku.test", KIOKU)
    for member in members:
        room.add_member(member, member[1:].split(":")[0], None)
    return room


@pytest.mark.parametrize("name", sorted(EXPECTED))
async def test_a_recorded_event_is_read_as_a_person_expects(client: AsyncClient, name: str) -> None:
    members, expected = EXPECTED[name]
    source = recorded_json(FOLDER / name)
    # What matrix-nio decrypted it parses as such (PROVENANCE.md: the `_decrypted` files).
    decrypted = "_decrypted" in name
    event = Event.parse_decrypted_event(source) if decrypted else Event.parse_event(source)
    undecryptable: list[MegolmEvent] = []

    async def note(room: MatrixRoom, event: MegolmEvent) -> None:
        undecryptable.append(event)

    found = await Reader(client, ME, note).event(_room(members), event)
    if expected == "nothing":
        assert found is None
        return
    if expected in ("deleted", "edited"):
        assert isinstance(found, Changed)
        target = source.get("redacts") or source["content"]["m.relates_to"]["event_id"]
        assert found.message_id == target
        assert found.text == (None if expected == "deleted" else "I like coffee")
        return
    assert isinstance(found, Inbound)
    assert found.message_id == source["event_id"]
    assert found.sender == f"matrix:{source['sender']}"
    _check(found, expected, source, undecryptable)


def _check(found: Inbound, expected: str, source: dict, undecryptable: list) -> None:  # type: ignore[type-arg]
    if expected == "direct":
        assert (found.is_direct, found.text) == (True, source["content"]["body"])
    elif expected == "unreadable":
        assert found.is_direct and "your encrypted message" in found.unreadable[0]
        assert [e.event_id for e in undecryptable] == [source["event_id"]]
    elif expected == "image":
        [image] = found.attachments
        assert (image.kind, image.mime, image.size, image.width) == ("image", "image/png", 71, 1)
        assert found.text == ""
    elif expected == "unaddressed":
        assert (found.is_direct, found.addressed) == (False, False)
    elif expected == "addressed":
        assert (found.addressed, found.text, found.thread) == (True, "what is for lunch?", "")
    else:
        relation = source["content"]["m.relates_to"]
        assert (found.addressed, found.text) == (True, "which train?")
        assert found.thread == relation["event_id"]
