"""A message held in the ledger comes back as it was taken in; its files say why they
cannot be downloaded any more; a row that is not one kioku wrote is refused clearly."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from adapters.base import Attachment, FetchFailed, Inbound
from gateway.turns.waiting import GONE, from_waiting, to_waiting


async def _bytes(limit: int) -> bytes:
    return b"%PDF"


def message() -> Inbound:
    pdf = Attachment("document", "lease.pdf", "application/pdf", 4, _bytes)
    return Inbound(
        "slack",
        "D1",
        "slack:T1:U1",
        "see the lease — 見て",
        True,
        thread="1.5",
        sender_name="Aiko",
        message_id="1700000000.000100",
        reply_to_text="earlier",
        unreadable=("a sticker",),
        attachments=(pdf,),
        received_at=datetime(2026, 12, 1, 9, 12, tzinfo=UTC),
    )


async def test_a_held_message_comes_back_as_it_was_taken_in() -> None:
    original = message()
    back = from_waiting(to_waiting(original))
    assert back == original  # files compare by what they are, not by their download
    with pytest.raises(FetchFailed, match="restarted before it read this file"):
        await back.attachments[0].fetch(1000)
    assert GONE in str(FetchFailed(GONE))


def test_a_row_written_before_a_field_existed_reads_with_its_default() -> None:
    row = json.loads(to_waiting(message()))
    del row["kept_by_platform"]
    assert from_waiting(json.dumps(row)).kept_by_platform


@pytest.mark.parametrize("row", ["{not json", "[]", '{"text": "no platform"}', "null"])
def test_a_row_kioku_did_not_write_is_refused_clearly(row: str) -> None:
    with pytest.raises(ValueError, match="a waiting message kioku cannot read back"):
        from_waiting(row)
