"""After fusion: weigh relevance by what the memory is worth now — retention, importance and recency.

Relevance stays in charge. Each weight is the share of the score it may take away: with the defaults a memory that is
fully forgotten, unimportant and old keeps 75 % of its relevance-based score, so the weights break near-ties (a fresh,
important memory before a stale, trivial one of the same relevance) without burying a clearly better match.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime

from jiyi.core.forgetting import SECONDS_PER_DAY, ForgettingCurve
from jiyi.records import MemoryRecord

MAX_IMPORTANCE = 2.5  # the companion seed's scale: 2.5 is reviewed for promotion to core
_MINUS_LN2 = -math.log(2)


@dataclass(frozen=True, slots=True)
class RankingWeights:
    retention: float = 0.10
    importance: float = 0.08
    recency: float = 0.07
    recency_half_life_days: float = 30.0
    curve: ForgettingCurve = field(default_factory=ForgettingCurve)

    def __post_init__(self) -> None:
        weights = (self.retention, self.importance, self.recency)
        if any(w < 0 for w in weights) or sum(weights) > 1:
            raise ValueError("ranking weights must be >= 0 and sum to at most 1")

    def factors(self, record: MemoryRecord, now: datetime) -> dict[str, float]:
        """Each factor in [0, 1]."""
        happened = record.event_time or record.created_at
        age_days = max((now - happened).total_seconds(), 0.0) / SECONDS_PER_DAY
        return {
            "retention": self.curve.retention(record, now),
            "importance": min(max(record.importance, 0.0) / MAX_IMPORTANCE, 1.0),
            "recency": math.exp(_MINUS_LN2 * age_days / self.recency_half_life_days),
        }

    def weigh(self, relevance_score: float, record: MemoryRecord, now: datetime) -> tuple[float, dict[str, float]]:
        factors = self.factors(record, now)
        multiplier = self._multiplier(factors["retention"], factors["importance"], factors["recency"])
        return relevance_score * multiplier, factors

    def weighed(self, relevance_score: float, record: MemoryRecord, now: datetime) -> float:
        """weigh()'s score alone, to the last bit: the same factors and sum, without their dict (the read path weighs
        some 60 candidates a search and reads the factors only to explain)."""
        happened = record.event_time or record.created_at
        age = (now - happened).total_seconds()
        age_days = (0.0 if age < 0.0 else age) / SECONDS_PER_DAY  # max(age, 0.0): age unless 0 > age
        importance = record.importance
        importance = (0.0 if importance < 0.0 else importance) / MAX_IMPORTANCE
        return relevance_score * self._multiplier(
            self.curve.retention(record, now), 1.0 if importance > 1.0 else importance,  # min(importance, 1.0)
            math.exp(_MINUS_LN2 * age_days / self.recency_half_life_days))

    def _multiplier(self, retention: float, importance: float, recency: float) -> float:
        # A tuple of the products in factors' order, not a generator of getattr: the same sum, a third of the time,
        # some 60 times a search.
        return 1.0 - sum((self.retention * (1.0 - retention), self.importance * (1.0 - importance),
                          self.recency * (1.0 - recency)))
