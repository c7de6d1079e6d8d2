from __future__ import annotations

import math
from datetime import datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from jiyi.core.forgetting import SECONDS_PER_DAY, ForgettingCurve, last_reinforced
from jiyi.core.ranking import RankingWeights
from jiyi.records import Category, MemoryRecord, MemoryType, Scope, utcnow

NOW = utcnow()
curve = ForgettingCurve()


def record(days_old: float = 0.0, **fields: object) -> MemoryRecord:
    return MemoryRecord(content="用户喜欢喝茶", scope=Scope("u"), created_at=NOW - timedelta(days=days_old),
                        **fields)  # type: ignore[arg-type]


@given(st.floats(0, 400), st.floats(0, 400), st.floats(0, 2.5), st.integers(0, 50))
def test_retention_falls_with_time(a: float, b: float, importance: float, reviews: int) -> None:
    older, newer = sorted((a, b), reverse=True)
    r_old = curve.retention(record(older, importance=importance, access_count=reviews), NOW)
    r_new = curve.retention(record(newer, importance=importance, access_count=reviews), NOW)
    assert 0.0 <= r_old <= r_new <= 1.0


@given(st.floats(0.1, 400), st.floats(0, 2.5), st.floats(0, 2.5), st.integers(0, 30), st.integers(0, 30))
def test_retention_grows_with_importance_and_reviews(days: float, i1: float, i2: float, a1: int, a2: int) -> None:
    low, high = sorted((i1, i2))
    few, many = sorted((a1, a2))
    weak = curve.retention(record(days, importance=low, access_count=few), NOW)
    strong = curve.retention(record(days, importance=high, access_count=many), NOW)
    assert strong >= weak


def test_preferences_outlast_passing_events_and_core_never_fades() -> None:
    month = 30
    event = curve.retention(record(month, importance=1.5, memory_type=MemoryType.EPISODIC), NOW)
    preference = curve.retention(record(month, importance=1.5, memory_type=MemoryType.PREFERENCE), NOW)
    assert 0 < event < preference < 1
    assert curve.retention(record(3650, importance=0.1, category=Category.CORE), NOW) == 1.0
    assert curve.retention(record(0), NOW) == 1.0


def test_a_review_restarts_the_curve() -> None:
    forgotten = record(60, importance=1.5)
    reviewed = record(60, importance=1.5, last_accessed_at=NOW - timedelta(days=1))
    assert curve.retention(reviewed, NOW) > 0.75 > 0.01 > curve.retention(forgotten, NOW)


def test_weights_break_ties_but_never_bury_relevance() -> None:
    weights = RankingWeights()
    fresh = record(0, importance=2.5, access_count=3)
    stale = record(400, importance=0.1)
    fresh_score, factors = weights.weigh(0.6, fresh, NOW)
    stale_score, _ = weights.weigh(0.6, stale, NOW)
    assert fresh_score > stale_score
    assert stale_score >= 0.6 * (1 - weights.retention - weights.importance - weights.recency) - 1e-9
    assert weights.weigh(0.9, stale, NOW)[0] > fresh_score  # clearly more relevant still wins
    assert set(factors) == {"retention", "importance", "recency"} and all(0 <= v <= 1 for v in factors.values())


def test_weights_must_leave_relevance_in_charge() -> None:
    try:
        RankingWeights(retention=0.6, importance=0.3, recency=0.2)
    except ValueError as exc:
        assert "at most 1" in str(exc)
    else:
        raise AssertionError("weights summing over 1 were accepted")


def _reference_retention(record: MemoryRecord, now: datetime) -> float:
    """ForgettingCurve.retention as it was written before it spelled strength() and last_reinforced() out."""
    if record.category in curve.lasting_categories:
        return 1.0
    days = max((now - last_reinforced(record)).total_seconds(), 0.0) / SECONDS_PER_DAY
    return math.exp(-days / curve.strength(record))


_MOMENTS = st.one_of(st.none(), st.floats(-30, 400).map(lambda days: NOW - timedelta(days=days)))


@given(st.floats(-30, 400), _MOMENTS, _MOMENTS, _MOMENTS, st.floats(-1, 4), st.integers(-3, 60),
       st.sampled_from(list(MemoryType)), st.sampled_from(list(Category)), st.floats(0, 1))
def test_the_read_path_s_weighing_is_the_explained_one_to_the_bit(
        days_old: float, updated: datetime | None, accessed: datetime | None, happened: datetime | None,
        importance: float, reviews: int, kind: MemoryType, category: Category, relevance: float) -> None:
    """weighed() (the score alone, the read path's) is weigh()'s score, and retention() the curve as first written,
    bit for bit: same factors, same operations in the same order. Times in the future (an event to come), negative
    importance and access counts included."""
    weights = RankingWeights()
    one = record(days_old, updated_at=updated, last_accessed_at=accessed, event_time=happened,
                 importance=importance, access_count=reviews, memory_type=kind, category=category)
    assert curve.retention(one, NOW) == _reference_retention(one, NOW)
    assert weights.weighed(relevance, one, NOW) == weights.weigh(relevance, one, NOW)[0]
