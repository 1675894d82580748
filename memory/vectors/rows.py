"""What crosses the vector store's boundary: rows going in, hits coming out."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

Vector = npt.NDArray[np.float32]


@dataclass(frozen=True)
class VectorRow:
    """One exchange to store: `turn_ids[0]` (the person's message) names it, the other
    ids are the turns it spans, so deleting any of them deletes the row."""

    turn_ids: tuple[int, ...]
    text: str
    vector: Vector = field(repr=False)
    ts: float


@dataclass(frozen=True)
class VectorHit:
    """A stored exchange near the query: `score` is the cosine similarity (-1..1)."""

    turn_id: int
    text: str
    score: float
    ts: float


class DimensionMismatch(ValueError):
    """Vectors of another length than the ones already stored (the model changed)."""

    def __init__(self, stored: int, given: int) -> None:
        super().__init__(f"the store holds {stored}-dimension vectors, not {given}")
        self.stored = stored
        self.given = given


class NotFinite(ValueError):
    """A vector holding NaN or an infinity: it would rank first for every query, so it is
    never stored."""

    def __init__(self, row: int) -> None:
        super().__init__(f"vector {row + 1} holds NaN or an infinity; nothing was stored")
        self.row = row


def normalised(vectors: npt.ArrayLike) -> npt.NDArray[np.float32]:
    """Rows scaled to unit length as float32, so a dot product is the cosine; a zero
    row stays zero (it matches nothing)."""
    matrix = np.atleast_2d(np.array(vectors, dtype=np.float32))
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    np.divide(matrix, norms, out=matrix, where=norms > 0)
    return matrix
