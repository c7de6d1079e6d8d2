"""The embedder contract. Vectors are float32, L2-normalized, so a dot product is the cosine.

Every embedder reads a bounded prefix of a text (`max_input_chars`, and for a model that counts tokens
`max_input_tokens`), cut in one place, `fit_input`, which the embedding scheduler applies to every text. The full text
is still stored and keyword-indexed; only what reaches the model is bounded, so one huge text costs one model call of
bounded size instead of minutes of sliding windows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from jiyi.capability import CapabilityCheck
from jiyi.text import has_cjk


@dataclass(frozen=True, slots=True)
class Calibration:
    """Cosine values that mean "unrelated" and "the same thing" for this model; maps cosine to a [0, 1] relevance.

    Models differ a lot: e5 puts unrelated sentences at 0.8, USE at 0.1. A fixed threshold on raw cosine would be
    wrong for one of them, so each embedder declares its own range (measured in bench/embedders.py).

    Languages can differ within one model too: `alphabetic` is the range for a query written without CJK characters
    (English), when it is not the same as for Chinese (`for_query`).

    Two stored texts compared with each other — is a new fact new, do these memories say the same thing — are not a
    question and its answer: both are passages, alike in form, and e5 puts two unrelated Chinese memories of one user
    at a median cosine of 0.90, above most questions and their answers. `passages` / `passages_alphabetic` are the
    ranges for such pairs (`for_pair`); a model without them compares pairs on its query ranges.
    """

    unrelated: float = 0.0
    same: float = 1.0
    alphabetic: tuple[float, float] | None = None
    passages: tuple[float, float] | None = None
    passages_alphabetic: tuple[float, float] | None = None

    def relevance(self, cosine: float) -> float:
        span = self.same - self.unrelated
        return float(min(max((cosine - self.unrelated) / span, 0.0), 1.0)) if span > 0 else 0.0

    def for_query(self, query: str) -> Calibration:
        """The range that holds for this query's language."""
        if self.alphabetic is None or has_cjk(query):
            return self
        return Calibration(*self.alphabetic)

    def for_pair(self, first: str, second: str) -> Calibration:
        """The range for comparing two stored texts: the alphabetic one when neither is written in CJK characters."""
        return self.for_passages(cjk=has_cjk(first) or has_cjk(second))

    def for_passages(self, *, cjk: bool) -> Calibration:
        if cjk:
            return Calibration(*self.passages) if self.passages else Calibration(self.unrelated, self.same)
        if self.passages_alphabetic:
            return Calibration(*self.passages_alphabetic)
        return Calibration(*(self.alphabetic or (self.unrelated, self.same)))


@runtime_checkable
class Embedder(Protocol):
    model_id: str  # stored with the vectors; a store refuses vectors from another model
    dims: int
    calibration: Calibration
    # Characters of a text the model reads (see fit_input); an embedder without it gets DEFAULT_MAX_INPUT_CHARS.
    max_input_chars: int

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """(len(texts), dims) float32, rows L2-normalized."""
        ...

    def embed_query(self, text: str) -> np.ndarray:
        """(dims,) float32, L2-normalized."""
        ...


@runtime_checkable
class TokenWindow(Protocol):
    """An embedder that can count its own tokens reads at most `max_input_tokens` of them (fit_input cuts there)."""

    max_input_tokens: int

    def count_tokens(self, text: str, *, query: bool = False) -> int:
        """Tokens the model would feed for `text`, special tokens and the query/passage prefix included."""
        ...


@runtime_checkable
class QueryBatching(Protocol):
    """An embedder that embeds several queries in one model call (the scheduler batches waiting queries)."""

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """(len(texts), dims) float32, each row what embed_query gives for that text."""
        ...


@runtime_checkable
class QueriesAside(Protocol):
    """An embedder with a second engine for queries, beside the first: the scheduler gives it the queries that arrive
    while the first engine is busy, so that two model calls run at once (each on one core)."""

    query_engines: int  # 2 where the second engine helps (several cores), 1 where it does not

    def embed_queries_aside(self, texts: Sequence[str]) -> np.ndarray:
        """What embed_queries gives for `texts`, computed on the second engine."""
        ...


@runtime_checkable
class AsyncQueries(Protocol):
    """An embedder a coroutine can wait on for a query without holding a thread (the scheduler): searches waiting
    together are then all queued at once, and embedded together."""

    async def aembed_query(self, text: str) -> np.ndarray:
        """What embed_query gives, awaited."""
        ...


DEFAULT_MAX_INPUT_CHARS = 8000
_counts_tokens = CapabilityCheck[TokenWindow](TokenWindow)  # asked for every text embedded


def fit_input(embedder: Embedder, text: str, *, query: bool = False) -> str:
    """The prefix of `text` the embedder reads: its first `max_input_chars` characters, then, for an embedder that
    counts tokens, the longest prefix of those within `max_input_tokens`. Texts within both bounds come back as they
    are, so their vectors are exactly what the model gives for the whole text."""
    text = text[:getattr(embedder, "max_input_chars", DEFAULT_MAX_INPUT_CHARS)]
    if not _counts_tokens(embedder) or embedder.count_tokens(text, query=query) <= embedder.max_input_tokens:
        return text
    fits, too_long = 0, len(text)  # a bisection over prefix lengths: tokenizing 2,000 characters takes ~1 ms
    while too_long - fits > 1:
        middle = (fits + too_long) // 2
        if embedder.count_tokens(text[:middle], query=query) <= embedder.max_input_tokens:
            fits = middle
        else:
            too_long = middle
    return text[:fits]


def l2_normalize(matrix: np.ndarray) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=-1, keepdims=True)
    norms[norms == 0] = 1.0
    normalized: np.ndarray = matrix / norms  # numpy types arithmetic on keepdims norms as Any
    return normalized
