"""Hybrid recall: an exact vector search and a BM25 keyword search within the scope, fused (see fusion.py).

The two recalls run one after the other in one worker thread: on a 2-core machine running them in parallel was slower
(they share the store's lock, and a second thread competes with the embedder's own threads; bench/scale.py).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from jiyi.core.filters import Node
from jiyi.core.fusion import PathHit, fuse
from jiyi.core.text import analyze_for_index, has_cjk, normalize, query_terms
from jiyi.embedders.base import Embedder
from jiyi.records import MemoryRecord, Scope, SearchHit
from jiyi.stores.base import MemoryStore, ScoredId

# A vector hit that shares nothing measurable with the query still ranks, just below every real match.
MIN_VECTOR_RELEVANCE = 0.01
COMMON_WORD_SHARE = 0.1


def inverse_document_frequencies(frequencies: dict[str, int], total: int, terms: Sequence[str]) -> dict[str, float]:
    """BM25's IDF: always > 0, highest for words no memory has."""
    idf = {}
    for term in terms:
        df = frequencies.get(term, 0)
        idf[term] = math.log(1 + (max(total - df, 0) + 0.5) / (df + 0.5))
    return idf


@lru_cache(maxsize=50_000)
def _indexed_words(content: str) -> frozenset[str]:
    # The same memories come back as candidates search after search: segment each once.
    return frozenset(analyze_for_index(content).terms.split())


def keyword_relevance(terms: Sequence[str], idf: dict[str, float], record: MemoryRecord) -> float:
    """The IDF-weighted share of the query's words the memory contains: an absolute measure, unlike BM25's raw
    score. Weighting matters: sharing "like" or "去" with a memory says little, sharing "Jesica" or "失眠" a lot."""
    if not terms:
        return 0.0
    text = normalize(record.content)
    words = _indexed_words(record.content)
    weights = [idf.get(t, 1.0) for t in terms]
    found = [w for t, w in zip(terms, weights, strict=True) if t in words or (has_cjk(t) and t in text)]
    # The keyword index matched at least one word, even where this check cannot see it.
    return max(sum(found), min(weights)) / sum(weights)


@dataclass(frozen=True, slots=True)
class SearchRequest:
    query: str
    scope: Scope
    top_k: int = 20
    where: Node | None = None
    threshold: float | None = None
    include_expired: bool = False
    explain: bool = False


@dataclass(frozen=True, slots=True)
class PathResult:
    hits: list[ScoredId]
    elapsed_ms: float
    terms: tuple[str, ...] = ()
    idf: dict[str, float] = field(default_factory=dict)
    embed_ms: float = 0.0


def recall_by_vector(store: MemoryStore, embedder: Embedder, request: SearchRequest, pool: int) -> PathResult:
    started = time.perf_counter()
    query_vector = embedder.embed_query(request.query)
    embedded = time.perf_counter()
    hits = store.vector_search(request.scope, query_vector, pool, request.where, request.include_expired)
    return PathResult(hits, (time.perf_counter() - embedded) * 1000, embed_ms=(embedded - started) * 1000)


def recall_by_keyword(store: MemoryStore, request: SearchRequest, pool: int) -> PathResult:
    started = time.perf_counter()
    terms = query_terms(request.query)
    frequencies, total = store.document_frequencies(terms)
    # Words in a large share of all memories (去, 花, "like") cost the most to match and say the least; search with the
    # others when there are any. They still count, lightly, in keyword_relevance.
    informative = [t for t in terms if frequencies.get(t, 0) <= COMMON_WORD_SHARE * total] or terms
    hits = store.keyword_search(request.scope, informative, pool, request.where, request.include_expired)
    idf = inverse_document_frequencies(frequencies, total, terms)
    return PathResult(hits, (time.perf_counter() - started) * 1000, tuple(terms), idf)


def candidate_pool(top_k: int) -> int:
    return max(top_k * 3, 30)


def fuse_paths(
    store: MemoryStore, embedder: Embedder, request: SearchRequest, vector: PathResult, keyword: PathResult
) -> list[SearchHit]:
    records = store.get_many([h.memory_id for h in vector.hits] + [h.memory_id for h in keyword.hits])
    calibration = embedder.calibration
    ranked = {
        "vector": [PathHit(h.memory_id, h.score, max(calibration.relevance(h.score), MIN_VECTOR_RELEVANCE))
                   for h in vector.hits if h.memory_id in records],
        "keyword": [PathHit(h.memory_id, h.score, keyword_relevance(keyword.terms, keyword.idf, records[h.memory_id]))
                    for h in keyword.hits if h.memory_id in records],
    }
    timings = {"embed_ms": round(vector.embed_ms, 3), "vector_ms": round(vector.elapsed_ms, 3),
               "keyword_ms": round(keyword.elapsed_ms, 3)}
    hits = []
    for fused in fuse(ranked):
        if request.threshold is not None and fused.score < request.threshold:
            continue
        details = {"paths": fused.paths, "timings_ms": timings} if request.explain else {}
        hits.append(SearchHit(records[fused.memory_id], round(fused.score, 6), details))
        if len(hits) == request.top_k:
            break
    return hits


def hybrid_search(store: MemoryStore, embedder: Embedder, request: SearchRequest) -> list[SearchHit]:
    pool = candidate_pool(request.top_k)
    vector = recall_by_vector(store, embedder, request, pool)
    keyword = recall_by_keyword(store, request, pool)
    started = time.perf_counter()
    hits = fuse_paths(store, embedder, request, vector, keyword)
    if request.explain:
        for hit in hits:
            hit.details["timings_ms"]["fuse_ms"] = round((time.perf_counter() - started) * 1000, 3)
    return hits
