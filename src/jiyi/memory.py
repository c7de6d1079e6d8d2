"""The Memory facade: mem0's methods and arguments (both generations), written once as async.

`AsyncMemory` is the implementation; it checks the arguments (requests.py for the requests the REST API and MCP
share, arguments.py) and delegates: blocking work (SQLite, embedding) runs in worker threads in one hop per call
(edits.py for direct changes, the read and write paths), work that outlives a call to turn_jobs.py. `Memory` is the
synchronous face: each method is made from the async one of the same name (same signature) and runs it on a private
event-loop thread (sync_bridge.py), so it also works inside programs that already run an event loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from jiyi import arguments as check
from jiyi import pass_log
from jiyi.arguments import DEFAULT_CONTEXT_TOP_K, DEFAULT_LIST_LIMIT, UNSET
from jiyi.categorizing import Categorizer
from jiyi.core.injection import MEMORY_HEADER
from jiyi.core.lifecycle import LifecyclePolicy
from jiyi.core.offline import asks_to_be_remembered
from jiyi.edits import MemoryEdits, stored_messages
from jiyi.embedders.base import Embedder
from jiyi.embedders.scheduler import EmbeddingScheduler, scheduled
from jiyi.errors import InvalidInput, NotFound
from jiyi.filters import merge_scope, parse_filters
from jiyi.idempotency import ReplayedAnswer, add_once, request_key
from jiyi.lifecycle import MaintenancePass
from jiyi.llms.base import LLM
from jiyi.read_path import ReadPath, ReadSettings
from jiyi.records import Clock, Event, MemoryType, Scope, TurnRecord, utcnow
from jiyi.requests import AddRequest, ContextRequest, ListRequest, SearchQuery
from jiyi.stores.base import MemoryStore
from jiyi.sync_bridge import LoopThread, sync_of
from jiyi.turn_jobs import EXIT_SETTLE_SECONDS, TurnJobs
from jiyi.views import entity_item, history_item, memory_item, search_items, turn_item
from jiyi.write_path import WritePath, WriteSettings, traced_add

if TYPE_CHECKING:
    from jiyi.rerankers.base import Reranker

__all__ = ["AsyncMemory", "Memory", "ReplayedAnswer"]

T = TypeVar("T")
P = ParamSpec("P")
_REPORTED_EVENTS = {Event.ADD.value, Event.UPDATE.value, Event.DELETE.value}  # what mem0's add() returns


class AsyncMemory:
    def __init__(self, store: MemoryStore, embedder: Embedder, *, llm: LLM | None = None,
                 reranker: Reranker | None = None, config: dict[str, Any] | None = None,
                 write_settings: WriteSettings | None = None, read_settings: ReadSettings | None = None,
                 clock: Clock = utcnow, lifecycle: LifecyclePolicy | None = None) -> None:
        """`llm`: the chat model that extracts facts, decides and rewrites weak questions; without one jiyi's offline
        rules extract and decide. `reranker`: re-scores search candidates (optional). `clock`: where jiyi reads the
        present (an aware UTC datetime); a simulation or a test sets it."""
        self.store = store
        self.clock = clock
        self.embedder = embedder
        # Every embedding goes through one scheduler: queries before passages, users' passages in turn, bounded input
        # (embedders/scheduler.py). `embedder` stays what the caller gave.
        self.embedding = scheduled(embedder)
        self._owns_scheduler = not isinstance(embedder, EmbeddingScheduler)
        self.llm = llm
        self.reranker = reranker
        self.config = config or {}
        self.lifecycle = lifecycle or LifecyclePolicy.from_config(self.config)
        # mem0's categories for what is written; its prototypes are embedded by the model itself, in one batch.
        self.categorizer = Categorizer(embedder, store)
        self.write_path = WritePath(store, self.embedding, llm,
                                    write_settings or WriteSettings.from_config(self.config), clock, self.lifecycle,
                                    self.categorizer)
        self.read_path = ReadPath(store, self.embedding, llm=llm, reranker=reranker,
                                  settings=read_settings or ReadSettings.from_config(self.config), clock=clock)
        self.edits = MemoryEdits(store, embedder, self.embedding, clock, self.lifecycle, self.categorizer)
        self.jobs = TurnJobs(store, self.write_path, clock)
        if embedder.dims:  # a remote embedder may learn its dimension only from its first answer
            store.bind_embedding(embedder.model_id, embedder.dims)

    @classmethod
    def from_config(cls, config: dict[str, Any] | None = None) -> AsyncMemory:
        """Build from a jiyi config dict or a mem0 config dict (see wiring.py)."""
        from jiyi.wiring import build_components

        components = build_components(config or {})
        return cls(components.store, components.embedder, llm=components.llm, reranker=components.reranker,
                   config=components.config)

    async def _run(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        return await asyncio.to_thread(fn, *args, **kwargs)

    # --- writes ---------------------------------------------------------------------------------------------

    async def add(self, messages: Any, *, user_id: str | None = None, agent_id: str | None = None,
                  run_id: str | None = None, metadata: dict[str, Any] | None = None, infer: bool = True,
                  memory_type: str | None = None, prompt: str | None = None, timestamp: Any = None,
                  expiration_date: Any = None, filters: dict[str, Any] | None = None, async_mode: bool = False,
                  injected_memory_ids: list[str] | None = None, idempotency_key: str | None = None,
                  importance: float | None = None, remember: bool = False,
                  custom_categories: list[Any] | None = None) -> dict[str, Any]:
        """Store a chat turn and remember what is worth remembering in it.

        infer=True (mem0's default): facts are extracted and reconciled with existing memories (ADD / UPDATE / DELETE /
        NONE, every change in history). `async_mode=True` answers as soon as the turn is stored, with an `event_id` to
        poll (`get_event`); a worker (the server runs one) does the rest. `injected_memory_ids`: the memories the
        assistant was given for this reply; those that shaped it gain importance (BOOST).
        infer=False: every non-system message becomes a memory as it is, as in mem0; a reply's vector is made with
        the other party's message before it (see core.messages.in_conversation). `importance` (0-1) is where such a
        memory starts on the forgetting curve (default 0.5); with infer=True each fact's own is assessed.
        `remember=True`: the messages are a statement given to be remembered (MCP's add tools, `jiyi add`): what
        extraction makes nothing of is kept as a fact in the user's words. One user message alone that says something
        about its author ("I prefer aisle seats", as mem0's SDK sends add("…")) is taken as such a statement too.

        `custom_categories`: mem0's, [{"name": "description"}, ...]: the categories the turn's memories are sorted
        into instead of mem0's default fifteen (each memory's `categories`).

        `idempotency_key`: the caller's key for this add (HTTP: the Idempotency-Key header). An add sent again with
        the same key by the same owner within a day stores nothing and answers what the first one answered (a retry
        overlapping the original waits for it)."""
        return await self.run_add(AddRequest.build(
            messages, user_id=user_id, agent_id=agent_id, run_id=run_id, metadata=metadata, infer=infer,
            memory_type=memory_type, prompt=prompt, timestamp=timestamp, expiration_date=expiration_date,
            filters=filters, async_mode=async_mode, injected_memory_ids=injected_memory_ids,
            idempotency_key=idempotency_key, importance=importance, remember=remember,
            custom_categories=custom_categories))

    @traced_add
    async def run_add(self, request: AddRequest) -> dict[str, Any]:
        """add() of a request built and checked by AddRequest.build (as the REST API and the MCP tools make it)."""
        self.jobs.resume_abandoned_once()
        if request.idempotency_key is None:
            return await self._add_now(request)
        assert request.fingerprint is not None  # AddRequest.build makes one with every key
        return await add_once(self.store, self.clock, request_key(request.scope, request.idempotency_key),
                              request.fingerprint, lambda: self._add_now(request))

    async def _add_now(self, request: AddRequest) -> dict[str, Any]:
        metadata, given_type = request.metadata or {}, request.memory_type
        if not request.infer:
            return await self._run(self.edits.add_raw, request.chat, request.scope, metadata, request.turn_time,
                                   request.expires, MemoryType.EPISODIC if given_type is None else given_type,
                                   0.5 if request.importance is None else float(request.importance),
                                   request.custom_categories)
        stored = stored_messages(request.chat, request.scope, metadata, request.turn_time, self.clock())
        options: dict[str, Any] = dict(
            explicit=asks_to_be_remembered(request.chat, request.remember) or None, metadata=metadata,
            memory_type=given_type.value if given_type is not None else None, prompt=request.prompt,
            expiration_date=request.expires.isoformat() if request.expires else None,
            injected_memory_ids=(request.injected_memory_ids or [])[:50], custom_categories=request.custom_categories)
        turn = TurnRecord(scope=request.scope, message_ids=[m.id for m in stored],
                          options={k: v for k, v in options.items() if v not in (None, [], {})})
        if request.async_mode:
            await self.jobs.queue(turn, stored)
            return {"results": [], "event_id": turn.id, "status": "PENDING",
                    "message": "Turn stored; memory extraction queued"}
        turn = await self.jobs.process_now(turn, stored)
        return {"results": [r for r in turn.results if r["event"] in _REPORTED_EVENTS], "event_id": turn.id}

    async def get_event(self, event_id: str) -> dict[str, Any]:
        """The state of a turn's extraction: status, attempts, results (every event, NONE and BOOST included)."""
        return turn_item(await self.jobs.turn(event_id))

    def notify_queued_turns(self, event: asyncio.Event) -> None:
        """Set `event` whenever an async add queues a turn (a worker on this event loop waits on it)."""
        self.jobs.notify_queued_turns(event)

    async def process_pending(self, limit: int = 16) -> int:
        """Extract the turns that are due (queued by async adds, or waiting for an LLM retry); returns how many.
        Turns of one owner are processed in order; different owners concurrently."""
        return await self.jobs.process_pending(limit)

    async def settle(self) -> None:
        """Wait until the work earlier calls left running is done: access counts of searches, evidence of adds, the
        turns of a dead process this one took up."""
        await self.jobs.settle()
        await self.read_path.settle()

    async def update(self, memory_id: str, data: str | None = None, *, text: str | None = None,
                     metadata: dict[str, Any] | None = None, expiration_date: Any = UNSET, version: int | None = None,
                     custom_categories: list[Any] | None = None) -> dict[str, str]:
        """v1: update(id, data); v2: update(id, text=..., metadata=..., expiration_date=...).

        A new text is categorised anew (mem0's categories, or `custom_categories`'); a memory whose categories
        came from a list not given here keeps them.

        Concurrent updates of one memory apply one after another, each to the text the one before it wrote (history's
        old_memory chains). `version`: apply only if the memory is still at this version (see get()), else Conflict
        (HTTP 409) instead of the last writer winning."""
        check.check_version(version)
        new_text = check.new_text(data, text)
        check.check_metadata(metadata)
        expires = check.update_expiration(new_text, metadata, expiration_date)
        custom = check.custom_categories(custom_categories)
        await self._run(self.edits.update, memory_id, new_text, metadata, expires, version, custom)
        return {"message": "Memory updated successfully!"}

    async def delete(self, memory_id: str, *, reason: str | None = None) -> dict[str, str]:
        """Soft delete. `reason`: why it is forgotten (say, the user asked), kept in the history row; a delete with a
        reason is a forgetting (webhooks: memory_forget), one without a plain delete (memory_delete)."""
        check.check_reason(reason)
        await self._run(self.edits.delete, memory_id, reason)
        return {"message": "Memory deleted successfully"}

    async def delete_all(self, *, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
                         filters: dict[str, Any] | None = None) -> dict[str, str]:
        scope, rest = merge_scope(Scope(user_id, agent_id, run_id), filters)
        scope.require()
        await self._run(self.edits.delete_scope, scope, parse_filters(rest))
        return {"message": "All relevant memories deleted"}

    async def delete_entity(self, kind: str, name: str, *, user_id: str | None = None,
                            agent_id: str | None = None) -> dict[str, Any]:
        """Delete every memory of one user, agent or run (only among one user's, or one agent's, memories with
        `user_id` / `agent_id`: what a key bound to them may reach).

        Answers what went: {"memories": how many, "entities": each user, agent or run left with none, the one named
        among them}; an agent whose memories were all its user's goes with the user. An entity that an earlier delete
        already emptied (mem0's SDKs delete every listed entity in turn, the user before its agents) answers with
        nothing deleted; one that never had memories here is NotFound."""
        scope = check.entity_scope(kind, name, user_id, agent_id)
        return await self._run(self.edits.delete_entity, kind, name, user_id, scope)

    async def reset(self) -> dict[str, str]:
        await self._run(self.store.reset)
        if self.embedder.dims:
            await self._run(self.store.bind_embedding, self.embedder.model_id, self.embedder.dims)
        return {"message": "All memories reset"}

    # --- reads ----------------------------------------------------------------------------------------------

    async def search(self, query: str, *, user_id: str | None = None, agent_id: str | None = None,
                     run_id: str | None = None, filters: dict[str, Any] | None = None, limit: int | None = None,
                     top_k: int | None = None, threshold: float | None = None, explain: bool = False,
                     show_expired: bool = False, rerank: bool | None = None) -> dict[str, Any]:
        """Hybrid search in one scope. v1 passes ids and `limit`; v2 passes ids inside `filters` and `top_k`.
        `explain`: each path's rank and relevance, the ranking weights and timings. `rerank=False` skips a configured
        reranker. The memories returned count as reviewed (access_count + 1)."""
        return await self.run_search(SearchQuery.build(
            query, user_id=user_id, agent_id=agent_id, run_id=run_id, filters=filters, limit=limit, top_k=top_k,
            threshold=threshold, explain=explain, show_expired=show_expired, rerank=rerank))

    async def run_search(self, query: SearchQuery) -> dict[str, Any]:
        """search() of a query built and checked by SearchQuery.build (as the REST API and the MCP tools make it)."""
        await self.jobs.before_reading(query.retrieval.scope)
        found = await self.read_path.search(query.retrieval, rerank=query.rerank)
        return {"results": search_items(found, query.retrieval.explain)}

    async def context(self, messages: Any, *, user_id: str | None = None, agent_id: str | None = None,
                      run_id: str | None = None, filters: dict[str, Any] | None = None,
                      top_k: int = DEFAULT_CONTEXT_TOP_K, budget_chars: int = 1200, rewrite: bool = False,
                      rewrite_prompt: str | None = None, rewritten_query: str | None = None,
                      user_name: str | None = None, char_name: str | None = None, context_messages: int | None = None,
                      min_relevance: float | None = None, deadline: float | None = None, header: str = MEMORY_HEADER,
                      only_stages: Sequence[str] | None = None) -> dict[str, Any]:
        """One call before each reply: find the memories that matter for the conversation in OpenAI format and
        return `messages` with them appended to the first system message ("Relevant long-term memory:\n- …").

        Query enhancement: the last user message, then the recent conversation (`context_messages` of them), then — if
        `rewrite` — an LLM rewrite (`rewrite_prompt`, or jiyi's; `rewritten_query` if the caller rewrote it itself).
        `deadline` (seconds) covers it all; `only_stages` runs a subset ("rewrite" alone, when the caller already
        searched the question and the context). If anything fails the messages come back unchanged, `degraded: true`."""
        return await self.run_context(ContextRequest.build(
            messages, user_id=user_id, agent_id=agent_id, run_id=run_id, filters=filters, top_k=top_k,
            budget_chars=budget_chars, rewrite=rewrite, rewrite_prompt=rewrite_prompt, rewritten_query=rewritten_query,
            user_name=user_name, char_name=char_name, context_messages=context_messages, min_relevance=min_relevance,
            deadline=deadline, header=header, only_stages=only_stages))

    async def run_context(self, request: ContextRequest) -> dict[str, Any]:
        """context() of a request built and checked by ContextRequest.build (as the REST API and the MCP tools make
        it)."""
        await self.jobs.before_reading(request.recall.scope)
        return await self.read_path.context(request.recall, request.messages, budget_chars=request.budget_chars,
                                            header=request.header)

    async def get(self, memory_id: str) -> dict[str, Any]:
        await self.read_path.settle()  # access counts include every search that has answered
        record = await self._run(self.store.get, memory_id)
        if record is None:
            raise NotFound(f"memory {memory_id} not found")
        return memory_item(record)

    async def get_all(self, *, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
                      filters: dict[str, Any] | None = None, limit: int | None = None, top_k: int | None = None,
                      show_expired: bool = False, include_messages: bool = False) -> dict[str, Any]:
        """The scope's memories, newest first, mem0-shaped. The messages an infer=True add keeps as searchable
        evidence (category "message") are listed only with `include_messages` or a filter on the category."""
        return await self.run_list(ListRequest.build_all(
            user_id=user_id, agent_id=agent_id, run_id=run_id, filters=filters, limit=limit, top_k=top_k,
            show_expired=show_expired, include_messages=include_messages))

    async def get_page(self, *, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
                       filters: dict[str, Any] | None = None, page: int = 1, page_size: int = DEFAULT_LIST_LIMIT,
                       show_expired: bool = False, include_messages: bool = False,
                       every_scope: bool = False) -> dict[str, Any]:
        """One page of get_all (pages count from 1) and how many memories there are in all: {count, results}.
        `every_scope`: with no user, agent or run given, list everyone's memories (for an admin)."""
        return await self.run_list(ListRequest.build_page(
            user_id=user_id, agent_id=agent_id, run_id=run_id, filters=filters, page=page, page_size=page_size,
            show_expired=show_expired, include_messages=include_messages, every_scope=every_scope))

    async def run_list(self, request: ListRequest) -> dict[str, Any]:
        """get_all() or get_page() of a request built and checked by ListRequest.build_all or build_page (as the REST
        API and the MCP tools make it): {count (with_count), results}."""
        await self.jobs.evidence_kept(None if request.every_scope else request.scope)
        await self.read_path.settle()
        store, every = self.store, request.every_scope
        counted = {"count": await self._run(store.count_records, request.scope, request.where, request.show_expired,
                                            every)} if request.with_count else {}
        records = await self._run(store.list_records, request.scope, request.where, request.page_size,
                                  request.show_expired, request.offset, every)
        return {**counted, "results": [memory_item(r) for r in records]}

    async def entities(self, *, user_id: str | None = None) -> list[dict[str, Any]]:
        """The users, agents and runs that have memories (one user's, with `user_id`), with counts, mem0-shaped."""
        return [entity_item(e) for e in await self._run(self.store.entities, user_id)]

    async def history(self, memory_id: str) -> list[dict[str, Any]]:
        events = await self._run(self.store.history, memory_id)
        if not events and await self._run(self.store.get, memory_id, True) is None:
            raise NotFound(f"memory {memory_id} not found")
        return [history_item(e) for e in events]

    # --- lifecycle ----------------------------------------------------------------------------------------------

    async def maintain(self, *, user_id: str | None = None) -> dict[str, Any]:
        """One maintenance pass (decay, forgetting, review, consolidation, purge) over one user or every user;
        returns what it did: {processed, decayed, forgotten, reviewed, kept, promoted, moved, merged, summarized,
        purged, saved_bytes, compression_ratio, retention_rate, users, seconds}."""
        if user_id is not None and (not isinstance(user_id, str) or not user_id):
            raise InvalidInput("user_id must be a non-empty string")
        await self.read_path.settle()  # retention counts every review
        maintenance = MaintenancePass(self.store, self.embedding, self.clock, self.lifecycle, llm=self.llm)
        users = [user_id] if user_id is not None else await self._run(self.store.user_ids)
        total = await maintenance.run_each(users)
        result = {**total.as_dict(), "users": len(users)}
        await self._run(pass_log.log_pass, self.store, None,
                        {**result, **({"user_id": user_id} if user_id is not None else {})}, self.clock())
        return result

    async def close(self) -> None:
        await self.settle()
        self.write_path.close()
        self.read_path.close()
        if self._owns_scheduler:
            await self._run(self.embedding.close)
        if self.llm is not None:
            await self.llm.aclose()
        if self.reranker is not None:
            await self.reranker.aclose()
        await self._run(self.store.close)

    # --- what the console needs besides: restore (REST too), promote, retry -------------------------------------

    async def restore(self, memory_id: str, *, reason: str | None = None, version: int | None = None,
                      user_id: str | None = None, agent_id: str | None = None) -> dict[str, Any]:
        """Take back a soft delete (a forgetting, or a delete) before the purge removes its text: the memory is
        live and searchable again, with a RESTORE history row (`reason`, or "restored by request"); returns it.
        `user_id` / `agent_id`: only a memory of theirs (another's is not found). `version`: only if it is still at
        that version, else Conflict; a memory that is not deleted is a Conflict too."""
        check.check_version(version)
        check.check_reason(reason)
        record = await self._run(self.edits.restore, memory_id, reason, version, user_id, agent_id)
        return memory_item(record)

    async def promote(self, memory_id: str, *, reason: str | None = None,
                      version: int | None = None) -> dict[str, str]:
        """Make a memory core, as the lifecycle does with a fact that proved lasting: the long-term layer, never
        fading, always eligible in recall; a PROMOTE history row (`reason`, or "promoted by request"). A core or
        system memory stays as it is. `version` as in update()."""
        check.check_version(version)
        check.check_reason(reason)
        changed = await self._run(self.edits.promote, memory_id, reason, version)
        return {"message": "Memory promoted to core" if changed else "Memory is core already"}

    async def retry_event(self, event_id: str) -> dict[str, Any]:
        """Extract a FAILED turn again (its LLM attempts were used up): it is due now, for the server's worker (or
        process_pending); one more attempt, then the offline rules stand in as before. Returns the event."""
        return turn_item(await self.jobs.retry_failed(event_id))


class Memory:
    """Synchronous jiyi memory with mem0's method names. Each method is the AsyncMemory method of the same name,
    with its signature.

    Closing it (or a `with` block) waits for the work its calls left running; one that is never closed does that
    when the interpreter exits."""

    def __init__(self, store: MemoryStore | None = None, embedder: Embedder | None = None, *,
                 llm: LLM | None = None, reranker: Reranker | None = None, config: dict[str, Any] | None = None,
                 _async: AsyncMemory | None = None) -> None:
        if _async is None:
            if store is None or embedder is None:
                _async = AsyncMemory.from_config(config or {})
            else:
                _async = AsyncMemory(store, embedder, llm=llm, reranker=reranker, config=config)
        self.aio = _async
        self._loop = LoopThread(settle=_async.settle, settle_seconds=EXIT_SETTLE_SECONDS)
        self.closed = False

    @classmethod
    def from_config(cls, config: dict[str, Any] | None = None) -> Memory:
        return cls(_async=AsyncMemory.from_config(config or {}))

    @property
    def store(self) -> MemoryStore:
        return self.aio.store

    @property
    def embedder(self) -> Embedder:
        return self.aio.embedder

    add = sync_of(AsyncMemory.add)
    run_add = sync_of(AsyncMemory.run_add)
    search = sync_of(AsyncMemory.search)
    run_search = sync_of(AsyncMemory.run_search)
    context = sync_of(AsyncMemory.context)
    run_context = sync_of(AsyncMemory.run_context)
    get_event = sync_of(AsyncMemory.get_event)
    process_pending = sync_of(AsyncMemory.process_pending)
    settle = sync_of(AsyncMemory.settle)
    maintain = sync_of(AsyncMemory.maintain)
    get = sync_of(AsyncMemory.get)
    get_all = sync_of(AsyncMemory.get_all)
    get_page = sync_of(AsyncMemory.get_page)
    run_list = sync_of(AsyncMemory.run_list)
    entities = sync_of(AsyncMemory.entities)
    update = sync_of(AsyncMemory.update)
    delete = sync_of(AsyncMemory.delete)
    delete_all = sync_of(AsyncMemory.delete_all)
    delete_entity = sync_of(AsyncMemory.delete_entity)
    history = sync_of(AsyncMemory.history)
    reset = sync_of(AsyncMemory.reset)
    restore = sync_of(AsyncMemory.restore)
    promote = sync_of(AsyncMemory.promote)
    retry_event = sync_of(AsyncMemory.retry_event)

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self._loop.run(self.aio.close())
        self._loop.stop()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
