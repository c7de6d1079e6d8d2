"""Environment settings become the config dict that wiring.py turns into objects."""

from __future__ import annotations

import pytest

from jiyi.errors import ConfigError
from jiyi.read_path import ReadSettings
from jiyi.settings import Settings
from jiyi.wiring import build_components


def test_cors_origins_are_a_comma_separated_list(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JIYI_CORS_ORIGINS", "http://127.0.0.1:8000/, https://chat.example.com")
    assert Settings().cors_origin_list() == ["http://127.0.0.1:8000", "https://chat.example.com"]
    monkeypatch.setenv("JIYI_CORS_ORIGINS", "")
    assert Settings().cors_origin_list() == []


def test_a_reranker_from_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: object) -> None:
    monkeypatch.setenv("JIYI_STORE", "sqlite://:memory:")
    monkeypatch.setenv("JIYI_EMBEDDER", "hashing")
    monkeypatch.setenv("JIYI_RERANKER", "tei")
    monkeypatch.setenv("JIYI_RERANKER_BASE_URL", "http://127.0.0.1:9/")
    config = Settings().to_config()
    assert config["reranker"] == {"provider": "tei", "base_url": "http://127.0.0.1:9/"}
    components = build_components(config)
    assert components.reranker is not None and "127.0.0.1:9" in components.reranker.model_id
    components.store.close()


def test_the_llm_reranker_uses_the_configured_llm() -> None:
    components = build_components({"store": "sqlite://:memory:", "embedder": "hashing", "llm": "scripted",
                                   "reranker": "llm"})
    assert components.reranker is not None and components.llm is not None
    assert getattr(components.reranker, "llm", None) is components.llm
    components.store.close()
    with pytest.raises(ConfigError, match="needs an LLM"):
        build_components({"store": "sqlite://:memory:", "embedder": "hashing", "reranker": "llm"})


def test_retrieval_settings_from_config() -> None:
    settings = ReadSettings.from_config({"retrieval": {"min_relevance": 0.4, "deadline": 2.0, "retention": 0.2,
                                                       "rule_limit": 3}})
    assert settings.min_relevance == 0.4 and settings.deadline == 2.0
    assert settings.retrieval.ranking.retention == 0.2 and settings.retrieval.rule_limit == 3
    with pytest.raises(ConfigError, match="unknown retrieval settings"):
        ReadSettings.from_config({"retrieval": {"min_relevence": 0.4}})
    with pytest.raises(ConfigError, match="at most 1"):
        ReadSettings.from_config({"retrieval": {"retention": 0.9, "importance": 0.5}})
    assert ReadSettings.from_config({"retrieval": {"reminder_min_relevance": 0.5}}).reminder_min_relevance == 0.5
    assert ReadSettings().fitted_bar and not ReadSettings.from_config({"retrieval": {"fitted_bar": False}}).fitted_bar
    with pytest.raises(ConfigError, match="fitted_bar must be true or false"):
        ReadSettings.from_config({"retrieval": {"fitted_bar": "no"}})
    for name, value in [("min_relevance", "x"), ("min_relevance", 2), ("reminder_min_relevance", -0.1),
                        ("reminder_min_relevance", True), ("other_speaker_weight", "0.8"),
                        ("other_speaker_weight", 1.5), ("question_weight", -1), ("episode_weight", None)]:
        with pytest.raises(ConfigError, match=f"{name} must be a number from 0 to 1"):
            ReadSettings.from_config({"retrieval": {name: value}})
