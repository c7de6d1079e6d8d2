"""Consolidation: several memories that say nearly the same thing become one (memory-service-design.md §5.1).

Similarity is measured on the embedder's own scale for two stored texts (Calibration.for_pair), not on raw cosine:
e5 puts two unrelated Chinese memories at 0.9 cosine, so the design's "similarity > 0.85" means a calibrated relevance
above 0.85 on the range measured for memory pairs of the two texts' language.
Offline, the merged memory is the most informative member (the one with the most distinct words; the newest on a
tie), carrying every member's provenance; an LLM, when configured, may write the merged sentence instead.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from jiyi.embedders.base import Calibration
from jiyi.records import MemoryRecord, SourceRef
from jiyi.text import analyze_for_index

SIMILARITY = 0.85
MIN_CLUSTER = 3


def similar_clusters(vectors: np.ndarray, calibration: Calibration, cjk: Sequence[bool],
                     similarity: float = SIMILARITY, min_size: int = MIN_CLUSTER) -> list[list[int]]:
    """Groups of row indexes whose members are all similar to the group's first member (rows L2-normalised; `cjk`
    says per row whether its text is written in CJK characters). Each row is in at most one group; groups smaller
    than `min_size` are not returned."""
    if len(vectors) < min_size:
        return []
    cosine = vectors @ vectors.T
    relevance = np.clip(_pair_relevance(cosine, calibration, np.asarray(cjk, dtype=bool)), 0, 1)
    taken = np.zeros(len(vectors), dtype=bool)
    clusters = []
    # The row with the most near neighbours seeds the first group: a dense cluster is found whole.
    for seed in np.argsort(-(relevance > similarity).sum(axis=1), kind="stable"):
        if taken[seed]:
            continue
        members = [int(j) for j in np.flatnonzero((relevance[seed] > similarity) & ~taken)]
        if seed not in members:
            members.insert(0, int(seed))
        if len(members) >= min_size:
            taken[members] = True
            clusters.append(sorted(members))
    return clusters


def _pair_relevance(cosine: np.ndarray, calibration: Calibration, cjk: np.ndarray) -> np.ndarray:
    """Each pair on its language's range: the alphabetic one when neither text is CJK (Calibration.for_pair)."""
    either_cjk = cjk[:, None] | cjk[None, :]
    chinese, alphabetic = calibration.for_passages(cjk=True), calibration.for_passages(cjk=False)
    unrelated = np.where(either_cjk, chinese.unrelated, alphabetic.unrelated)
    span = np.where(either_cjk, chinese.same - chinese.unrelated, alphabetic.same - alphabetic.unrelated)
    return (cosine - unrelated) / np.maximum(span, 1e-9)


def _words(record: MemoryRecord) -> frozenset[str]:
    return frozenset(analyze_for_index(record.content).terms.split())


def _informativeness(record: MemoryRecord) -> tuple[int, float]:
    """The most distinct words first, the newest on a tie."""
    return len(_words(record)), record.created_at.timestamp()


def foldable(cluster: Sequence[MemoryRecord],
             min_size: int = MIN_CLUSTER) -> list[tuple[MemoryRecord, list[MemoryRecord]]]:
    """Within a cluster of similar vectors, each keeper (the most informative first) with the members it says
    (said_by) that no earlier keeper took, when they make a group of `min_size`. A cluster may hold several such
    groups: where an embedder finds a whole store "similar" (e5 puts unrelated Chinese memories at 0.9 cosine), one
    keeper for all of it would leave every real near-duplicate in place."""
    taken: set[str] = set()
    groups = []
    for keeper in sorted(cluster, key=_informativeness, reverse=True):
        if keeper.id in taken:
            continue
        others = [r for r in said_by(keeper, cluster) if r.id not in taken]
        if len(others) >= min_size - 1:
            taken.update([keeper.id, *(r.id for r in others)])
            groups.append((keeper, others))
    return groups


def said_by(keeper: MemoryRecord, records: Sequence[MemoryRecord]) -> list[MemoryRecord]:
    """The records whose every word the keeper also has: folding them into it loses nothing. Vectors alone would
    fold "用户住在杭州" into "用户住在上海" (e5 puts them at 0.9 cosine); the words tell them apart."""
    words = _words(keeper)
    return [r for r in records if r.id != keeper.id and _words(r) <= words]


def union_provenance(records: Sequence[MemoryRecord]) -> list[SourceRef]:
    seen: dict[str, SourceRef] = {}
    for record in records:
        for ref in record.provenance:
            seen.setdefault(ref.message_id, ref)
    return list(seen.values())
