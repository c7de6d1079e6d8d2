"""The bundled models load offline and put paraphrases, also across languages, closer than unrelated text."""

from __future__ import annotations

import numpy as np
import pytest

from jiyi import build_embedder
from jiyi.embedders.base import Calibration


@pytest.fixture(scope="module", params=["e5", "use"])
def model(request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    return build_embedder(request.param)


def test_shapes_and_normalization(model) -> None:  # type: ignore[no-untyped-def]
    docs = model.embed_documents(["用户对海鲜过敏", "I live in Shanghai"])
    query = model.embed_query("海鲜")
    assert docs.shape == (2, model.dims) and query.shape == (model.dims,)
    assert docs.dtype == np.float32
    assert np.allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-4)
    assert model.embed_documents([]).shape == (0, model.dims)


@pytest.mark.parametrize("query, related, unrelated", [
    ("晚上睡不着觉", "用户最近失眠", "用户喜欢打篮球"),
    ("what food am I allergic to", "I am allergic to seafood", "My sister lives in Vancouver"),
    ("我对什么过敏", "I am allergic to seafood", "I bought a new camera"),
    ("where do I live", "用户住在上海", "用户喜欢吃火锅"),
])
def test_related_beats_unrelated(model, query: str, related: str, unrelated: str) -> None:  # type: ignore[no-untyped-def]
    docs = model.embed_documents([related, unrelated])
    scores = docs @ model.embed_query(query)
    assert scores[0] > scores[1]


def test_deterministic(model) -> None:  # type: ignore[no-untyped-def]
    a = model.embed_query("same text 同样的文本")
    b = model.embed_query("same text 同样的文本")
    assert np.array_equal(a, b)


def test_a_query_s_language_picks_its_range() -> None:
    calibration = Calibration(unrelated=0.80, same=0.90, alphabetic=(0.70, 0.80))
    assert calibration.for_query("我妹妹住哪") is calibration
    assert calibration.for_query("Where does my sister live?").relevance(0.75) == pytest.approx(0.5)
    assert calibration.for_query("Where does my sister live?").relevance(0.75) > calibration.relevance(0.75)
    assert Calibration(0.1, 0.5).for_query("hello") == Calibration(0.1, 0.5)  # one range for every language


def test_two_stored_texts_are_compared_on_the_range_for_pairs() -> None:
    calibration = Calibration(0.80, 0.90, alphabetic=(0.70, 0.80), passages=(0.93, 0.97),
                              passages_alphabetic=(0.85, 0.95))
    assert calibration.for_pair("用户住在杭州", "用户养了一只猫") == Calibration(0.93, 0.97)
    assert calibration.for_pair("User lives in Hangzhou", "用户养了一只猫") == Calibration(0.93, 0.97)  # either CJK
    assert calibration.for_pair("User lives in Hangzhou", "User has a cat") == Calibration(0.85, 0.95)
    # Without ranges of its own, a pair is compared on the query range of its language.
    assert Calibration(0.80, 0.90, alphabetic=(0.70, 0.80)).for_pair("a cat", "a dog") == Calibration(0.70, 0.80)
    assert Calibration(0.1, 0.5).for_pair("猫", "狗") == Calibration(0.1, 0.5)


@pytest.mark.parametrize("name", ["e5", "use"])
def test_unrelated_memories_of_one_user_are_not_alike(name: str) -> None:
    """On the query range, e5 made every pair of Chinese memories "the same" (bench/pairs.py: unrelated median
    cosine 0.916 against a query range topping out at 0.90)."""
    embedder = build_embedder(name)
    for first, second in [("用户养了一只橘猫叫年糕", "用户正在准备雅思考试"), ("用户的妈妈住在成都", "用户不吃香菜"),
                          ("The user has an orange cat", "The user is preparing for the IELTS exam")]:
        vectors = embedder.embed_documents([first, second])
        cosine = float(vectors[0] @ vectors[1])
        assert embedder.calibration.for_pair(first, second).relevance(cosine) < 0.5, (first, second, cosine)
    same = embedder.embed_documents(["用户对花生过敏", "用户对花生过敏。"])
    assert embedder.calibration.for_pair("用户对花生过敏", "用户对花生过敏。").relevance(float(same[0] @ same[1])) > 0.9


def test_e5_ranges_follow_its_measured_cosines() -> None:
    # English: unrelated median 0.761, relevant median 0.832; Chinese 0.835 / 0.895 (bench/data/embedder_eval.json).
    e5 = build_embedder("e5").calibration
    assert e5.for_query("my dog").relevance(0.832) == pytest.approx(e5.for_query("我的狗").relevance(0.895), abs=0.02)
