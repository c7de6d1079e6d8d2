"""Consolidation: several memories that say nearly the same thing become one (memory-service-design.md §5.1).

Similarity is measured on the embedder's own scale (Calibration.relevance), not on raw cosine: e5 puts unrelated
sentences at 0.8 cosine, so the design's "similarity > 0.85" means a calibrated relevance above 0.85 here.
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


def similar_clusters(vectors: np.ndarray, calibration: Calibration, similarity: float = SIMILARITY,
                     min_size: int = MIN_CLUSTER) -> list[list[int]]:
    """Groups of row indexes whose members are all similar to the group's first member (rows L2-normalised).
    Each row is in at most one group; groups smaller than `min_size` are not returned."""
    if len(vectors) < min_size:
        return []
    cosine = vectors @ vectors.T
    relevance = np.clip((cosine - calibration.unrelated) / max(calibration.same - calibration.unrelated, 1e-9), 0, 1)
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


def _words(record: MemoryRecord) -> frozenset[str]:
    return frozenset(analyze_for_index(record.content).terms.split())


def most_informative(records: Sequence[MemoryRecord]) -> MemoryRecord:
    return max(records, key=lambda r: (len(_words(r)), r.created_at.timestamp()))


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
