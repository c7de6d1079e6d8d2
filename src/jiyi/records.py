"""The data jiyi keeps: memory records, history events, raw messages, scopes and search hits.

A record carries every field the design needs (layers, forgetting, consolidation, provenance) so that later
behaviour adds logic, not columns.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from enum import Enum, StrEnum
from typing import Any, NamedTuple

from jiyi.errors import InvalidInput


class MemoryType(StrEnum):
    EPISODIC = "episodic"
    SEMANTIC = "semantic"
    PREFERENCE = "preference"
    FACT = "fact"
    PROCEDURAL = "procedural"


class Layer(StrEnum):
    WORKING = "working"
    SHORT_TERM = "short_term"
    LONG_TERM = "long_term"


class Category(StrEnum):
    SYSTEM = "system"
    CORE = "core"
    FACT = "fact"
    EPISODE = "episode"
    # A message kept word for word as searchable evidence beneath the facts extracted from it (infer=True): what the
    # extraction missed is still found, and a fact that stands for it replaces it in results (core/retrieval.py).
    MESSAGE = "message"


class Source(StrEnum):
    USER = "user"
    ASSISTANT = "assistant"
    SYSTEM = "system"
    BACKGROUND = "background"


class Event(StrEnum):
    ADD = "ADD"
    UPDATE = "UPDATE"
    DELETE = "DELETE"
    NONE = "NONE"
    BOOST = "BOOST"  # a retrieved memory shaped the reply: it gains importance (the companion seed's review effect)
    # The lifecycle's own changes (jobs/maintenance.py); the history row's `reason` says why.
    PROMOTE = "PROMOTE"  # reviewed and made core: a stable fact about the person
    MOVE = "MOVE"  # changed layer (short-term -> long-term)
    MERGE = "MERGE"  # consolidated: this memory now stands for several similar ones
    KEEP = "KEEP"  # reviewed before forgetting and kept
    RESTORE = "RESTORE"  # a deletion taken back within the purge window (POST /memories/{id}/restore, the console)


Clock = Callable[[], datetime]  # returns the present as an aware UTC datetime


def utcnow() -> datetime:
    return datetime.now(UTC)


def new_id() -> str:
    return str(uuid.uuid4())


def content_hash(content: str) -> str:
    # mem0 uses md5 of the text for `hash`; clients compare it, so we keep the same function.
    return hashlib.md5(content.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class Scope:
    """Who a memory belongs to. Any non-empty combination of the three ids; search ANDs the given ones."""

    user_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = None

    def __post_init__(self) -> None:
        for name in ("user_id", "agent_id", "run_id"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, str) or not value.strip()):
                raise InvalidInput(f"{name} must be a non-empty string")
            if value is not None:
                try:
                    value.encode("utf-8")
                except UnicodeEncodeError:
                    raise InvalidInput(f"{name} is not valid Unicode text") from None

    @property
    def is_empty(self) -> bool:
        return self.user_id is None and self.agent_id is None and self.run_id is None

    def require(self) -> Scope:
        if self.is_empty:
            raise InvalidInput("at least one of user_id, agent_id or run_id is required")
        return self

    def as_dict(self) -> dict[str, str]:
        return {k: v for k, v in (("user_id", self.user_id), ("agent_id", self.agent_id),
                                  ("run_id", self.run_id)) if v is not None}


@dataclass(frozen=True, slots=True)
class SourceRef:
    """Provenance: one source message a memory came from."""

    message_id: str
    role: str
    created_at: datetime | None = None
    external_id: str | None = None  # the caller's own id for the message (e.g. a LoCoMo dia_id)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"message_id": self.message_id, "role": self.role}
        if self.created_at is not None:
            data["created_at"] = self.created_at.isoformat()
        if self.external_id is not None:
            data["external_id"] = self.external_id
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SourceRef:
        created = data.get("created_at")
        return cls(
            message_id=str(data["message_id"]),
            role=str(data.get("role", "user")),
            created_at=datetime.fromisoformat(created) if created else None,
            external_id=data.get("external_id"),
        )


@dataclass(slots=True)
class MemoryRecord:
    content: str
    scope: Scope
    id: str = field(default_factory=new_id)
    hash: str = ""
    actor_id: str | None = None
    role: str | None = None
    memory_type: MemoryType = MemoryType.EPISODIC
    layer: Layer = Layer.SHORT_TERM
    category: Category = Category.FACT
    importance: float = 0.5
    strength: float = 1.0
    access_count: int = 0
    confidence: float = 1.0
    source: Source = Source.USER
    verified: bool = False
    tags: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    # mem0's categories (personal_details, food, … or a project's custom_categories; core/categories.py), beside
    # jiyi's own `category`, which says what kind of record this is (a fact, a core fact, a message kept as evidence).
    categories: list[str] = field(default_factory=list)
    provenance: list[SourceRef] = field(default_factory=list)
    related_ids: list[str] = field(default_factory=list)
    compression_source_ids: list[str] = field(default_factory=list)
    created_at: datetime = field(default_factory=utcnow)
    updated_at: datetime | None = None
    last_accessed_at: datetime | None = None
    event_time: datetime | None = None
    expiration_date: datetime | None = None
    deleted_at: datetime | None = None
    delete_reason: str | None = None
    # Starts at 1, + 1 with every change the store makes; a writer that read version n can ask the store to apply its
    # change only if the memory is still at n (compare-and-swap), so history's old_memory is what it replaced.
    version: int = 1

    def __post_init__(self) -> None:
        if not isinstance(self.content, str) or not self.content.strip():
            raise InvalidInput("memory content must be a non-empty string")
        if not self.hash:
            self.hash = content_hash(self.content)

    def with_content(self, content: str, when: datetime | None = None) -> MemoryRecord:
        return replace(self, content=content, hash=content_hash(content), updated_at=when or utcnow())


@dataclass(frozen=True, slots=True)
class HistoryEvent:
    """One row of the history table; the columns are mem0's, plus the scope for auditing."""

    memory_id: str
    event: Event
    old_memory: str | None
    new_memory: str | None
    id: str = field(default_factory=new_id)
    created_at: datetime = field(default_factory=utcnow)
    updated_at: datetime | None = None
    is_deleted: bool = False
    actor_id: str | None = None
    role: str | None = None
    reason: str | None = None  # why the lifecycle made this change (forgetting, review, consolidation...)


class _FromRecord(Enum):
    FROM_RECORD = "from the record"


FROM_RECORD = _FromRecord.FROM_RECORD  # history_row's actor_id / role: the memory's own

# A row that brings a memory into being or takes it out (or back) is dated when that happens; a row for a change to a
# living memory keeps mem0's columns: created_at is the memory's own, updated_at when it changed.
_DATED_BY_THE_CHANGE = frozenset({Event.ADD, Event.DELETE, Event.RESTORE})


def history_row(event: Event, record: MemoryRecord, when: datetime, *, before: MemoryRecord | None = None,
                reason: str | None = None, actor_id: str | _FromRecord | None = FROM_RECORD,
                role: str | _FromRecord | None = FROM_RECORD) -> HistoryEvent:
    """The history row of `event` on `record` (the memory as written, or as deleted), made at `when`. `before`: the
    memory as it was read, when the change rewrote its text. Every writer builds its rows here."""
    return HistoryEvent(
        memory_id=record.id,
        event=event,
        old_memory=None if event in (Event.ADD, Event.RESTORE) else (before or record).content,
        new_memory=None if event is Event.DELETE else record.content,
        created_at=when if event in _DATED_BY_THE_CHANGE else record.created_at,
        updated_at=None if event is Event.ADD else when,
        is_deleted=event is Event.DELETE,
        actor_id=record.actor_id if actor_id is FROM_RECORD else actor_id,
        role=record.role if role is FROM_RECORD else role,
        reason=reason,
    )


class Revision(NamedTuple):
    """A change to a stored memory and the history row that records it: what store.update writes together."""

    record: MemoryRecord
    history: HistoryEvent


def revise(current: MemoryRecord, event: Event, when: datetime, *, reason: str | None = None,
           actor_id: str | _FromRecord | None = FROM_RECORD, role: str | _FromRecord | None = FROM_RECORD,
           **changes: Any) -> Revision:
    """`current` with `changes` made (a new `content` brings its hash) and its history row. updated_at moves only when
    given: the lifecycle's bookkeeping is not a new version of what the user said."""
    if "content" in changes:
        changes["hash"] = content_hash(changes["content"])
    record = replace(current, **changes)
    return Revision(record, history_row(event, record, when, before=current, reason=reason, actor_id=actor_id,
                                        role=role))


@dataclass(frozen=True, slots=True)
class StoredMessage:
    """A raw chat message kept verbatim, so a turn is never lost whatever extraction does with it."""

    content: str
    role: str
    scope: Scope
    id: str = field(default_factory=new_id)
    name: str | None = None
    created_at: datetime = field(default_factory=utcnow)
    external_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class SearchHit:
    record: MemoryRecord
    score: float  # for ordering: relevance weighed by retention, importance and recency
    details: dict[str, Any] = field(default_factory=dict)
    relevance: float = 0.0  # how well the memory matches the query, in [0, 1], before any weighting


class TurnStatus(StrEnum):
    QUEUED = "queued"  # stored, extraction not started
    PROCESSING = "processing"  # claimed by a worker (or the caller's own add) until lease_until
    RETRY = "retry"  # the LLM failed; offline extraction may have run; the LLM is tried again at next_attempt_at
    DONE = "done"
    FAILED = "failed"  # gave up after the last attempt; whatever offline extraction stored stays


@dataclass(slots=True)
class TurnRecord:
    """A saved chat turn and the state of its extraction: the write path's durable queue entry.

    It is written, with the turn's messages, before any LLM call, so a turn survives every failure after that."""

    scope: Scope
    message_ids: list[str]
    id: str = field(default_factory=new_id)
    status: TurnStatus = TurnStatus.QUEUED
    options: dict[str, Any] = field(default_factory=dict)  # metadata, memory_type, prompt, ... as add() got them
    attempts: int = 0
    next_attempt_at: datetime = field(default_factory=utcnow)
    lease_until: datetime | None = None
    last_error: str | None = None
    extractor: str | None = None  # "llm", "offline", or "offline-fallback" while the LLM is failing
    results: list[dict[str, Any]] = field(default_factory=list)
    created_at: datetime = field(default_factory=utcnow)
    updated_at: datetime | None = None
