"""Reciprocal-rank fusion of the vector hits and kioku's lexical hits into one list.

Each list gives an exchange 1 / (k + rank) (rank from 1, k = 60); an exchange found by
both lists adds both. Items are keyed by the exchange's first turn id: a vector hit
carries it, and a lexical hit (one turn) is mapped to the stored exchange it belongs
to, so the person's message and kioku's answer found by the words and the exchange
found by meaning count once. Within one list an exchange counts at its best rank only.
Equal scores (first in one list against first in the other) go to the exchange the
lexical search ranked higher, since it holds the words the person used, then to the
newer one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from agent.memory_providers.base import Passage
from memory.vectors.rows import VectorHit

K = 60


@dataclass(frozen=True)
class Fused:
    """One exchange in the fused list: its key, the text shown, when, and its score."""

    key: int
    text: str
    ts: float
    score: float


def fuse(
    vector_hits: Sequence[VectorHit],
    passages: Sequence[Passage],
    exchange_of: Mapping[int, int],
    k: int = K,
) -> list[Fused]:
    """Both lists fused, best first. `exchange_of`
    maps a lexical hit's turn id to its exchange's key; turns missing from it stand
    alone. The text shown is the whole exchange when the vector store has it."""
    scores: dict[int, float] = {}
    shown: dict[int, tuple[str, float]] = {}
    lexical_rank: dict[int, int] = {}
    for rank, hit in enumerate(_best_ranks([hit.turn_id for hit in vector_hits]), start=1):
        scores[hit] = scores.get(hit, 0.0) + 1 / (k + rank)
    for hit in vector_hits:
        shown.setdefault(hit.turn_id, (hit.text, hit.ts))
    keys = [exchange_of.get(passage.turn_id, passage.turn_id) for passage in passages]
    for rank, key in enumerate(_best_ranks(keys), start=1):
        scores[key] = scores.get(key, 0.0) + 1 / (k + rank)
        lexical_rank[key] = rank
    for key, passage in zip(keys, passages, strict=True):
        shown.setdefault(key, (passage.text, passage.ts.timestamp()))
    fused = [Fused(key, *shown[key], score) for key, score in scores.items()]
    unranked = len(lexical_rank) + 1
    fused.sort(
        key=lambda item: (-item.score, lexical_rank.get(item.key, unranked), -item.ts, item.key)
    )
    return fused


def _best_ranks(keys: Sequence[int]) -> list[int]:
    """`keys` with repeats removed, each kept at its first (best) place."""
    return list(dict.fromkeys(keys))
