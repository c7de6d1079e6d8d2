"""Conflicts between memories that cannot both be true now (memory-service-design.md §5, issue 5).

Two memories conflict when they give a single-valued attribute two values ("用户住在无锡" / "用户搬到了深圳": the
`slot:` tag, or the slot read back from the text) or state a thing and its reversal ("用户吃素" / "用户不再吃素").
The newer wins by default; an older memory wins when it is clearly more certain (confidence higher by at least
CONFIDENCE_MARGIN, e.g. a verified fact against a guess). Change over time is not a conflict: moods, plans and
events are about their moment and coexist with their times ("十天前很紧张" and "现在很放松"). The write path applies
the same rules to each new fact (core/offline.py); this catches what it could not see, e.g. memories written by an
LLM or imported, and pairs that were never among each other's nearest neighbours.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from jiyi.core.facts import FactKind, slot_in
from jiyi.core.lifecycle import TRANSIENT_KINDS
from jiyi.core.offline import structure_of
from jiyi.records import Category, MemoryRecord

CONFIDENCE_MARGIN = 0.2
EXTRACTED_KINDS = frozenset(kind.value for kind in FactKind)


@dataclass(frozen=True, slots=True)
class Resolution:
    loser: MemoryRecord
    winner: MemoryRecord
    reason: str


def slot_of(record: MemoryRecord) -> str | None:
    slot = slot_in(record.tags)
    if slot:
        return slot
    fact = structure_of(record.content)
    return fact.slot if fact else None


def _when(record: MemoryRecord) -> datetime:
    return max(record.event_time or record.created_at, record.updated_at or record.created_at)


def _winner(a: MemoryRecord, b: MemoryRecord) -> tuple[MemoryRecord, MemoryRecord, str]:
    newer, older = (a, b) if (_when(a), a.id) >= (_when(b), b.id) else (b, a)
    if older.confidence - newer.confidence >= CONFIDENCE_MARGIN:
        return older, newer, f"more certain ({older.confidence:.2f} vs {newer.confidence:.2f})"
    return newer, older, "newer"


def _comparable(record: MemoryRecord) -> bool:
    # Only extracted facts (tagged with their kind): what a caller stored verbatim (infer=False) is kept as it was
    # said, and a pile of transcripts is not a set of claims.
    return (record.category is Category.FACT and record.deleted_at is None
            and bool(EXTRACTED_KINDS.intersection(record.tags))
            and not TRANSIENT_KINDS.intersection(record.tags) and "pattern" not in record.tags)


def find_conflicts(records: Sequence[MemoryRecord]) -> list[Resolution]:
    """For each group of conflicting memories of one person (user or character), the losers and why."""
    by_slot: dict[tuple[str, str | None, str], list[MemoryRecord]] = defaultdict(list)
    by_topic: dict[tuple[str, str | None, str], list[MemoryRecord]] = defaultdict(list)
    for record in records:
        if not _comparable(record):
            continue
        about = (record.role or "user", record.scope.agent_id if record.role == "assistant" else None)
        slot = slot_of(record)
        if slot:
            by_slot[(*about, slot)].append(record)
            continue
        fact = structure_of(record.content)
        if fact is not None and fact.topic:
            by_topic[(*about, fact.topic.lower())].append(record)
    resolutions = []
    for (_, _, slot), group in by_slot.items():
        if len(group) < 2:
            continue
        winner = group[0]
        for other in group[1:]:
            winner, _, _ = _winner(winner, other)
        for loser in group:
            if loser.id != winner.id:
                _, _, why = _winner(winner, loser)
                reason = f"{slot} conflict, kept the {why} value: {winner.content}"
                resolutions.append(Resolution(loser, winner, reason))
    for group in by_topic.values():
        negated = {r.id: bool(fact.negated) for r in group if (fact := structure_of(r.content)) is not None}
        if len(set(negated.values())) < 2:
            continue  # all saying the same thing is for consolidation, not a conflict
        winner = group[0]
        for other in group[1:]:
            winner, _, _ = _winner(winner, other)
        for loser in group:
            if negated[loser.id] != negated[winner.id]:
                _, _, why = _winner(winner, loser)
                resolutions.append(Resolution(loser, winner, f"contradicts the {why} memory: {winner.content}"))
    return resolutions
