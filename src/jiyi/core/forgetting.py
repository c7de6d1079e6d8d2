"""The forgetting curve: how much of a memory is still "there", R = e^(-t/S) (memory-service-design.md §4.1).

t is the time in days since the memory was last formed or reviewed (written, updated or returned to a caller: a review
restarts the curve, as in spaced repetition); S is its strength in days, which grows with importance, with every
review, and with the kind of memory (preferences and facts last longer than passing events), up to a cap. System and
core memories (the profile) do not decay.

Read-path ranking uses retention as one of its weights; the lifecycle's forgetting passes (issue 5) use the same curve.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime

from jiyi.records import Category, MemoryRecord, MemoryType

SECONDS_PER_DAY = 86_400.0


@dataclass(frozen=True, slots=True)
class ForgettingCurve:
    base_strength: float = 1.0  # days
    importance_factor: float = 2.0  # days of strength per point of importance (0.5 ordinary .. 2.5 core-worthy)
    review_bonus: float = 0.1  # days of strength per time the memory was returned to a caller
    max_strength: float = 10.0
    type_factors: dict[str, float] = field(default_factory=lambda: {
        MemoryType.PREFERENCE.value: 1.5,
        MemoryType.FACT.value: 1.3,
        MemoryType.SEMANTIC.value: 1.3,
    })
    lasting_categories: frozenset[str] = frozenset({Category.SYSTEM.value, Category.CORE.value})

    def strength(self, record: MemoryRecord) -> float:
        strength = (self.base_strength + self.importance_factor * max(record.importance, 0.0)
                    + self.review_bonus * max(record.access_count, 0))
        # The members themselves, not their .value: a StrEnum member hashes and compares as its value, and .value
        # is a property in Python code (~0.5 us), read twice per candidate of every search.
        strength *= self.type_factors.get(record.memory_type, 1.0)
        return min(strength, self.max_strength)

    def retention(self, record: MemoryRecord, now: datetime) -> float:
        """In (0, 1]; 1 for a memory formed or reviewed just now, and always for system and core memories."""
        if record.category in self.lasting_categories:  # as in strength(): the member, not its .value
            return 1.0
        # exp(-days since last_reinforced(record) / strength(record)), both written out here, the same operations in
        # the same order (max(x, 0) as a comparison, which keeps x unless 0 > x, as max() does): the read path asks
        # it of some 60 candidates a search, and the two calls and four max()/min() took 0.6 of its 1.5 us.
        latest = record.created_at
        for moment in (record.updated_at, record.last_accessed_at):
            if moment is not None and moment > latest:
                latest = moment
        seconds = (now - latest).total_seconds()
        days = (0.0 if seconds < 0.0 else seconds) / SECONDS_PER_DAY
        importance, reviews = record.importance, record.access_count
        strength = (self.base_strength + self.importance_factor * (0.0 if importance < 0.0 else importance)
                    + self.review_bonus * (0 if reviews < 0 else reviews))
        strength *= self.type_factors.get(record.memory_type, 1.0)
        if strength > self.max_strength:
            strength = self.max_strength
        return math.exp(-days / strength)


def last_reinforced(record: MemoryRecord) -> datetime:
    """When the memory was last written, updated or reviewed."""
    # Spelled out, not max() over a generator: the read path asks it of some 60 candidates a search.
    latest = record.created_at
    for moment in (record.updated_at, record.last_accessed_at):
        if moment is not None and moment > latest:
            latest = moment
    return latest
