"""What each console page shows, gathered from the Memory and its store. Blocking reads; the routes run them in a
worker thread. Nothing here knows about HTTP or HTML."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from jiyi.core.categories import DEFAULT_NAMES, NAME
from jiyi.core.forgetting import ForgettingCurve
from jiyi.errors import InvalidInput, NotSupportedYet
from jiyi.filters import NOT_MESSAGES, Logic, Node, parse_filters
from jiyi.memory import AsyncMemory
from jiyi.pass_log import logged_passes
from jiyi.records import (
    Category,
    HistoryEvent,
    Layer,
    MemoryRecord,
    MemoryType,
    Scope,
    StoredMessage,
    TurnRecord,
    TurnStatus,
)
from jiyi.server.ui.pictures import RetentionSpread, retention_spread
from jiyi.stores.base import BROWSE_ORDERS, ConsoleStore, RecordPage, Tally

LAYERS = tuple(layer.value for layer in Layer)
TOPICS = DEFAULT_NAMES  # mem0's categories, offered in the filter (a project's own are shown as they are named)
CATEGORIES = tuple(category.value for category in Category)
MEMORY_TYPES = tuple(kind.value for kind in MemoryType)
PAGE_SIZES = (25, 50, 100, 200)
UNFINISHED = (TurnStatus.FAILED, TurnStatus.RETRY, TurnStatus.QUEUED, TurnStatus.PROCESSING)
MAX_SOURCES = 50  # merged or abstracted sources shown for one memory


def console_store(memory: AsyncMemory) -> ConsoleStore:
    store = memory.store
    if not isinstance(store, ConsoleStore):
        raise NotSupportedYet(f"the store {type(store).__name__} does not answer the console's queries "
                              "(stores/base.py ConsoleStore)")
    return store


def curve_of(memory: AsyncMemory) -> ForgettingCurve:
    """The forgetting curve search ranks with (retrieval settings), so the console shows the retention search uses."""
    return memory.read_path.settings.retrieval.ranking.curve


@dataclass(slots=True)
class OwnerCounts:
    """One user's (agent's, run's) live memories by layer and category."""

    owner: str
    total: int = 0
    layers: Counter[str] = field(default_factory=Counter)
    categories: Counter[str] = field(default_factory=Counter)


def owner_counts(tallies: Sequence[Tally]) -> list[OwnerCounts]:
    owners: dict[str, OwnerCounts] = {}
    for tally in tallies:
        counts = owners.setdefault(tally.owner, OwnerCounts(tally.owner))
        counts.total += tally.memories
        counts.layers[tally.layer] += tally.memories
        counts.categories[tally.category] += tally.memories
    return list(owners.values())


def users(memory: AsyncMemory, match: str | None) -> list[OwnerCounts]:
    found = owner_counts(console_store(memory).tallies("user"))
    if match:
        needle = match.casefold()
        found = [owner for owner in found if needle in owner.owner.casefold()]
    return found


@dataclass(slots=True)
class Overview:
    counts: OwnerCounts
    agents: list[OwnerCounts]
    runs: list[OwnerCounts]
    spread: RetentionSpread
    turn_counts: dict[str, int]
    turns: list[TurnRecord]


def overview(memory: AsyncMemory, scope: Scope, now: datetime) -> Overview:
    """The scope's counts (counted by the store) and retention (from its columns of numbers, messages kept as
    evidence left out): never a memory's row."""
    store = console_store(memory)
    counts = OwnerCounts(scope.run_id or scope.agent_id or scope.user_id or "")
    agents: dict[str, OwnerCounts] = {}
    runs: dict[str, OwnerCounts] = {}
    for tally in store.scope_tallies(scope):
        for owner, into in ((tally.agent_id, agents), (tally.run_id, runs), ("", None)):
            if owner is None:
                continue
            found = counts if into is None else into.setdefault(owner, OwnerCounts(owner))
            found.total += tally.memories
            found.layers[tally.layer] += tally.memories
            found.categories[tally.category] += tally.memories
    if scope.agent_id is not None or scope.run_id is not None:
        agents, runs = {}, {}  # a narrowed scope: the user's page lists the agents and runs
    return Overview(counts, sorted(agents.values(), key=lambda o: o.owner),
                    sorted(runs.values(), key=lambda o: o.owner),
                    retention_spread(store.vitals(scope, NOT_MESSAGES), curve_of(memory), now),
                    store.scope_turn_counts(scope), store.list_turns(scope, UNFINISHED, 20))


@dataclass(frozen=True, slots=True)
class Browse:
    """The memories page's question, as read from its query string."""

    contains: str | None = None
    category: str | None = None
    layer: str | None = None
    memory_type: str | None = None
    deleted: bool = False
    order_by: str = "created_at"
    descending: bool = True
    page: int = 1
    size: int = 50
    topic: str | None = None  # one of mem0's categories (or a project's own): the memories it is among

    def check(self) -> Browse:
        for name, value, allowed in (("category", self.category, CATEGORIES), ("layer", self.layer, LAYERS),
                                     ("memory_type", self.memory_type, MEMORY_TYPES),
                                     ("sort", self.order_by, BROWSE_ORDERS), ("size", self.size, PAGE_SIZES)):
            if value is not None and value not in allowed:
                raise InvalidInput(f"{name} must be one of {list(allowed)}, got {value!r}")
        if self.page < 1:
            raise InvalidInput(f"page must be a positive integer, got {self.page}")
        if self.topic is not None and not NAME.match(self.topic):
            raise InvalidInput(f"topic must be a category's name (such as {TOPICS[0]}), got {self.topic[:64]!r}")
        return self

    def where(self) -> Node | None:
        conditions: dict[str, Any] = {f"jiyi.{name}": value for name, value in (
            ("category", self.category), ("layer", self.layer), ("memory_type", self.memory_type)) if value}
        if self.topic:
            conditions["categories"] = {"contains": self.topic}
        where = parse_filters(conditions) if conditions else None
        if self.category is None:  # the messages kept as evidence, only when asked for by their category
            where = NOT_MESSAGES if where is None else Logic("AND", (where, NOT_MESSAGES))
        return where


def browse(memory: AsyncMemory, scope: Scope, question: Browse) -> RecordPage:
    return console_store(memory).browse_records(
        scope, question.where(), order_by=question.order_by, descending=question.descending, limit=question.size,
        offset=(question.page - 1) * question.size, contains=question.contains or None, deleted=question.deleted)


@dataclass(slots=True)
class Provenance:
    """Why a memory is remembered: the messages it came from, the turn that made it, its history and sources."""

    messages: list[StoredMessage]
    turns: list[tuple[TurnRecord, list[dict[str, Any]]]]  # each turn, and what it did to this memory
    history: list[HistoryEvent]
    sources: list[MemoryRecord]  # merged or abstracted into it (deleted ones too)
    missing_sources: list[str]  # purged since
    related: list[MemoryRecord]


def provenance(memory: AsyncMemory, record: MemoryRecord) -> Provenance:
    store = memory.store
    message_ids = [ref.message_id for ref in record.provenance]
    turns = console_store(memory).turns_with_messages(record.scope, message_ids) if message_ids else []
    sources, missing = [], []
    for memory_id in record.compression_source_ids[:MAX_SOURCES]:
        source = store.get(memory_id, include_deleted=True)
        if source is None:
            missing.append(memory_id)
        else:
            sources.append(source)
    related = [r for memory_id in record.related_ids[:MAX_SOURCES]
               if (r := store.get(memory_id, include_deleted=True)) is not None]
    return Provenance(
        messages=store.get_messages(message_ids),
        turns=[(turn, [r for r in turn.results if r.get("id") == record.id]) for turn in turns],
        # In the order things happened: an UPDATE or PROMOTE row's created_at is the memory's own (mem0's columns).
        history=sorted(store.history(record.id), key=lambda event: event.updated_at or event.created_at),
        sources=sources,
        missing_sources=missing,
        related=related,
    )



def passes(memory: AsyncMemory, user_id: str | None) -> list[dict[str, Any]]:
    """The last maintenance passes, newest first: over one user's memories, or (None) the whole store's."""
    return logged_passes(memory.store, user_id)

def layer_history(passes: Sequence[dict[str, Any]]) -> tuple[list[str], dict[str, list[int]]]:
    """Layer sizes after each logged pass, oldest first: (times, layer -> sizes)."""
    ordered = list(reversed(passes))
    sizes: dict[str, list[int]] = defaultdict(list)
    for entry in ordered:
        layers = entry.get("layers") or {}
        for layer in LAYERS:
            sizes[layer].append(int(layers.get(layer, 0)))
    return [str(entry.get("at", ""))[:16].replace("T", " ") for entry in ordered], dict(sizes)


CONVERSATION_ROLES = {"user": "user", "assistant": "assistant", "system": "system", "用户": "user",
                      "助手": "assistant", "系统": "system"}


def parse_conversation(text: str) -> list[dict[str, str]]:
    """A pasted conversation: a JSON list of {role, content}, or lines "user: …" / "assistant: …" (用户：/助手：);
    a line without a speaker continues the message before it (the first one is the user's)."""
    text = text.strip()
    if not text:
        raise InvalidInput("paste a conversation: lines starting with user: or assistant:, or a JSON list")
    if text.startswith("["):
        try:
            parsed = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"the conversation is not valid JSON: {exc.msg} (line {exc.lineno})") from exc
        if not isinstance(parsed, list):
            raise InvalidInput("the conversation must be a JSON list of {role, content} objects")
        return parsed
    messages: list[dict[str, str]] = []
    for line in text.splitlines():
        head, sep, rest = line.replace("：", ":", 1).partition(":")
        role = CONVERSATION_ROLES.get(head.strip().lower()) if sep else None
        if role is not None:
            messages.append({"role": role, "content": rest.strip()})
        elif messages:
            messages[-1]["content"] = f"{messages[-1]['content']}\n{line}".strip()
        elif line.strip():
            messages.append({"role": "user", "content": line.strip()})
    return messages
