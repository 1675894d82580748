"""A fusion learned on the labelled set itself, judged on people it never saw: how far a
weighted fusion of the two session lists could go at all.

Each session either list offers a question is described by four numbers: its lexical and
semantic scores, min-max normalised over their list, and 1 / (1 + its place) in each. A
pairwise logistic model learns the weights that put answering sessions above the others
from every person's questions but one, and ranks that person's; then the next person
(leave one person out: a LoCoMo person is one conversation). What it reaches is a
ceiling for fusing these lists, not a fusion to ship: it is fitted to this set.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from agent.memory_providers.builtin.session_fusion import normalised

Ranked = Sequence[tuple[int, float]]
STEPS = 300
RATE = 0.5
DECAY = 1e-3


@dataclass(frozen=True)
class Candidates:
    """One question's sessions (both lists, lexical order first), their features, and
    which of them answer it."""

    keys: list[int]
    features: np.ndarray
    answers: np.ndarray


def candidates(lexical: Ranked, semantic: Ranked, answering: set[int]) -> Candidates:
    keys = list(dict.fromkeys([k for k, _ in lexical] + [k for k, _ in semantic]))
    words, meaning = normalised(lexical), normalised(semantic)
    word_place, meaning_place = _places(lexical), _places(semantic)
    rows = [
        [
            words.get(key, 0.0),
            meaning.get(key, 0.0),
            1 / (1 + word_place[key]) if key in word_place else 0.0,
            1 / (1 + meaning_place[key]) if key in meaning_place else 0.0,
        ]
        for key in keys
    ]
    return Candidates(keys, np.array(rows), np.array([key in answering for key in keys]))


def leave_one_person_out(people: Sequence[str], questions: Sequence[Candidates]) -> list[list[int]]:
    """Each question's sessions in the order of weights fitted on the other people's."""
    orders: list[list[int]] = [[] for _ in questions]
    for person in sorted(set(people)):
        weights = _fit([q for q, p in zip(questions, people, strict=True) if p != person])
        for index, asked in enumerate(people):
            if asked == person:
                orders[index] = _ranked(questions[index], weights)
    return orders


def _fit(questions: Sequence[Candidates]) -> np.ndarray:
    """Weights minimising the logistic loss of every (answer - other session) difference."""
    pairs = [
        (q.features[q.answers][:, None, :] - q.features[~q.answers][None, :, :]).reshape(-1, 4)
        for q in questions
        if q.answers.any() and (~q.answers).any()
    ]
    diffs = np.vstack(pairs)
    weights = np.zeros(4)
    for _ in range(STEPS):
        margin = diffs @ weights
        gradient = -(diffs * (1 / (1 + np.exp(margin)))[:, None]).mean(axis=0) + DECAY * weights
        weights -= RATE * gradient
    return weights


def _ranked(question: Candidates, weights: np.ndarray) -> list[int]:
    scores = question.features @ weights
    order = sorted(range(len(question.keys)), key=lambda i: (-scores[i], i))
    return [question.keys[i] for i in order]


def _places(ranked: Ranked) -> dict[int, int]:
    places: dict[int, int] = {}
    for place, (key, _) in enumerate(ranked):
        places.setdefault(key, place)
    return places
