"""jiyi (记忆): long-term memory for AI chat assistants."""

from jiyi.embedders import build_embedder, register_embedder
from jiyi.errors import (
    BackendUnavailable,
    ConfigError,
    EmbeddingMismatch,
    InvalidInput,
    JiyiError,
    NotFound,
    NotSupportedYet,
)
from jiyi.memory import AsyncMemory, Memory
from jiyi.records import Category, Event, HistoryEvent, Layer, MemoryRecord, MemoryType, Scope, SearchHit, Source
from jiyi.requests import AddRequest, ContextRequest, ListRequest, SearchQuery
from jiyi.stores import build_store, register_store

__version__ = "0.1.0"

__all__ = [
    "AddRequest",
    "AsyncMemory",
    "BackendUnavailable",
    "Category",
    "ConfigError",
    "ContextRequest",
    "EmbeddingMismatch",
    "Event",
    "HistoryEvent",
    "InvalidInput",
    "JiyiError",
    "Layer",
    "ListRequest",
    "Memory",
    "MemoryRecord",
    "MemoryType",
    "NotFound",
    "NotSupportedYet",
    "Scope",
    "SearchHit",
    "SearchQuery",
    "Source",
    "__version__",
    "build_embedder",
    "build_store",
    "register_embedder",
    "register_store",
]
