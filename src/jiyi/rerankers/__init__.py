"""Rerankers, picked by one string: "jina:jina-reranker-v2-base-multilingual", "tei" with a base_url, "llm" with an
LLM, or a mem0-style {"provider": ..., "config": {...}} entry.

Services that speak the `/rerank` protocol differ only in their default base URL and model, so they are presets of
one client. "overlap" is the offline, deterministic stand-in. Callers register their own with `register_reranker`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jiyi.errors import ConfigError
from jiyi.rerankers.base import Reranker, RerankError

RerankerFactory = Callable[[str, dict[str, Any]], Reranker]
_REGISTRY: dict[str, RerankerFactory] = {}

# provider → (default base URL, default model, fixed options). No base URL: the caller must give one.
HTTP_PRESETS: dict[str, tuple[str | None, str, dict[str, Any]]] = {
    "jina": ("https://api.jina.ai/v1", "jina-reranker-v2-base-multilingual", {}),
    "cohere": ("https://api.cohere.com/v2", "rerank-multilingual-v3.0", {}),
    "siliconflow": ("https://api.siliconflow.cn/v1", "BAAI/bge-reranker-v2-m3", {}),
    "vllm": ("http://localhost:8000/v1", "", {}),
    "llamacpp": ("http://localhost:8080/v1", "", {"logits": True}),  # llama.cpp sends raw logits
    "tei": ("http://localhost:8080", "", {"request_format": "tei"}),
    "http": (None, "", {}),
}
_HTTP_OPTIONS = ("api_key", "timeout", "logits", "request_format", "extra_headers", "extra_body")


def register_reranker(name: str, factory: RerankerFactory) -> None:
    """`factory(argument, options)` gets what follows "name:" in the spec string, and the keyword options."""
    _REGISTRY[name] = factory


def _http_preset(provider: str) -> RerankerFactory:
    default_url, default_model, fixed = HTTP_PRESETS[provider]

    def build(model: str, options: dict[str, Any]) -> Reranker:
        from jiyi.rerankers.http import HttpReranker

        base_url = options.get("base_url") or default_url
        if not base_url:
            raise ConfigError(f'the "{provider}" reranker needs a base_url (the server answering POST .../rerank)')
        kwargs = {**fixed, **{k: options[k] for k in _HTTP_OPTIONS if options.get(k) is not None}}
        return HttpReranker(model or options.get("model") or default_model, base_url, **kwargs)

    return build


def _llm(arg: str, options: dict[str, Any]) -> Reranker:
    from jiyi.llms import LLM, build_llm
    from jiyi.rerankers.llm import LLMReranker

    given: Any = options.get("llm") or arg or None
    owned = isinstance(given, str | dict)  # a spec: the reranker builds the LLM, so it closes it too
    llm_options = {k: v for k, v in options.items() if k not in ("llm", "max_chars")}
    llm: LLM | None = build_llm(given, **llm_options) if owned else given
    if not isinstance(llm, LLM):
        raise ConfigError('the "llm" reranker needs an LLM: build_reranker("llm", llm=my_llm), '
                          'or an LLM spec such as "llm:openai:gpt-4o-mini"')
    return LLMReranker(llm, max_chars=int(options.get("max_chars", 1000)), close_llm=owned)


def _overlap(arg: str, options: dict[str, Any]) -> Reranker:
    from jiyi.rerankers.overlap import OverlapReranker

    return OverlapReranker()


for _provider in HTTP_PRESETS:
    register_reranker(_provider, _http_preset(_provider))
register_reranker("llm", _llm)
register_reranker("overlap", _overlap)


def build_reranker(spec: str | dict[str, Any] | None, **options: Any) -> Reranker | None:
    """"jina:jina-reranker-v2-base-multilingual", "tei" with base_url=..., "llm" with llm=..., or mem0's
    {"provider": ..., "config": {...}}. None or "none": no reranker."""
    if spec is None or spec == "" or spec == "none":
        return None
    if isinstance(spec, dict):
        config = spec.get("config") or {}
        if not isinstance(config, dict):
            raise ConfigError("reranker.config must be an object")
        options = {**{k: v for k, v in spec.items() if k not in ("provider", "config")}, **config, **options}
        name, arg = str(spec.get("provider") or ""), ""
    else:
        name, _, arg = str(spec).partition(":")
    factory = _REGISTRY.get(name.strip().lower())
    if factory is None:
        raise ConfigError(f"unknown reranker provider {name!r}; choose one of {sorted(_REGISTRY)}")
    return factory(arg.strip(), options)


__all__ = ["HTTP_PRESETS", "RerankError", "Reranker", "RerankerFactory", "build_reranker", "register_reranker"]
