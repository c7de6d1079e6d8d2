"""Chat LLM backends, picked by one string or a mem0 `llm {provider, config}` entry.

Providers that speak the OpenAI protocol differ only in their default base URL, so they are presets of one client.
"scripted" is the test double. Callers register their own backends with `register_llm`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jiyi.errors import ConfigError
from jiyi.llms.base import LLM, LLMBadOutput, LLMError, LLMRateLimited, LLMTimeout, ask_json

LLMFactory = Callable[[str, dict[str, Any]], LLM]
_REGISTRY: dict[str, LLMFactory] = {}

# provider → (mem0's config key for the base URL, default base URL)
OPENAI_COMPATIBLE: dict[str, tuple[str, str]] = {
    "openai": ("openai_base_url", "https://api.openai.com/v1"),
    "deepseek": ("deepseek_base_url", "https://api.deepseek.com/v1"),
    "glm": ("glm_base_url", "https://open.bigmodel.cn/api/paas/v4"),
    "zhipu": ("zhipu_base_url", "https://open.bigmodel.cn/api/paas/v4"),
    "qwen": ("dashscope_base_url", "https://dashscope.aliyuncs.com/compatible-mode/v1"),
    "dashscope": ("dashscope_base_url", "https://dashscope.aliyuncs.com/compatible-mode/v1"),
    "ollama": ("ollama_base_url", "http://localhost:11434/v1"),
    "vllm": ("vllm_base_url", "http://localhost:8000/v1"),
    "llamacpp": ("llamacpp_base_url", "http://localhost:8080/v1"),
    "lmstudio": ("lmstudio_base_url", "http://localhost:1234/v1"),
    "together": ("together_base_url", "https://api.together.xyz/v1"),
    "openrouter": ("openrouter_base_url", "https://openrouter.ai/api/v1"),
}
_CLIENT_OPTIONS = ("api_key", "temperature", "max_tokens", "top_p", "timeout", "max_retries", "retry_backoff",
                   "json_mode", "extra_headers")


def register_llm(name: str, factory: LLMFactory) -> None:
    """`factory(argument, options)` gets what follows "name:" in the spec string, and the keyword options."""
    _REGISTRY[name] = factory


def _openai_preset(provider: str) -> LLMFactory:
    url_key, default_url = OPENAI_COMPATIBLE[provider]

    def build(model: str, options: dict[str, Any]) -> LLM:
        from jiyi.llms.openai import OpenAICompatibleLLM

        base_url = options.get("base_url") or options.get(url_key) or default_url
        if provider == "ollama" and not base_url.rstrip("/").endswith("/v1"):
            base_url = base_url.rstrip("/") + "/v1"  # mem0 configs give Ollama's root URL
        model = model or options.get("model") or ""
        kwargs = {k: options[k] for k in _CLIENT_OPTIONS if options.get(k) is not None}
        return OpenAICompatibleLLM(model, base_url=base_url, **kwargs)

    return build


def _scripted(arg: str, options: dict[str, Any]) -> LLM:
    from jiyi.llms.scripted import ScriptedLLM

    return ScriptedLLM(replies=options.get("replies", ()), responder=options.get("responder"),
                       delay=float(options.get("delay", 0.0)))


for _provider in OPENAI_COMPATIBLE:
    register_llm(_provider, _openai_preset(_provider))
register_llm("scripted", _scripted)


def build_llm(spec: str | dict[str, Any] | None, **options: Any) -> LLM | None:
    """"openai:gpt-4o-mini", "ollama:qwen2.5:7b", or mem0's {"provider": ..., "config": {...}}. None: no LLM."""
    if spec is None or spec == "" or spec == "none":
        return None
    if isinstance(spec, dict):
        config = spec.get("config") or {}
        if not isinstance(config, dict):
            raise ConfigError("llm.config must be an object")
        options = {**{k: v for k, v in spec.items() if k not in ("provider", "config")}, **config, **options}
        name, arg = str(spec.get("provider") or "openai"), ""
    else:
        name, _, arg = str(spec).partition(":")
    factory = _REGISTRY.get(name.strip().lower())
    if factory is None:
        raise ConfigError(f"unknown LLM provider {name!r}; choose one of {sorted(_REGISTRY)}")
    return factory(arg.strip(), options)


__all__ = ["LLM", "OPENAI_COMPATIBLE", "LLMBadOutput", "LLMError", "LLMRateLimited", "LLMTimeout", "ask_json",
           "build_llm", "register_llm"]
