"""The Memory facade: mem0's methods and arguments (both generations), written once as async.

`AsyncMemory` is the implementation; blocking work (SQLite, embedding) runs in worker threads in one hop per call.
`Memory` is the synchronous face: each method forwards to the async one on a private event-loop thread, so it also
works inside programs that already run an event loop.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from dataclasses import replace
from datetime import datetime
from typing import Any, TypeVar

from jiyi.core.filters import merge_scope, parse_filters
from jiyi.core.messages import ChatMessage, check_json_value, check_text, normalize_messages, parse_time
from jiyi.core.retrieval import SearchRequest, hybrid_search
from jiyi.embedders.base import Embedder
from jiyi.errors import InvalidInput, NotFound, NotSupportedYet
from jiyi.records import (
    Category,
    Event,
    HistoryEvent,
    Layer,
    MemoryRecord,
    MemoryType,
    Scope,
    Source,
    SourceRef,
    StoredMessage,
    utcnow,
)
from jiyi.stores.base import MemoryStore
from jiyi.views import history_item, memory_item, search_item

T = TypeVar("T")
DEFAULT_TOP_K = 20
DEFAULT_LIST_LIMIT = 100
MAX_LIMIT = 1000
_UNSET: Any = object()

_SOURCES = {"user": Source.USER, "assistant": Source.ASSISTANT, "system": Source.SYSTEM}


def _limit(value: Any, default: int, name: str) -> int:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInput(f"{name} must be an integer")
    if not 1 <= value <= MAX_LIMIT:
        raise InvalidInput(f"{name} must be between 1 and {MAX_LIMIT}, got {value}")
    return value


def _memory_type(value: str | None) -> MemoryType:
    if value is None:
        return MemoryType.EPISODIC
    if value in ("procedural_memory", "procedural"):
        return MemoryType.PROCEDURAL
    try:
        return MemoryType(value)
    except ValueError:
        allowed = ["procedural_memory", *(t.value for t in MemoryType)]
        raise InvalidInput(f"memory_type must be one of {allowed}, got {value!r}") from None


def _expiration(value: Any) -> datetime | None:
    return parse_time(value, "expiration_date")


class AsyncMemory:
    def __init__(self, store: MemoryStore, embedder: Embedder, *, config: dict[str, Any] | None = None) -> None:
        self.store = store
        self.embedder = embedder
        self.config = config or {}
        if embedder.dims:  # a remote embedder may learn its dimension only from its first answer
            store.bind_embedding(embedder.model_id, embedder.dims)

    @classmethod
    def from_config(cls, config: dict[str, Any] | None = None) -> AsyncMemory:
        """Build from a jiyi config dict or a mem0 config dict (see wiring.py)."""
        from jiyi.wiring import build_components

        store, embedder, normalized = build_components(config or {})
        return cls(store, embedder, config=normalized)

    async def _run(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        return await asyncio.to_thread(fn, *args, **kwargs)

    def _bind_learnt_dims(self) -> None:
        if self.store.embedding_binding() is None:
            self.store.bind_embedding(self.embedder.model_id, self.embedder.dims)

    # --- writes ---------------------------------------------------------------------------------------------

    async def add(
        self,
        messages: Any,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        metadata: dict[str, Any] | None = None,
        infer: bool = True,
        memory_type: str | None = None,
        prompt: str | None = None,
        timestamp: Any = None,
        expiration_date: Any = None,
        filters: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Store a chat turn. With infer=False every non-system message becomes a memory, as in mem0."""
        scope, _ = merge_scope(Scope(user_id, agent_id, run_id), filters)
        scope.require()
        if metadata is not None and not isinstance(metadata, dict):
            raise InvalidInput("metadata must be an object")
        check_json_value(metadata, "metadata")
        parsed = normalize_messages(messages)
        turn_time = parse_time(timestamp)
        expires = _expiration(expiration_date)
        kind = _memory_type(memory_type)
        if infer:
            raise NotSupportedYet(
                "add(infer=True) — LLM/offline fact extraction — is not available in this version; "
                "pass infer=false to store the messages as memories"
            )
        return await self._run(self._add_raw, parsed, scope, metadata or {}, turn_time, expires, kind)

    def _add_raw(self, parsed: list[ChatMessage], scope: Scope, metadata: dict[str, Any], turn_time: datetime | None,
                 expires: datetime | None, kind: MemoryType) -> dict[str, Any]:
        now = utcnow()
        stored = [
            StoredMessage(content=m.content, role=m.role, scope=scope, name=m.name,
                          created_at=m.created_at or turn_time or now, external_id=m.external_id, metadata=metadata)
            for m in parsed
        ]
        self.store.add_messages(stored)
        records = []
        for message, raw in zip(parsed, stored, strict=True):
            if message.role == "system" or not message.content.strip():
                continue
            records.append(MemoryRecord(
                content=message.content.strip(),
                scope=scope,
                actor_id=message.name,
                role=message.role,
                memory_type=kind,
                layer=Layer.SHORT_TERM,
                category=Category.FACT,
                source=_SOURCES.get(message.role, Source.USER),
                metadata=dict(metadata),
                provenance=[SourceRef(raw.id, raw.role, raw.created_at, raw.external_id)],
                created_at=now,
                event_time=message.created_at or turn_time,
                expiration_date=expires,
            ))
        if not records:
            return {"results": []}
        vectors = self.embedder.embed_documents([r.content for r in records])
        self._bind_learnt_dims()
        history = [HistoryEvent(r.id, Event.ADD, None, r.content, created_at=now, actor_id=r.actor_id, role=r.role)
                   for r in records]
        self.store.insert(records, vectors, history)
        return {"results": [
            {"id": r.id, "memory": r.content, "event": Event.ADD.value, "actor_id": r.actor_id, "role": r.role}
            for r in records
        ]}

    async def update(
        self,
        memory_id: str,
        data: str | None = None,
        *,
        text: str | None = None,
        metadata: dict[str, Any] | None = None,
        expiration_date: Any = _UNSET,
    ) -> dict[str, str]:
        """v1: update(id, data); v2: update(id, text=..., metadata=..., expiration_date=...)."""
        if data is not None and text is not None and data != text:
            raise InvalidInput("give the new text once, as data or as text")
        new_text = text if text is not None else data
        if new_text is not None and (not isinstance(new_text, str) or not new_text.strip()):
            raise InvalidInput("text must be a non-empty string")
        if metadata is not None and not isinstance(metadata, dict):
            raise InvalidInput("metadata must be an object")
        check_json_value(metadata, "metadata")
        if new_text is not None:
            check_text(new_text, "text")
        if new_text is None and metadata is None and expiration_date is _UNSET:
            raise InvalidInput("nothing to update: give text, metadata or expiration_date")
        expires = _UNSET if expiration_date is _UNSET else _expiration(expiration_date)
        await self._run(self._update, memory_id, new_text, metadata, expires)
        return {"message": "Memory updated successfully!"}

    def _update(self, memory_id: str, new_text: str | None, metadata: dict[str, Any] | None, expires: Any) -> None:
        current = self.store.get(memory_id)
        if current is None:
            raise NotFound(f"memory {memory_id} not found")
        now = utcnow()
        if new_text is not None:
            updated = current.with_content(new_text.strip(), now)
        else:
            updated = replace(current, updated_at=now)
        if metadata is not None:
            updated.metadata = dict(metadata)
        if expires is not _UNSET:
            updated.expiration_date = expires
        vector = self.embedder.embed_documents([updated.content])[0] if new_text is not None else None
        event = HistoryEvent(memory_id, Event.UPDATE, current.content, updated.content, created_at=current.created_at,
                             updated_at=now, actor_id=current.actor_id, role=current.role)
        self.store.update(updated, vector, event)

    async def delete(self, memory_id: str, *, reason: str = "deleted by request") -> dict[str, str]:
        await self._run(self._delete, memory_id, reason)
        return {"message": "Memory deleted successfully"}

    def _delete(self, memory_id: str, reason: str) -> None:
        current = self.store.get(memory_id)
        if current is None:
            raise NotFound(f"memory {memory_id} not found")
        now = utcnow()
        event = HistoryEvent(memory_id, Event.DELETE, current.content, None, created_at=now, updated_at=now,
                             is_deleted=True, actor_id=current.actor_id, role=current.role)
        self.store.soft_delete(memory_id, reason, event, now)

    async def delete_all(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        filters: dict[str, Any] | None = None,
    ) -> dict[str, str]:
        scope, rest = merge_scope(Scope(user_id, agent_id, run_id), filters)
        scope.require()
        where = parse_filters(rest)

        def work() -> None:
            for record in self.store.list_records(scope, where, include_expired=True):
                self._delete(record.id, "deleted with delete_all")

        await self._run(work)
        return {"message": "All relevant memories deleted"}

    async def reset(self) -> dict[str, str]:
        await self._run(self.store.reset)
        if self.embedder.dims:
            await self._run(self.store.bind_embedding, self.embedder.model_id, self.embedder.dims)
        return {"message": "All memories reset"}

    # --- reads ----------------------------------------------------------------------------------------------

    async def search(
        self,
        query: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        filters: dict[str, Any] | None = None,
        limit: int | None = None,
        top_k: int | None = None,
        threshold: float | None = None,
        explain: bool = False,
        show_expired: bool = False,
    ) -> dict[str, Any]:
        """Hybrid search in one scope. v1 passes ids and `limit`; v2 passes ids inside `filters` and `top_k`."""
        if not isinstance(query, str) or not query.strip():
            raise InvalidInput("query must be a non-empty string")
        check_text(query, "query")
        if limit is not None and top_k is not None and limit != top_k:
            raise InvalidInput("give the result count once, as limit or as top_k")
        if threshold is not None and (isinstance(threshold, bool) or not isinstance(threshold, int | float)
                                      or not 0 <= threshold <= 1):
            raise InvalidInput("threshold must be a number between 0 and 1")
        scope, rest = merge_scope(Scope(user_id, agent_id, run_id), filters)
        request = SearchRequest(
            query=query.strip(),
            scope=scope.require(),
            top_k=_limit(top_k if top_k is not None else limit, DEFAULT_TOP_K, "top_k"),
            where=parse_filters(rest),
            threshold=threshold,
            include_expired=show_expired,
            explain=explain,
        )
        hits = await self._run(hybrid_search, self.store, self.embedder, request)
        return {"results": [search_item(hit, explain) for hit in hits]}

    async def get(self, memory_id: str) -> dict[str, Any]:
        record = await self._run(self.store.get, memory_id)
        if record is None:
            raise NotFound(f"memory {memory_id} not found")
        return memory_item(record)

    async def get_all(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        filters: dict[str, Any] | None = None,
        limit: int | None = None,
        top_k: int | None = None,
        show_expired: bool = False,
    ) -> dict[str, Any]:
        scope, rest = merge_scope(Scope(user_id, agent_id, run_id), filters)
        count = _limit(top_k if top_k is not None else limit, DEFAULT_LIST_LIMIT, "limit")
        records = await self._run(self.store.list_records, scope.require(), parse_filters(rest), count, show_expired)
        return {"results": [memory_item(r) for r in records]}

    async def history(self, memory_id: str) -> list[dict[str, Any]]:
        events = await self._run(self.store.history, memory_id)
        if not events and await self._run(self.store.get, memory_id, True) is None:
            raise NotFound(f"memory {memory_id} not found")
        return [history_item(e) for e in events]

    async def close(self) -> None:
        await self._run(self.store.close)


class _LoopThread:
    """A private event loop on a daemon thread: lets sync code call async code from anywhere."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="jiyi-sync", daemon=True)
        self._thread.start()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=5)


class Memory:
    """Synchronous jiyi memory with mem0's method names. Each method is the AsyncMemory method of the same name."""

    def __init__(self, store: MemoryStore | None = None, embedder: Embedder | None = None, *,
                 config: dict[str, Any] | None = None, _async: AsyncMemory | None = None) -> None:
        if _async is None:
            if store is None or embedder is None:
                _async = AsyncMemory.from_config(config or {})
            else:
                _async = AsyncMemory(store, embedder, config=config)
        self.aio = _async
        self._loop = _LoopThread()

    @classmethod
    def from_config(cls, config: dict[str, Any] | None = None) -> Memory:
        return cls(_async=AsyncMemory.from_config(config or {}))

    @property
    def store(self) -> MemoryStore:
        return self.aio.store

    @property
    def embedder(self) -> Embedder:
        return self.aio.embedder

    def add(self, messages: Any, **kwargs: Any) -> dict[str, Any]:
        return self._loop.run(self.aio.add(messages, **kwargs))

    def search(self, query: str, **kwargs: Any) -> dict[str, Any]:
        return self._loop.run(self.aio.search(query, **kwargs))

    def get(self, memory_id: str) -> dict[str, Any]:
        return self._loop.run(self.aio.get(memory_id))

    def get_all(self, **kwargs: Any) -> dict[str, Any]:
        return self._loop.run(self.aio.get_all(**kwargs))

    def update(self, memory_id: str, data: str | None = None, **kwargs: Any) -> dict[str, str]:
        return self._loop.run(self.aio.update(memory_id, data, **kwargs))

    def delete(self, memory_id: str, **kwargs: Any) -> dict[str, str]:
        return self._loop.run(self.aio.delete(memory_id, **kwargs))

    def delete_all(self, **kwargs: Any) -> dict[str, str]:
        return self._loop.run(self.aio.delete_all(**kwargs))

    def history(self, memory_id: str) -> list[dict[str, Any]]:
        return self._loop.run(self.aio.history(memory_id))

    def reset(self) -> dict[str, str]:
        return self._loop.run(self.aio.reset())

    def close(self) -> None:
        self._loop.run(self.aio.close())
        self._loop.stop()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
