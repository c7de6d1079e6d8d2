"""The reranker contract: score search candidates against the query, as an optional second stage after retrieval.
A reranker only scores; the caller sorts, fuses and, when it fails, keeps the first-stage order."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from jiyi.errors import BackendUnavailable


class RerankError(BackendUnavailable):
    """The reranker could not score these documents: unreachable, too slow, an HTTP error, or an unreadable answer."""


@runtime_checkable
class Reranker(Protocol):
    model_id: str

    async def rerank(self, query: str, documents: Sequence[str], *, timeout: float | None = None) -> list[float]:
        """One relevance score in [0, 1] per document, aligned with `documents` (not reordered)."""
        ...

    async def aclose(self) -> None:
        ...
