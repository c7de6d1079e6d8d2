"""Rerankers picked by one string or a mem0 entry, through the same registry custom ones use."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import jiyi.rerankers
from jiyi.errors import ConfigError
from jiyi.llms.scripted import ScriptedLLM
from jiyi.rerankers import HTTP_PRESETS, Reranker, build_reranker, register_reranker
from jiyi.rerankers.http import HttpReranker
from jiyi.rerankers.llm import LLMReranker
from jiyi.rerankers.overlap import OverlapReranker, overlap_score
from jiyi.testing.fake_openai import FakeOpenAI

KEY = "sk-build-5b7d"


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """Registrations made by a test stay in that test."""
    monkeypatch.setattr(jiyi.rerankers, "_REGISTRY", dict(jiyi.rerankers._REGISTRY))


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


def test_the_public_api_is_pinned() -> None:
    assert set(jiyi.rerankers.__all__) == {"HTTP_PRESETS", "RerankError", "Reranker", "RerankerFactory",
                                           "build_reranker", "register_reranker"}


@pytest.mark.parametrize("spec, base_url, model, request_format, logits", [
    ("jina", "https://api.jina.ai/v1", "jina-reranker-v2-base-multilingual", "cohere", None),
    ("jina:jina-reranker-m0", "https://api.jina.ai/v1", "jina-reranker-m0", "cohere", None),
    ("cohere:rerank-multilingual-v3.0", "https://api.cohere.com/v2", "rerank-multilingual-v3.0", "cohere", None),
    ("siliconflow:BAAI/bge-reranker-v2-m3", "https://api.siliconflow.cn/v1", "BAAI/bge-reranker-v2-m3", "cohere",
     None),
    ("vllm:BAAI/bge-reranker-v2-m3", "http://localhost:8000/v1", "BAAI/bge-reranker-v2-m3", "cohere", None),
    ("llamacpp", "http://localhost:8080/v1", "", "cohere", True),
    ("tei", "http://localhost:8080", "", "tei", None),
    ("TEI:", "http://localhost:8080", "", "tei", None),
])
def test_presets_resolve_their_defaults(spec: str, base_url: str, model: str, request_format: str,
                                        logits: bool | None) -> None:
    reranker = build_reranker(spec)
    assert isinstance(reranker, HttpReranker)
    assert (reranker.base_url, reranker.model, reranker.request_format, reranker.logits) == (
        base_url, model, request_format, logits)


@pytest.mark.parametrize("provider", sorted(HTTP_PRESETS))
def test_a_base_url_override_wins(provider: str) -> None:
    reranker = build_reranker(f"{provider}:m", base_url="http://127.0.0.1:9999/v1/", timeout=1.5)
    assert isinstance(reranker, HttpReranker)
    assert (reranker.base_url, reranker.model, reranker.timeout) == ("http://127.0.0.1:9999/v1", "m", 1.5)


def test_model_names_may_contain_colons_and_slashes() -> None:
    reranker = build_reranker("vllm:org/reranker:q8", base_url="http://127.0.0.1:1/v1")
    assert isinstance(reranker, HttpReranker) and reranker.model == "org/reranker:q8"


def test_http_needs_a_base_url() -> None:
    with pytest.raises(ConfigError, match=r'"http" reranker needs a base_url'):
        build_reranker("http:my-model")


def test_a_built_preset_talks_to_the_server_with_its_options(fake: FakeOpenAI) -> None:
    fake.reset()
    reranker = build_reranker("jina", base_url=fake.base_url, api_key=KEY)
    assert reranker is not None
    scores = asyncio.run(reranker.rerank("green tea", ["black coffee", "green tea with jasmine"]))
    assert scores[1] > scores[0]
    [request] = fake.requests
    assert request.body["model"] == "jina-reranker-v2-base-multilingual"
    assert request.headers["authorization"] == f"Bearer {KEY}"


def test_mem0_style_config(fake: FakeOpenAI) -> None:
    fake.reset()
    reranker = build_reranker({"provider": "cohere", "config": {
        "model": "rerank-v3.5", "api_key": KEY, "top_k": 5, "base_url": fake.base_url}})
    assert isinstance(reranker, HttpReranker) and reranker.model == "rerank-v3.5"
    asyncio.run(reranker.rerank("q", ["d"]))
    assert fake.requests[0].headers["authorization"] == f"Bearer {KEY}"


def test_a_config_that_is_not_an_object_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match=r"reranker\.config must be an object"):
        build_reranker({"provider": "jina", "config": "rerank-v3"})


@pytest.mark.parametrize("spec", [None, "", "none"])
def test_no_reranker(spec: str | None) -> None:
    assert build_reranker(spec) is None


@pytest.mark.parametrize("spec", ["bge:large", {"provider": "sentence_transformer"}, {"config": {}}])
def test_an_unknown_provider_names_the_choices(spec: str | dict[str, Any]) -> None:
    with pytest.raises(ConfigError, match=r"unknown reranker provider .*'cohere'.*'jina'.*'llm'.*'tei'"):
        build_reranker(spec)


# ---- the LLM reranker --------------------------------------------------------------------------------------------


def test_llm_wraps_the_llm_it_is_given_and_leaves_it_open() -> None:
    llm = ScriptedLLM([{"scores": {"1": 3}}])
    reranker = build_reranker("llm", llm=llm, max_chars=50)
    assert isinstance(reranker, LLMReranker)
    assert (reranker.llm, reranker.max_chars, reranker.model_id) == (llm, 50, "llm:scripted")
    assert asyncio.run(reranker.rerank("q", ["d"])) == [0.3]
    assert reranker.close_llm is False


def test_llm_builds_its_own_llm_from_a_spec() -> None:
    reranker = build_reranker("llm:scripted", replies=[{"scores": {"1": 6, "2": 2}}])
    assert isinstance(reranker, LLMReranker) and isinstance(reranker.llm, ScriptedLLM)
    assert asyncio.run(reranker.rerank("q", ["a", "b"])) == [0.6, 0.2]
    assert reranker.close_llm is True


def test_llm_spec_may_be_an_option_with_llm_options() -> None:
    reranker = build_reranker("llm", llm="deepseek:deepseek-chat", api_key=KEY, base_url="http://127.0.0.1:1/v1")
    assert isinstance(reranker, LLMReranker)
    assert reranker.model_id == "llm:openai:deepseek-chat@http://127.0.0.1:1/v1"


@pytest.mark.parametrize("options", [{}, {"llm": "none"}, {"llm": object()}], ids=["missing", "none", "not-an-llm"])
def test_llm_without_an_llm_is_a_config_error(options: dict[str, Any]) -> None:
    with pytest.raises(ConfigError, match='"llm" reranker needs an LLM'):
        build_reranker("llm", **options)


# ---- the offline stand-in and custom rerankers -------------------------------------------------------------------


def test_overlap_is_offline_and_ordered() -> None:
    reranker = build_reranker("overlap")
    assert isinstance(reranker, OverlapReranker) and isinstance(reranker, Reranker)
    scores = asyncio.run(reranker.rerank("她住在杭州吗", ["她住在杭州", "她喜欢杭州的茶", "猫"]))
    assert scores[0] > scores[1] > scores[2] == 0.0


def test_overlap_folds_case_and_full_width_letters() -> None:
    assert overlap_score("Green TEA", "ｇｒｅｅｎ tea") == 1.0
    assert overlap_score("", "anything") == 0.0


@given(st.text(max_size=40), st.text(max_size=40))
def test_overlap_scores_are_in_0_1_and_a_text_matches_itself(query: str, document: str) -> None:
    assert 0.0 <= overlap_score(query, document) <= 1.0
    assert overlap_score(query, query) in (0.0, 1.0)


class ConstantReranker:
    def __init__(self, value: float) -> None:
        self.value = value
        self.model_id = f"constant:{value}"

    async def rerank(self, query: str, documents: Sequence[str], *, timeout: float | None = None) -> list[float]:
        return [self.value] * len(documents)

    async def aclose(self) -> None:
        return None


@pytest.mark.usefixtures("registry")
def test_custom_rerankers_register_the_same_way_as_built_ins() -> None:
    seen: list[tuple[str, dict[str, Any]]] = []

    def factory(arg: str, options: dict[str, Any]) -> Reranker:
        seen.append((arg, options))
        return ConstantReranker(float(arg or options.get("value", 0)))

    register_reranker("constant", factory)
    reranker = build_reranker("Constant: 0.25", extra=1)
    assert isinstance(reranker, ConstantReranker) and reranker.value == 0.25
    assert seen == [("0.25", {"extra": 1})]
    assert asyncio.run(reranker.rerank("q", ["a", "b"])) == [0.25, 0.25]
    built = build_reranker({"provider": "constant", "config": {"value": 0.5}})
    assert isinstance(built, ConstantReranker) and built.value == 0.5
    with pytest.raises(ConfigError, match="'constant'"):
        build_reranker("unknown")


@pytest.mark.usefixtures("registry")
def test_a_registration_may_replace_a_built_in() -> None:
    register_reranker("jina", lambda arg, options: ConstantReranker(1.0))
    assert isinstance(build_reranker("jina"), ConstantReranker)
