"""Weighted score fusion: kioku's lexical session ranking and vector recall, in one order.

Each list's scores are min-max normalised over what it found (its best 1, its last 0;
a list of one gives its item 1), and an item scores `LEXICAL_WEIGHT` times its lexical
part plus the rest times its semantic part; an item one list did not find gets 0 from
it. The words a person searches with are the stronger evidence, so they weigh four
times the meaning: a small embedding model tells the right session from its neighbours
less sharply, and rank fusion with equal weights lost R@1 on LoCoMo (the measurements
are in docs/providers.md). At this weight meaning reorders sessions the words rank
close together and brings back sessions no word found, below clear lexical matches.
A session the query's time favours (said on the day it names: `raised`) has its
semantic part multiplied as the words' ranking multiplied its lexical score, so meaning
does not push a session said that day below one said on another. Ties go to the
lexical order, then to the nearer.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import TypeVar

K = TypeVar("K", bound=Hashable)

LEXICAL_WEIGHT = 0.8


def fused(
    lexical: Sequence[tuple[K, float]],
    semantic: Sequence[tuple[K, float]],
    lexical_weight: float = LEXICAL_WEIGHT,
    raised: Mapping[K, float] | None = None,
) -> list[tuple[K, float]]:
    """Both lists of (key, score), best first, as one list of (key, fused score) best
    first; a key repeated within a list counts at its first (best) place. `raised`: the
    factor a key's semantic part is multiplied by (1 when not given)."""
    words = normalised(lexical)
    meaning = normalised(semantic)
    if raised:
        meaning = {key: part * raised.get(key, 1.0) for key, part in meaning.items()}
    lexical_place = {key: place for place, key in enumerate(words)}
    semantic_place = {key: place for place, key in enumerate(meaning)}
    scores = {
        key: lexical_weight * words.get(key, 0.0) + (1 - lexical_weight) * meaning.get(key, 0.0)
        for key in [*words, *meaning]
    }
    unranked = len(lexical_place) + len(semantic_place)
    order = sorted(
        scores,
        key=lambda key: (
            -scores[key],
            lexical_place.get(key, unranked),
            semantic_place.get(key, unranked),
        ),
    )
    return [(key, scores[key]) for key in order]


def normalised(ranked: Sequence[tuple[K, float]]) -> dict[K, float]:
    """Each key's score scaled to 0..1 over the list (first place of a repeated key); a
    list of one gives its key 1."""
    best: dict[K, float] = {}
    for key, score in ranked:
        best.setdefault(key, score)
    if not best:
        return {}
    low, high = min(best.values()), max(best.values())
    if high <= low:
        return dict.fromkeys(best, 1.0)
    return {key: (score - low) / (high - low) for key, score in best.items()}
