"""A message taken in but not yet answered, as the delivery ledger keeps it (JSON), and
back: what lets kioku answer after a restart what it took in before.

Everything the turn reads is kept except the files' bytes, which were never fetched:
a file on a message restored this way cannot be downloaded any more (the adapter's
download went with the process), so the person is told to send it again.
"""

from __future__ import annotations

import json
from dataclasses import fields as dataclass_fields
from datetime import datetime
from typing import Any

from adapters.base import Attachment, FetchFailed, Inbound

GONE = "kioku was restarted before it read this file; please send it again"


def to_waiting(inbound: Inbound) -> str:
    """The message as the ledger keeps it."""
    # Field by field, not `asdict`: that deep-copies each file's download callable (and the
    # platform client it holds) only for the copy to be thrown away.
    fields: dict[str, Any] = {f.name: getattr(inbound, f.name) for f in dataclass_fields(inbound)}
    fields["received_at"] = inbound.received_at.isoformat()
    fields["unreadable"] = list(inbound.unreadable)
    fields["attachments"] = [
        {
            "kind": item.kind,
            "name": item.name,
            "mime": item.mime,
            "size": item.size,
            "duration": item.duration,
        }
        for item in inbound.attachments
    ]
    return json.dumps(fields, ensure_ascii=False)


def from_waiting(waiting: str) -> Inbound:
    """The message back, its files with a download that says why it cannot be had.
    Raises ValueError for what `to_waiting` did not write (a row edited by hand)."""
    try:
        fields: dict[str, Any] = json.loads(waiting)
        fields["received_at"] = datetime.fromisoformat(fields["received_at"])
        fields["unreadable"] = tuple(fields.get("unreadable", ()))
        fields["attachments"] = tuple(
            Attachment(fetch=_gone, width=None, height=None, **item)
            for item in fields.get("attachments", ())
        )
        return Inbound(**fields)
    except (TypeError, KeyError, ValueError) as exc:
        raise ValueError(f"a waiting message kioku cannot read back: {exc}") from exc


async def _gone(limit: int) -> bytes:
    raise FetchFailed(GONE)
