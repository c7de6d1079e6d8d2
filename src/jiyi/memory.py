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
from datetime import datetime, timedelta
from typing import Any, TypeVar

from jiyi.core.filters import merge_scope, parse_filters
from jiyi.core.messages import ChatMessage, check_json_value, check_text, normalize_messages, parse_time
from jiyi.core.retrieval import SearchRequest, hybrid_search
from jiyi.embedders.base import Embedder
from jiyi.errors import InvalidInput, NotFound
from jiyi.llms.base import LLM
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
    TurnRecord,
    TurnStatus,
    utcnow,
)
from jiyi.stores.base import MemoryStore
from jiyi.views import history_item, memory_item, search_item, turn_item
from jiyi.write_path import WritePath, WriteSettings

T = TypeVar("T")
DEFAULT_TOP_K = 20
DEFAULT_LIST_LIMIT = 100
MAX_LIMIT = 1000
_UNSET: Any = object()

_REPORTED_EVENTS = {Event.ADD.value, Event.UPDATE.value, Event.DELETE.value}  # what mem0's add() returns
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
    def __init__(self, store: MemoryStore, embedder: Embedder, *, llm: LLM | None = None,
                 config: dict[str, Any] | None = None, write_settings: WriteSettings | None = None) -> None:
        """`llm`: the chat model that extracts facts and decides; without one jiyi's offline rules do both."""
        self.store = store
        self.embedder = embedder
        self.llm = llm
        self.config = config or {}
        self.write_path = WritePath(store, embedder, llm, write_settings or WriteSettings.from_config(self.config))
        self._turns_queued: asyncio.Event | None = None  # set by async adds; a worker waits on it
        if embedder.dims:  # a remote embedder may learn its dimension only from its first answer
            store.bind_embedding(embedder.model_id, embedder.dims)

    @classmethod
    def from_config(cls, config: dict[str, Any] | None = None) -> AsyncMemory:
        """Build from a jiyi config dict or a mem0 config dict (see wiring.py)."""
        from jiyi.wiring import build_components

        store, embedder, llm, normalized = build_components(config or {})
        return cls(store, embedder, llm=llm, config=normalized)

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
        async_mode: bool = False,
        injected_memory_ids: list[str] | None = None,
    ) -> dict[str, Any]:
        """Store a chat turn and remember what is worth remembering in it.

        infer=True (mem0's default): facts are extracted and reconciled with existing memories (ADD / UPDATE / DELETE /
        NONE, every change in history). `async_mode=True` answers as soon as the turn is stored, with an `event_id` to
        poll (`get_event`); a worker (the server runs one) does the rest. `injected_memory_ids`: the memories the
        assistant was given for this reply; those that shaped it gain importance (BOOST).
        infer=False: every non-system message becomes a memory as it is, as in mem0."""
        scope, _ = merge_scope(Scope(user_id, agent_id, run_id), filters)
        scope.require()
        if metadata is not None and not isinstance(metadata, dict):
            raise InvalidInput("metadata must be an object")
        check_json_value(metadata, "metadata")
        if prompt is not None and (not isinstance(prompt, str) or not prompt.strip()):
            raise InvalidInput("prompt must be a non-empty string")
        if injected_memory_ids is not None and (not isinstance(injected_memory_ids, list)
                                                or not all(isinstance(i, str) for i in injected_memory_ids)):
            raise InvalidInput("injected_memory_ids must be a list of memory ids")
        parsed = normalize_messages(messages)
        turn_time = parse_time(timestamp)
        expires = _expiration(expiration_date)
        kind = _memory_type(memory_type)
        if not infer:
            return await self._run(self._add_raw, parsed, scope, metadata or {}, turn_time, expires, kind)
        stored = self._stored_messages(parsed, scope, metadata or {}, turn_time, utcnow())
        options: dict[str, Any] = {
            "metadata": metadata or {},
            "memory_type": kind.value if memory_type is not None else None,
            "prompt": prompt,
            "expiration_date": expires.isoformat() if expires else None,
            "injected_memory_ids": (injected_memory_ids or [])[:50],
        }
        turn = TurnRecord(scope=scope, message_ids=[m.id for m in stored],
                          options={k: v for k, v in options.items() if v not in (None, [], {})})
        if async_mode:
            await self._run(self.store.add_turn, turn, stored)
            if self._turns_queued is not None:
                self._turns_queued.set()
            return {"results": [], "event_id": turn.id, "status": "PENDING",
                    "message": "Turn stored; memory extraction queued"}
        # The caller waits for this turn: it is leased to us, so a worker leaves it alone unless we die.
        turn.status = TurnStatus.PROCESSING
        turn.lease_until = utcnow() + timedelta(seconds=self.write_path.settings.lease_seconds)
        await self._run(self.store.add_turn, turn, stored)
        turn = await self.write_path.process(turn, stored)
        return {"results": [r for r in turn.results if r["event"] in _REPORTED_EVENTS], "event_id": turn.id}

    async def get_event(self, event_id: str) -> dict[str, Any]:
        """The state of a turn's extraction: status, attempts, results (every event, NONE and BOOST included)."""
        turn = await self._run(self.store.get_turn, event_id)
        if turn is None:
            raise NotFound(f"event {event_id} not found")
        return turn_item(turn)

    def notify_queued_turns(self, event: asyncio.Event) -> None:
        """Set `event` whenever an async add queues a turn (a worker on this event loop waits on it)."""
        self._turns_queued = event

    async def process_pending(self, limit: int = 16) -> int:
        """Extract the turns that are due (queued by async adds, or waiting for an LLM retry); returns how many.
        Turns of one owner are processed in order; different owners concurrently."""
        now = utcnow()
        lease = now + timedelta(seconds=self.write_path.settings.lease_seconds)
        turns = await self._run(self.store.claim_turns, now, lease, limit)
        by_owner: dict[Scope, list[TurnRecord]] = {}
        for turn in turns:
            by_owner.setdefault(turn.scope, []).append(turn)

        async def run_in_order(owner_turns: list[TurnRecord]) -> None:
            for turn in owner_turns:
                await self.write_path.process(turn)

        await asyncio.gather(*(run_in_order(group) for group in by_owner.values()))
        return len(turns)

    def _stored_messages(self, parsed: list[ChatMessage], scope: Scope, metadata: dict[str, Any],
                         turn_time: datetime | None, now: datetime) -> list[StoredMessage]:
        return [
            StoredMessage(content=m.content, role=m.role, scope=scope, name=m.name,
                          created_at=m.created_at or turn_time or now, external_id=m.external_id, metadata=metadata)
            for m in parsed
        ]

    def _add_raw(self, parsed: list[ChatMessage], scope: Scope, metadata: dict[str, Any], turn_time: datetime | None,
                 expires: datetime | None, kind: MemoryType) -> dict[str, Any]:
        now = utcnow()
        stored = self._stored_messages(parsed, scope, metadata, turn_time, now)
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
        self.write_path.close()
        if self.llm is not None:
            await self.llm.aclose()
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
                 llm: LLM | None = None, config: dict[str, Any] | None = None,
                 _async: AsyncMemory | None = None) -> None:
        if _async is None:
            if store is None or embedder is None:
                _async = AsyncMemory.from_config(config or {})
            else:
                _async = AsyncMemory(store, embedder, llm=llm, config=config)
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

    def get_event(self, event_id: str) -> dict[str, Any]:
        return self._loop.run(self.aio.get_event(event_id))

    def process_pending(self, limit: int = 16) -> int:
        return self._loop.run(self.aio.process_pending(limit))

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
