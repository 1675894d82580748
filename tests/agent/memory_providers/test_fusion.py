"""Reciprocal-rank fusion of vector and lexical hits, keyed by exchange."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from agent.memory_providers.base import Passage
from agent.memory_providers.builtin.fusion import K, fuse
from memory.vectors.rows import VectorHit

DAY = datetime(2026, 1, 2, tzinfo=UTC)


def hit(key: int, text: str = "") -> VectorHit:
    return VectorHit(key, text or f"exchange {key}", 0.5, DAY.timestamp())


def passage(turn: int) -> Passage:
    return Passage(turn, f"turn {turn}", DAY)


def test_second_in_both_lists_beats_first_in_one() -> None:
    fused = fuse([hit(1), hit(2)], [passage(3), passage(2)], {})
    assert [item.key for item in fused] == [2, 3, 1]
    assert fused[0].score == pytest.approx(2 / (K + 2))


def test_a_lexical_turn_of_a_stored_exchange_counts_as_that_exchange() -> None:
    fused = fuse([hit(10, "question\nanswer")], [passage(11), passage(10)], {11: 10, 10: 10})
    assert [(item.key, item.text) for item in fused] == [(10, "question\nanswer")]
    assert fused[0].score == pytest.approx(2 / (K + 1))


def test_a_turn_the_vectors_never_stored_stands_alone_with_its_own_text() -> None:
    fused = fuse([], [passage(7)], {})
    assert [(item.key, item.text) for item in fused] == [(7, "turn 7")]


def test_ties_go_to_the_exchange_the_lexical_search_ranked_higher() -> None:
    newer = VectorHit(1, "new", 0.9, 2000.0)
    older = Passage(2, "old", datetime.fromtimestamp(1000.0, UTC))
    assert [item.key for item in fuse([newer], [older], {})] == [2, 1]
    swapped = fuse([hit(5), hit(6)], [passage(6), passage(5)], {})
    assert [item.key for item in swapped] == [6, 5]
