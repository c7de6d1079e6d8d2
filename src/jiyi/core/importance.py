"""How important a new memory is: the design's four measures, weighted (memory-service-design.md §3.2).

    scarcity   0.25   1 − its similarity to the most similar memory the user already has (calibrated)
    impact     0.35   by kind: a preference or a health constraint shapes every later reply, an event one
    recency    0.20   1 when it is new, falling to 0 over 30 days (new memories are scored when written)
    certainty  0.20   how definite the statement is: the extractor's own confidence, less for hedged wording

The score in [0, 1] is put on the companion seed's importance scale (stored_importance): 0.5 + 2 × score, so
an ordinary fact lands near 1.5 and only a rare, definite, high-impact one comes near 2.5, where it is reviewed for
promotion to core. Scores are rounded to 3 places.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from jiyi.core.forgetting import SECONDS_PER_DAY

IMPACT_BY_KIND = {
    "health": 1.0, "preference": 0.9, "personal": 0.85, "relationship": 0.8, "persona": 0.8, "pattern": 0.7,
    "other": 0.5, "plan": 0.45, "event": 0.35, "state": 0.3,
}
DEFAULT_IMPACT = 0.5
_HEDGES = re.compile(r"可能|也许|大概|好像|似乎|说不定|不太确定|应该是|或许|\b(?:maybe|perhaps|probably|might|i think|"
                     r"i guess|not sure|kind of|sort of|possibly)\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class ImportanceWeights:
    scarcity: float = 0.25
    impact: float = 0.35
    recency: float = 0.20
    certainty: float = 0.20
    recency_days: float = 30.0

    def __post_init__(self) -> None:
        if abs(self.scarcity + self.impact + self.recency + self.certainty - 1.0) > 1e-6:
            raise ValueError("importance weights must sum to 1")


def impact_of(kinds: list[str] | tuple[str, ...]) -> float:
    known = [IMPACT_BY_KIND[k] for k in kinds if k in IMPACT_BY_KIND]
    return max(known) if known else DEFAULT_IMPACT


def certainty_of(text: str, confidence: float) -> float:
    """The extractor's confidence, lowered by a quarter for hedged wording ("可能", "I think")."""
    certainty = min(max(confidence, 0.0), 1.0)
    return certainty * 0.75 if _HEDGES.search(text) else certainty


def importance_score(*, kinds: list[str] | tuple[str, ...], text: str, confidence: float, max_similarity: float,
                     happened: datetime | None = None, now: datetime | None = None,
                     weights: ImportanceWeights | None = None) -> float:
    weights = weights or ImportanceWeights()
    recency = 1.0
    if happened is not None and now is not None:
        age_days = max((now - happened).total_seconds(), 0.0) / SECONDS_PER_DAY
        recency = max(0.0, 1.0 - age_days / weights.recency_days)
    score = (weights.scarcity * (1.0 - min(max(max_similarity, 0.0), 1.0))
             + weights.impact * impact_of(kinds)
             + weights.recency * recency
             + weights.certainty * certainty_of(text, confidence))
    return round(min(max(score, 0.0), 1.0), 3)


def on_seed_scale(score: float) -> float:
    """[0, 1] → the companion seed's importance scale [0.5, 2.5]."""
    return round(0.5 + 2.0 * min(max(score, 0.0), 1.0), 3)
