"""Hybrid recall: an exact vector search and a BM25 keyword search within the scope, fused (see fusion.py)."""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass

from jiyi.core.filters import Node
from jiyi.core.fusion import PathHit, fuse
from jiyi.core.text import has_cjk, normalize, query_terms, segment_for_index
from jiyi.embedders.base import Embedder
from jiyi.records import MemoryRecord, Scope, SearchHit
from jiyi.stores.base import MemoryStore

_PLURAL = re.compile(r"(?<=[^s])s$")
_SUFFIX = re.compile(r"(?:ing|ed|e)$")
# A vector hit that shares nothing measurable with the query still ranks, just below every real match.
MIN_VECTOR_RELEVANCE = 0.01


def _stem(word: str) -> str:
    """A crude stemmer, consistent on both sides (likes/liked/like → lik), to tell which query words a memory
    contains; FTS5 itself matched with Porter stems."""
    word = _PLURAL.sub("", word) if len(word) > 3 else word
    return _SUFFIX.sub("", word) if len(word) > 4 else word


def keyword_coverage(terms: Sequence[str], record: MemoryRecord) -> float:
    """Fraction of the query's words the memory contains: an absolute measure, unlike BM25's raw score."""
    if not terms:
        return 0.0
    text = normalize(record.content)
    words = {_stem(w) for w in segment_for_index(record.content)}
    found = sum(1 for t in terms if (t in text if has_cjk(t) else _stem(t) in words))
    # The keyword index matched at least one word, even where this simple check cannot see it.
    return max(found, 1) / len(terms)


@dataclass(frozen=True, slots=True)
class SearchRequest:
    query: str
    scope: Scope
    top_k: int = 20
    where: Node | None = None
    threshold: float | None = None
    include_expired: bool = False
    explain: bool = False


def hybrid_search(store: MemoryStore, embedder: Embedder, request: SearchRequest) -> list[SearchHit]:
    pool = max(request.top_k * 3, 30)
    timings: dict[str, float] = {}

    started = time.perf_counter()
    query_vector = embedder.embed_query(request.query)
    timings["embed_ms"] = (time.perf_counter() - started) * 1000

    started = time.perf_counter()
    vector_hits = store.vector_search(request.scope, query_vector, pool, request.where, request.include_expired)
    timings["vector_ms"] = (time.perf_counter() - started) * 1000

    started = time.perf_counter()
    terms = query_terms(request.query)
    keyword_hits = store.keyword_search(request.scope, terms, pool, request.where, request.include_expired)
    timings["keyword_ms"] = (time.perf_counter() - started) * 1000

    records = store.get_many([h.memory_id for h in vector_hits] + [h.memory_id for h in keyword_hits])
    calibration = embedder.calibration
    ranked = {
        "vector": [PathHit(h.memory_id, h.score, max(calibration.relevance(h.score), MIN_VECTOR_RELEVANCE))
                   for h in vector_hits if h.memory_id in records],
        "keyword": [PathHit(h.memory_id, h.score, keyword_coverage(terms, records[h.memory_id]))
                    for h in keyword_hits if h.memory_id in records],
    }
    hits = []
    for fused in fuse(ranked):
        if request.threshold is not None and fused.score < request.threshold:
            continue
        details = {"paths": fused.paths, "timings_ms": timings} if request.explain else {}
        hits.append(SearchHit(records[fused.memory_id], round(fused.score, 6), details))
        if len(hits) == request.top_k:
            break
    return hits
