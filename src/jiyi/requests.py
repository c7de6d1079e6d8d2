"""The requests the library, the REST API and the MCP tools share: a search, an add, a context (recall before a
reply) and a listing, each a frozen dataclass built and checked in one place.

Each `build` takes the facade's keyword arguments (mem0's), checks them in the order AsyncMemory always has (so a
request with two faults names the same one) and raises InvalidInput saying what to fix. AsyncMemory's keyword methods
build one and run it; a REST route or an MCP tool builds one from its own input and runs it (AsyncMemory.run_search,
run_add, run_context, run_list), so the three surfaces cannot drift apart in what they accept.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from jiyi import arguments as check
from jiyi.arguments import DEFAULT_CONTEXT_TOP_K, DEFAULT_LIST_LIMIT, DEFAULT_TOP_K
from jiyi.core.injection import MEMORY_HEADER
from jiyi.core.messages import ChatMessage, check_text, normalize_messages, parse_chat, parse_time
from jiyi.core.retrieval import SearchRequest
from jiyi.errors import InvalidInput
from jiyi.filters import Node, listing_filter, merge_scope, parse_filters
from jiyi.idempotency import fingerprint
from jiyi.read_path import STAGE_NAMES, RecallRequest
from jiyi.records import MemoryType, Scope

__all__ = ["AddRequest", "ContextRequest", "ListRequest", "SearchQuery"]

BUDGET_RANGE = (100, 20_000)  # characters of injected memory
MAX_IDEMPOTENCY_KEY = 256


@dataclass(frozen=True, slots=True)
class SearchQuery:
    """search(): the read path's own request, and whether to skip a configured reranker (`rerank=False`)."""

    retrieval: SearchRequest
    rerank: bool | None = None

    @classmethod
    def build(cls, query: Any, *, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
              filters: dict[str, Any] | None = None, limit: int | None = None, top_k: int | None = None,
              threshold: float | None = None, explain: bool = False, show_expired: bool = False,
              rerank: bool | None = None) -> SearchQuery:
        query = _query_text(query)
        count = check.one_count(limit, top_k)
        check.check_fraction(threshold, "threshold")
        scope, rest = merge_scope(Scope(user_id, agent_id, run_id), filters)
        retrieval = SearchRequest(query=query, scope=scope.require(),
                                  top_k=check.limit(count, DEFAULT_TOP_K, "top_k"), where=parse_filters(rest),
                                  threshold=threshold, include_expired=show_expired, explain=explain)
        return cls(retrieval, rerank)


def _query_text(query: Any) -> str:
    if not isinstance(query, str) or not query.strip():
        raise InvalidInput("query must be a non-empty string")
    check_text(query, "query")
    return query.strip()


@dataclass(frozen=True, slots=True)
class ContextRequest:
    """context(): the read path's recall request, and what comes back: `messages` as given with a memory block of at
    most `budget_chars` (under `header`) appended to the first system message."""

    messages: Any
    recall: RecallRequest
    budget_chars: int = 1200
    header: str = MEMORY_HEADER

    @classmethod
    def build(cls, messages: Any, *, user_id: str | None = None, agent_id: str | None = None,
              run_id: str | None = None, filters: dict[str, Any] | None = None, top_k: int = DEFAULT_CONTEXT_TOP_K,
              budget_chars: int = 1200, rewrite: bool = False, rewrite_prompt: str | None = None,
              rewritten_query: str | None = None, user_name: str | None = None, char_name: str | None = None,
              context_messages: int | None = None, min_relevance: float | None = None, deadline: float | None = None,
              header: str = MEMORY_HEADER, only_stages: Sequence[str] | None = None) -> ContextRequest:
        parsed = parse_chat(messages)
        scope, rest = merge_scope(Scope(user_id, agent_id, run_id), filters)
        top_k = check.limit(top_k, DEFAULT_CONTEXT_TOP_K, "top_k")
        _check_context_options(
            budget_chars=budget_chars, min_relevance=min_relevance, deadline=deadline,
            context_messages=context_messages, only_stages=only_stages,
            texts={"rewrite_prompt": rewrite_prompt, "rewritten_query": rewritten_query, "user_name": user_name,
                   "char_name": char_name, "header": header})
        recall = RecallRequest(
            messages=parsed, scope=scope.require(), where=parse_filters(rest), top_k=top_k, rewrite=bool(rewrite),
            rewrite_prompt=rewrite_prompt, rewritten_query=rewritten_query, user_name=user_name,
            char_name=char_name, context_messages=context_messages, min_relevance=min_relevance, deadline=deadline,
            only_stages=tuple(only_stages) if only_stages is not None else None)
        return cls(messages, recall, budget_chars, header)


def _check_context_options(*, budget_chars: Any, texts: dict[str, Any], min_relevance: Any, deadline: Any,
                           context_messages: Any, only_stages: Sequence[str] | None) -> None:
    """context()'s options besides the messages and the scope; `texts` are its optional strings, by name."""
    if isinstance(budget_chars, bool) or not isinstance(budget_chars, int) or not (
            BUDGET_RANGE[0] <= budget_chars <= BUDGET_RANGE[1]):
        raise InvalidInput(f"budget_chars must be an integer between {BUDGET_RANGE[0]} and {BUDGET_RANGE[1]}")
    for name, value in texts.items():
        if value is not None:
            if not isinstance(value, str):
                raise InvalidInput(f"{name} must be a string")
            check_text(value, name)
    check.check_fraction(min_relevance, "min_relevance")
    if deadline is not None and (isinstance(deadline, bool) or not isinstance(deadline, int | float)
                                 or not 0.05 <= deadline <= 60):
        raise InvalidInput("deadline must be a number of seconds between 0.05 and 60")
    if context_messages is not None and (isinstance(context_messages, bool) or not isinstance(context_messages, int)
                                         or not 0 <= context_messages <= 100):
        raise InvalidInput("context_messages must be an integer between 0 and 100")
    if only_stages is not None and (isinstance(only_stages, str) or not only_stages
                                    or not set(only_stages) <= set(STAGE_NAMES)):
        raise InvalidInput(f"only_stages must be a non-empty list of {list(STAGE_NAMES)}")


@dataclass(frozen=True, slots=True)
class AddRequest:
    """add(): the turn, checked. `messages` is the turn as given (what a trace reports), `chat` the same read as chat
    messages; `memory_type` is None when not given (episodic for infer=False, extraction's choice otherwise);
    `fingerprint` (with an idempotency key) is what a retry with the same key must match."""

    messages: Any
    chat: list[ChatMessage]
    scope: Scope
    metadata: dict[str, Any] | None = None
    infer: bool = True
    memory_type: MemoryType | None = None
    prompt: str | None = None
    turn_time: datetime | None = None
    expires: datetime | None = None
    async_mode: bool = False
    injected_memory_ids: list[str] | None = None
    idempotency_key: str | None = None
    fingerprint: str | None = None
    importance: float | None = None
    remember: bool = False
    custom_categories: list[dict[str, str]] | None = None

    @classmethod
    def build(cls, messages: Any, *, user_id: str | None = None, agent_id: str | None = None,
              run_id: str | None = None, metadata: dict[str, Any] | None = None, infer: bool = True,
              memory_type: str | None = None, prompt: str | None = None, timestamp: Any = None,
              expiration_date: Any = None, filters: dict[str, Any] | None = None, async_mode: bool = False,
              injected_memory_ids: list[str] | None = None, idempotency_key: str | None = None,
              importance: float | None = None, remember: bool = False,
              custom_categories: list[Any] | None = None) -> AddRequest:
        scope, _ = merge_scope(Scope(user_id, agent_id, run_id), filters)
        scope.require()
        given = None
        if idempotency_key is not None:
            _check_idempotency_key(idempotency_key)
            # The arguments as given, as every stored key's fingerprint was made (`remember` never was part of it).
            given = fingerprint(dict(
                messages=messages, user_id=user_id, agent_id=agent_id, run_id=run_id, metadata=metadata, infer=infer,
                memory_type=memory_type, prompt=prompt, timestamp=timestamp, expiration_date=expiration_date,
                filters=filters, async_mode=async_mode, injected_memory_ids=injected_memory_ids,
                importance=importance, custom_categories=custom_categories))
        check.check_metadata(metadata)
        _check_add_options(prompt, injected_memory_ids, importance)
        custom = check.custom_categories(custom_categories)
        _check_importance_use(importance, infer)
        chat = normalize_messages(messages)
        turn_time = parse_time(timestamp)
        expires = check.expiration(expiration_date)
        kind = _memory_type(memory_type)
        return cls(messages, chat, scope, metadata, infer, kind if memory_type is not None else None, prompt,
                   turn_time, expires, async_mode, injected_memory_ids, idempotency_key, given, importance, remember,
                   custom)


def _check_idempotency_key(key: Any) -> None:
    if not isinstance(key, str) or not key.strip() or len(key) > MAX_IDEMPOTENCY_KEY:
        raise InvalidInput(f"idempotency_key must be a non-empty string of at most {MAX_IDEMPOTENCY_KEY} characters")


def _check_add_options(prompt: Any, injected_memory_ids: Any, importance: Any) -> None:
    if prompt is not None and (not isinstance(prompt, str) or not prompt.strip()):
        raise InvalidInput("prompt must be a non-empty string")
    if injected_memory_ids is not None and (not isinstance(injected_memory_ids, list)
                                            or not all(isinstance(i, str) for i in injected_memory_ids)):
        raise InvalidInput("injected_memory_ids must be a list of memory ids")
    check.check_fraction(importance, "importance")


def _check_importance_use(importance: float | None, infer: bool) -> None:
    if importance is not None and infer:
        raise InvalidInput("importance is for infer=False adds, which store the text as given; with infer=True "
                           "each extracted fact's importance is assessed")


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


@dataclass(frozen=True, slots=True)
class ListRequest:
    """get_all() and get_page(): one page of a scope's memories, newest first; `with_count` adds how many there are
    in all (get_page's `count`). `every_scope`: everyone's memories (an admin listing)."""

    scope: Scope
    where: Node | None = None
    page: int = 1
    page_size: int = DEFAULT_LIST_LIMIT
    show_expired: bool = False
    every_scope: bool = False
    with_count: bool = True

    @property
    def offset(self) -> int:
        return (self.page - 1) * self.page_size

    @classmethod
    def build_all(cls, *, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
                  filters: dict[str, Any] | None = None, limit: int | None = None, top_k: int | None = None,
                  show_expired: bool = False, include_messages: bool = False) -> ListRequest:
        """get_all's arguments: the first `limit` (or `top_k`) memories, not counted."""
        scope, rest = merge_scope(Scope(user_id, agent_id, run_id), filters)
        count = check.limit(check.one_count(limit, top_k), DEFAULT_LIST_LIMIT, "limit")
        where = listing_filter(rest, include_messages)
        return cls(scope.require(), where, 1, count, show_expired, every_scope=False, with_count=False)

    @classmethod
    def build_page(cls, *, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
                   filters: dict[str, Any] | None = None, page: int = 1, page_size: int = DEFAULT_LIST_LIMIT,
                   show_expired: bool = False, include_messages: bool = False,
                   every_scope: bool = False) -> ListRequest:
        """get_page's arguments (pages count from 1)."""
        page = _page_number(page)
        page_size = check.limit(page_size, DEFAULT_LIST_LIMIT, "page_size")
        scope, rest = merge_scope(Scope(user_id, agent_id, run_id), filters)
        where = listing_filter(rest, include_messages)
        return cls(scope if every_scope else scope.require(), where, page, page_size, show_expired, every_scope)


def _page_number(page: Any) -> int:
    if isinstance(page, bool) or not isinstance(page, int) or page < 1:
        raise InvalidInput(f"page must be a positive integer, got {page!r}")
    return page
