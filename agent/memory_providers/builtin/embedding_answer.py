"""What an answer of an OpenAI-compatible `/embeddings` endpoint must be before kioku keeps
a vector of it: its size, then its shape, then every number.

A server is outside input. A vector holding NaN or an infinity ranks first for every
query (NaN compares as neither larger nor smaller), one of strings ("1e308") is not a
vector at all, and an answer of a hundred megabytes would take the daemon's memory and
event loop with it. So the body is read only up to a cap that follows from the request
(`answer_cap`), decoded with kioku's JSON limits, and every vector must be a list of
finite numbers, all of one length, one per text, that still fits a float32.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from agent.memory_providers.base import ProviderError
from inputs.limits import loads
from inputs.text import shown

MAX_DIMENSIONS = 8192
"""The longest vector taken: the largest common models give 4,096 (OpenAI's 3,072)."""
NUMBER_BYTES = 32
"""Room for one number of a vector as JSON ("-1.2345678901234567e-05, " is 25 bytes)."""
ANSWER_SLACK = 64 * 1024
"""Room for the rest of an answer: `object`, `index`, `model`, `usage` and whitespace."""
ERROR_BODY_BYTES = 16 * 1024
"""What is read of an error answer: its message is cut to 200 characters anyway."""


def answer_cap(texts: int) -> int:
    """The most bytes an answer for `texts` texts may have: `MAX_DIMENSIONS` numbers each."""
    return ANSWER_SLACK + texts * MAX_DIMENSIONS * NUMBER_BYTES


class Embedded(NamedTuple):
    """An answer's vectors, one row per text, and the input tokens the server says it
    read (`usage.prompt_tokens`; 0 when it does not say)."""

    matrix: npt.NDArray[np.float32]
    tokens: int


def vectors(body: bytes, count: int, where: str) -> Embedded:
    """The `count` vectors of an answer, in the order of the texts, and its tokens;
    `ProviderError` naming what is wrong (and the server `where`) for anything else."""
    try:
        data = loads(body, what="the embeddings answer")
        items = data["data"]
        if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
            raise TypeError
        rows = [item["embedding"] for item in _in_order(items, count, where)]
    except (ValueError, KeyError, TypeError):
        raise ProviderError(
            f"{where} did not answer as an OpenAI-compatible embeddings endpoint "
            "(no data[].embedding list of numbers)"
        ) from None
    if len(rows) != count:
        raise ProviderError(f"{where} returned {len(rows)} vectors for {count} texts")
    return Embedded(_numbers(rows, where), _prompt_tokens(data))


def _prompt_tokens(data: dict[str, Any]) -> int:
    """`usage.prompt_tokens` when it is a count; a server that says nothing, or nonsense,
    is taken as 0 rather than refused: its vectors are fine."""
    usage = data.get("usage")
    tokens = usage.get("prompt_tokens") if isinstance(usage, dict) else None
    return tokens if type(tokens) is int and 0 <= tokens < 2**53 else 0


def _in_order(items: list[dict[str, Any]], count: int, where: str) -> list[dict[str, Any]]:
    """The items by their `index`, which must be 0 to count - 1 once each when given (a
    vector must not land on another text); none given keeps the order they came in."""
    given = [item.get("index") for item in items]
    if all(index is None for index in given):
        return items
    if not all(type(index) is int for index in given) or sorted(given) != [*range(len(items))]:
        raise ProviderError(
            f"{where} numbered its vectors wrongly (each data[].index must be 0 to "
            f"{count - 1}, once)"
        )
    return sorted(items, key=lambda item: item["index"])


def _numbers(rows: list[Any], where: str) -> npt.NDArray[np.float32]:
    """`rows` as a float32 matrix, if each is a list of finite numbers of one length."""
    if not all(isinstance(row, list) for row in rows):
        raise ProviderError(f"{where} answered an embedding that is not a list of numbers")
    lengths = {len(row) for row in rows}
    if len(lengths) > 1:
        raise ProviderError(
            f"{where} returned vectors of different lengths "
            f"({', '.join(map(str, sorted(lengths)))})"
        )
    dims = lengths.pop() if lengths else 0
    if not 1 <= dims <= MAX_DIMENSIONS:
        raise ProviderError(
            f"{where} returned {dims}-dimension vectors; kioku takes 1 to {MAX_DIMENSIONS:,}"
        )
    odd = [x for row in rows for x in row if type(x) not in (int, float)][:1]
    if odd:  # a string ("1e308"), true/false, null, a list: not a number
        raise ProviderError(
            f"{where} answered an embedding holding {shown(odd[0], 40)}, which is not a number; "
            "check that base_url and the model are an embeddings model's"
        )
    try:
        wide = np.array(rows, dtype=np.float64)
    except OverflowError:  # an integer of hundreds of digits
        wide = np.full((len(rows), dims), np.inf)
    with np.errstate(over="ignore"):  # 1e308 is finite, but no float32: inf, refused below
        matrix = wide.astype(np.float32)
    bad = ~np.isfinite(matrix)
    if bad.any():
        row, column = (int(i) for i in np.argwhere(bad)[0])
        raise ProviderError(
            f"{where} answered an embedding holding {float(wide[row, column])!r} (text {row + 1}, "
            f"number {column + 1}): not a finite number a float32 holds. Nothing was stored; "
            "the model or the server is broken (`kioku providers test local_vectors` checks "
            "it again)"
        )
    return matrix
