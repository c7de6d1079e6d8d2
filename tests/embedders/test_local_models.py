"""The bundled models load offline and put paraphrases, also across languages, closer than unrelated text."""

from __future__ import annotations

import numpy as np
import pytest

from jiyi import build_embedder


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
