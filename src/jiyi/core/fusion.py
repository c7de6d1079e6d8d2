"""Fusing ranked lists from several recall paths into one ordering with an absolute score.

Plain reciprocal-rank fusion orders well but its score says nothing about relevance: the best of ten irrelevant
memories still gets a top score. Here each path's reciprocal-rank contribution is scaled by that path's own
relevance in [0, 1] (calibrated cosine, keyword coverage), so the fused score is in [0, 1], ranks like RRF when
the paths agree, and stays low when nothing is really relevant — which is what `threshold` needs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

RRF_K = 60


@dataclass(frozen=True, slots=True)
class PathHit:
    memory_id: str
    raw_score: float  # what the path measured (cosine, bm25, ...)
    relevance: float  # the same, mapped to [0, 1]


@dataclass(slots=True)
class Fused:
    memory_id: str
    score: float
    paths: dict[str, dict[str, float]] = field(default_factory=dict)


def fuse(
    ranked: Mapping[str, Sequence[PathHit]],
    weights: Mapping[str, float] | None = None,
    k: int = RRF_K,
    norm: float | None = None,
) -> list[Fused]:
    """Fuse per-path hit lists (each sorted best first). Ties break on memory id, so input order never matters.
    `norm` (the sum of the path weights by default) scales scores into [0, 1]; a smaller one lets some paths add to
    a score without diluting the others'. Scores are capped at 1."""
    weights = weights or {}
    total_weight = norm or sum(weights.get(path, 1.0) for path in ranked) or 1.0
    fused: dict[str, Fused] = {}
    for path, hits in ranked.items():
        weight = weights.get(path, 1.0)
        for rank, hit in enumerate(hits, start=1):
            entry = fused.setdefault(hit.memory_id, Fused(hit.memory_id, 0.0))
            relevance = min(max(hit.relevance, 0.0), 1.0)
            entry.score += _share(weight, relevance, k, rank, total_weight)
            entry.paths[path] = {"rank": rank, "score": round(hit.raw_score, 6), "relevance": round(relevance, 6)}
    for entry in fused.values():
        entry.score = min(entry.score, 1.0)
    return sorted(fused.values(), key=lambda f: (-f.score, f.memory_id))


def fused_scores(
    ranked: Mapping[str, Sequence[PathHit]],
    weights: Mapping[str, float] | None = None,
    k: int = RRF_K,
    norm: float | None = None,
) -> dict[str, float]:
    """fuse()'s scores by memory id, in its order and to the last bit (the same sums in the same order), without
    its per-path details: what a caller that reads the scores alone needs (the read path fuses three times a
    search)."""
    weights = weights or {}
    total_weight = norm or sum(weights.get(path, 1.0) for path in ranked) or 1.0
    scores: dict[str, float] = {}
    get = scores.get
    above = k + 1
    for path, hits in ranked.items():
        weight = weights.get(path, 1.0)
        # _share() spelled out, the same operations in the same order: this runs for every hit of every path, three
        # times a search. `below` is k + rank; the relevance is clamped to [0, 1] as min(max(r, 0.0), 1.0) does.
        for below, hit in enumerate(hits, start=above):
            relevance = hit.relevance
            if relevance < 0.0:
                relevance = 0.0
            elif relevance > 1.0:
                relevance = 1.0
            memory_id = hit.memory_id
            scores[memory_id] = get(memory_id, 0.0) + weight * relevance * above / below / total_weight
    capped = [(memory_id, min(score, 1.0)) for memory_id, score in scores.items()]
    return dict(sorted(capped, key=lambda item: (-item[1], item[0])))  # in fuse()'s order: callers may iterate


def _share(weight: float, relevance: float, k: int, rank: int, total_weight: float) -> float:
    """A path's contribution to a memory's fused score: its reciprocal rank, scaled by its weight and relevance."""
    return weight * relevance * (k + 1) / (k + rank) / total_weight
