"""Settings from JIYI_* environment variables and an optional config file (TOML or JSON). Read only at the edges:
the CLI and the server's app factory turn them into a config dict; library classes take explicit arguments."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, NoDecode, PydanticBaseSettingsSource, SettingsConfigDict

from jiyi.errors import ConfigError

DEFAULT_HOME = Path("~/.jiyi")
LOG_LEVELS = ("critical", "error", "warning", "info", "debug")
_SCHEME_ONLY = re.compile(r"[A-Za-z][A-Za-z0-9+.-]+:")  # two letters at least: C:\\memory.db is a path


def load_config_file(path: str | Path) -> dict[str, Any]:
    file = Path(path).expanduser()
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read config file {file}: {exc.strerror}") from exc
    try:
        data = tomllib.loads(text) if file.suffix.lower() == ".toml" else json.loads(text)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"config file {file} is not valid {file.suffix.lstrip('.') or 'JSON'}: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"config file {file} must hold an object at the top level")
    return data


def _is_http_url(value: str) -> bool:
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 -- raises on a port that is not a number or out of range
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname)


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="JIYI_", extra="ignore")

    home: Path = Field(DEFAULT_HOME, description="data directory (the default store lives here)")
    config_file: Path | None = Field(None, description="TOML or JSON file; may also hold a mem0 config dict")
    store: str | None = Field(None, description='store URL, e.g. "sqlite:///~/.jiyi/memory.db"')
    embedder: str = Field("e5", description='"e5", "use", "hashing" or "openai:<model>"')
    embedder_base_url: str | None = None
    embedder_api_key: str | None = None
    embedder_dims: int | None = Field(None, ge=1, description="vector size asked of an OpenAI-compatible embedder")
    llm: str | None = Field(None, description='chat LLM for extraction, e.g. "openai:gpt-4o-mini", '
                                             '"ollama:qwen2.5:7b", "deepseek:deepseek-chat"; unset: offline extraction')
    llm_base_url: str | None = None
    llm_api_key: str | None = None
    llm_timeout: float | None = Field(None, gt=0, description="seconds an LLM call may take")
    reranker: str | None = Field(None, description='optional second-stage ranking: "jina:<model>", "cohere:<model>", '
                                                  '"siliconflow:<model>", "tei", "vllm:<model>", "http:<model>" '
                                                  '(with JIYI_RERANKER_BASE_URL), or "llm" (the configured LLM)')
    reranker_base_url: str | None = None
    reranker_api_key: str | None = None
    host: str = Field("127.0.0.1", description="address the server listens on")
    port: int = Field(8888, ge=1, le=65535, description="TCP port the server listens on")
    workers: int = Field(1, ge=1, le=64, description="server processes (jiyi serve --workers): each runs the API, an "
                                                     "extraction worker and the maintenance scheduler on one store")
    admin_api_key: str | None = Field(None, description="when set, admin routes (/configure, /reset) need it")
    insecure: bool = Field(False, description="serve on an address other than loopback with no keys at all "
                                              "(anyone who can reach it may read, change or reset every memory)")
    # NoDecode: the JSON is read by _api_keys below, so a value that is not JSON gets a sentence, not a traceback.
    api_keys: Annotated[dict[str, str], NoDecode] = Field(
        default_factory=dict, description='user keys, JSON {"key": "user_id"}: each key may access one user only'
    )
    cors_origins: str = Field("", description='browser origins allowed to call the API, comma-separated '
                                              '("http://127.0.0.1:8000,https://chat.example.com"), or "*"')
    maintenance_interval: float = Field(3600.0, ge=0, description="seconds between lifecycle passes inside the server "
                                                            "(decay, forgetting, consolidation); 0: never")
    shutdown_grace: int = Field(10, ge=0, le=10, description="seconds SIGTERM lets in-flight requests "
                                                             "finish before they are cancelled; the process is "
                                                             "gone ~2 s later at most; unfinished turns stay "
                                                             "queued for the next start")
    log_level: str = Field("info", description=f"the server's log level: {', '.join(LOG_LEVELS)}")
    max_body_bytes: int = Field(1 << 20, ge=1024, description="largest request body; larger answers 413")
    max_message_chars: int = Field(65_536, ge=1, description="largest message text (characters)")
    max_query_chars: int = Field(4_000, ge=1, description="largest search query or rewrite (characters)")
    max_metadata_bytes: int = Field(16_384, ge=2, description="largest metadata object, as JSON bytes")
    max_json_depth: int = Field(32, ge=2, le=1000, description="deepest nesting of a JSON body")
    webhook_timeout: float = Field(10.0, gt=0, description="seconds a webhook receiver has to answer a delivery")
    webhook_retry_base: float = Field(1.0, gt=0, description="seconds before a failed delivery's first retry; "
                                                            "each next retry waits twice as long")
    webhook_retry_max: float = Field(300.0, gt=0, description="longest wait between two attempts of a delivery")
    webhook_max_attempts: int = Field(300, ge=1, description="attempts before a delivery is given up")
    webhook_max_age: float = Field(86_400.0, gt=0, description="seconds after which a failing delivery is given up")
    webhook_poll_interval: float = Field(0.5, gt=0, description="seconds between looks for new changes to send")
    webhook_allow_private_urls: bool = Field(False, description="user keys may register webhooks on loopback or "
                                                                "private addresses (the admin's always may)")
    mcp_tool_names: Literal["underscore", "dotted"] = Field(
        "underscore", description='how /mcp names jiyi\'s tools: "underscore" (memory_add, every client) or '
                                  '"dotted" (memory.add, clients that accept dots)')
    rate_per_minute: int = Field(0, ge=0, description="requests a minute per API key (bursts up to as many), "
                                                      "then 429 with Retry-After; 0: no limit")

    @field_validator("api_keys", mode="before")
    @classmethod
    def _api_keys(cls, value: Any) -> Any:
        # Never quote the value in the message: it holds keys.
        expected = ('expected a JSON object of keys and the one user each reaches, e.g. \'{"<a long random key>": '
                    '"alice"}\' (or issue keys with `jiyi keys create --user alice`)')
        if isinstance(value, str):
            if not value.strip():
                return {}
            try:
                value = json.loads(value)
            except json.JSONDecodeError:
                raise ValueError(f"not JSON; {expected}") from None
        if not isinstance(value, dict):
            raise ValueError(f"not a JSON object; {expected}")
        if not all(isinstance(k, str) and k.strip() and isinstance(v, str) and v.strip() for k, v in value.items()):
            raise ValueError(f"every key and every user_id must be a non-empty string; {expected}")
        return value

    @field_validator("store")
    @classmethod
    def _store(cls, value: str | None) -> str | None:
        expected = "expected sqlite:///path/to/memory.db, postgresql://user@host:5432/db, or a file path"
        if not value:
            return value
        if "://" not in value:
            if _SCHEME_ONLY.match(value):  # "sqlite:", "postgres:/db": a URL gone wrong, not a file name
                raise ValueError(f"not a store URL; {expected}")
            return value
        if value.lower().startswith("sqlite://"):
            return value  # what follows is a path (or :memory:), not a host
        try:
            urlsplit(value).port  # noqa: B018 -- raises on a bad port or a broken [IPv6] host
        except ValueError as exc:
            raise ValueError(f"not a valid URL ({exc}); {expected}") from None
        return value

    @field_validator("embedder_base_url", "llm_base_url", "reranker_base_url")
    @classmethod
    def _base_url(cls, value: str | None) -> str | None:
        if value is not None and not _is_http_url(value):
            raise ValueError("not an http(s) URL; expected e.g. http://127.0.0.1:11434/v1 or https://api.example.com/v1")
        return value

    @field_validator("cors_origins")
    @classmethod
    def _cors_origins(cls, value: str) -> str:
        for origin in (o.strip().rstrip("/") for o in value.split(",")):
            if origin and origin != "*" and not (_is_http_url(origin) and not urlsplit(origin).path):
                raise ValueError(f"{origin!r} is not a browser origin; expected scheme://host[:port], comma-separated, "
                                 "e.g. http://127.0.0.1:8000,https://chat.example.com, or *")
        return value

    @field_validator("log_level")
    @classmethod
    def _log_level(cls, value: str) -> str:
        if value.strip().lower() not in LOG_LEVELS:
            raise ValueError(f"not a log level; allowed: {', '.join(LOG_LEVELS)}")
        return value.strip().lower()

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return init_settings, env_settings

    def request_limits(self) -> dict[str, int]:
        """The server's RequestLimits arguments."""
        names = ("max_body_bytes", "max_message_chars", "max_query_chars", "max_metadata_bytes", "max_json_depth",
                 "rate_per_minute")
        return {name: getattr(self, name) for name in names}

    def webhook_options(self) -> dict[str, Any]:
        """The server's WebhookOptions arguments."""
        return {"timeout": self.webhook_timeout, "retry_base": self.webhook_retry_base,
                "retry_max": self.webhook_retry_max, "max_attempts": self.webhook_max_attempts,
                "max_age": self.webhook_max_age, "poll_interval": self.webhook_poll_interval,
                "private_urls": self.webhook_allow_private_urls}

    def cors_origin_list(self) -> list[str]:
        return [origin.strip().rstrip("/") for origin in self.cors_origins.split(",") if origin.strip()]

    def store_url(self) -> str:
        return self.store or f"sqlite:///{self.home.expanduser() / 'memory.db'}"

    def to_config(self) -> dict[str, Any]:
        """The config dict Memory.from_config takes; a config file's keys win over defaults, env over both."""
        config: dict[str, Any] = load_config_file(self.config_file) if self.config_file else {}
        explicit = self.model_fields_set
        if self.store or ("store" not in config and "vector_store" not in config and "history_db_path" not in config):
            config["store"] = self.store_url()
        if "embedder" in explicit or "embedder" not in config:
            embedder: dict[str, Any] = {"provider": self.embedder}
            for key in ("base_url", "api_key", "dims"):
                value = getattr(self, f"embedder_{key}")
                if value is not None:
                    embedder[key] = value
            config["embedder"] = embedder
        if self.llm and ("llm" in explicit or "llm" not in config):
            llm: dict[str, Any] = {"provider": self.llm.split(":", 1)[0], "model": self.llm.partition(":")[2] or None}
            for key in ("base_url", "api_key", "timeout"):
                value = getattr(self, f"llm_{key}")
                if value is not None:
                    llm[key] = value
            config["llm"] = {k: v for k, v in llm.items() if v is not None}
        if self.reranker and ("reranker" in explicit or "reranker" not in config):
            provider, _, model = self.reranker.partition(":")
            if provider == "llm":
                config["reranker"] = self.reranker
            else:
                reranker = {"provider": provider, "model": model or None, "base_url": self.reranker_base_url,
                            "api_key": self.reranker_api_key}
                config["reranker"] = {k: v for k, v in reranker.items() if v is not None}
        return config
