"""What a provider returns is data: checked, fenced and capped before the model reads it.

A provider's service may hold text anyone could have written (a shared knowledge base,
an imported document), so each piece is safety-scanned as notes are (`memory.safety`):
a piece that would steer the model, hide characters or carry a credential is left out
and logged. What remains is fenced as one provider's data and cut to the budget.
"""

from __future__ import annotations

from collections.abc import Iterable

import structlog

from agent.untrusted import fenced, shorten
from inputs.text import well_formed
from memory.safety import scan_text

log = structlog.get_logger("kioku.providers")

TAG = "memory-provider"


def screened(provider: str, pieces: Iterable[str], budget: int) -> str:
    """The safe pieces, best first, within `budget` characters, fenced as `provider`'s;
    empty when nothing is left."""
    kept: list[str] = []
    used = 0
    for raw in pieces:
        if not isinstance(raw, str):
            log.warning("provider_piece_refused", provider=provider, reason="not text")
            continue
        piece = well_formed(raw).strip()
        if not piece:
            continue
        finding = scan_text(piece)
        if finding is not None:
            log.warning(
                "provider_piece_refused", provider=provider, reason=shorten(str(finding), 120)
            )
            continue
        room = budget - used
        if room <= 0:
            break
        if len(piece) > room:
            piece = piece[: max(room - 1, 0)] + "…"
        kept.append(piece)
        used += len(piece) + 1
    if not kept:
        return ""
    return fenced(TAG, provider, "\n".join(f"- {piece}" for piece in kept))
