"""Rows ↔ records for every store: which columns a record has and how each becomes a value and back.

A store differs from another only in how it writes a time and a JSON value (SQLite: ISO text and JSON text;
PostgreSQL: timestamptz and json/jsonb) and in where it keeps a memory's read counts. That is its `Dialect`; the
mapping itself lives here once, so a field added to a record is added to every store at the same place.

A row is anything indexed by column name (sqlite3.Row, psycopg's dict rows).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any, Protocol

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
)


class Row(Protocol):
    """What a store's row offers: a value by column name, and the column names."""

    def __getitem__(self, column: str, /) -> Any: ...

    def keys(self) -> Iterable[str]: ...


def dumps(value: Any) -> str:
    """JSON as every store writes it. allow_nan=False: SQLite's JSON functions and PostgreSQL both refuse NaN, and one
    such value would break filtered reads; the caller gets a ValueError instead."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str, allow_nan=False)


@dataclass(frozen=True, slots=True)
class Dialect:
    """How one store writes times and JSON (`time_out`, `json_out`; `jsonb_out` for JSON that filters look into) and
    reads them back (`time_in` returns an aware UTC datetime or None, `json_in` the Python value)."""

    time_out: Callable[[datetime | None], Any]
    time_in: Callable[[Any], datetime | None]
    json_out: Callable[[Any], Any]
    json_in: Callable[[Any], Any]
    jsonb_out: Callable[[Any], Any]


def _now_if_none(value: datetime | None) -> datetime:
    return value or datetime.now(UTC)


def _optional(row: Row, column: str) -> Any:
    """A column some reads select and others do not (sqlite3.Row has no .get; `in` looks at its values)."""
    return row[column] if column in set(row.keys()) else None


# --- memories ----------------------------------------------------------------------------------------------------

# Every column of a memory row, in the order memory_values() gives them. A store that keeps the read counts
# (access_count, last_accessed_at) elsewhere leaves them out with `without_access`.
MEMORY_COLUMNS = (
    "id", "content", "hash", "user_id", "agent_id", "run_id", "actor_id", "role", "memory_type", "layer",
    "category", "importance", "strength", "access_count", "confidence", "source", "verified", "tags", "metadata",
    "provenance", "related_ids", "compression_source_ids", "created_at", "updated_at", "last_accessed_at",
    "event_time", "expiration_date", "deleted_at", "delete_reason", "version", "categories",
)
ACCESS_COLUMNS = ("access_count", "last_accessed_at")


def memory_values(record: MemoryRecord, d: Dialect, *, without_access: bool = False) -> tuple[Any, ...]:
    """Values for MEMORY_COLUMNS (without ACCESS_COLUMNS when `without_access`), in order."""
    values = {
        "id": record.id, "content": record.content, "hash": record.hash, "user_id": record.scope.user_id,
        "agent_id": record.scope.agent_id, "run_id": record.scope.run_id, "actor_id": record.actor_id,
        "role": record.role, "memory_type": record.memory_type.value, "layer": record.layer.value,
        "category": record.category.value, "importance": float(record.importance),
        "strength": float(record.strength), "access_count": int(record.access_count),
        "confidence": float(record.confidence), "source": record.source.value, "verified": bool(record.verified),
        "tags": d.jsonb_out(record.tags), "metadata": d.jsonb_out(record.metadata),
        "provenance": d.json_out([ref.to_json() for ref in record.provenance]),
        "related_ids": d.json_out(record.related_ids),
        "compression_source_ids": d.json_out(record.compression_source_ids),
        "created_at": d.time_out(record.created_at), "updated_at": d.time_out(record.updated_at),
        "last_accessed_at": d.time_out(record.last_accessed_at), "event_time": d.time_out(record.event_time),
        "expiration_date": d.time_out(record.expiration_date), "deleted_at": d.time_out(record.deleted_at),
        "delete_reason": record.delete_reason, "version": int(record.version),
        "categories": d.jsonb_out(record.categories),
    }
    return tuple(values[c] for c in MEMORY_COLUMNS if not (without_access and c in ACCESS_COLUMNS))


# Values to members by dict: a search reads some 50 rows, and calling an enum class (MemoryType(value)) goes through
# its metaclass, a microsecond each.
_MEMORY_TYPES = {member.value: member for member in MemoryType}
_LAYERS = {member.value: member for member in Layer}
_CATEGORIES = {member.value: member for member in Category}
_SOURCES = {member.value: member for member in Source}


@lru_cache(maxsize=1024)
def _categories_of(text: str) -> tuple[str, ...]:
    return tuple(json.loads(text))


def _categories(value: Any) -> list[str]:
    """A memory's categories: JSON text (SQLite) is one of a few distinct lists, each decoded once (a search reads
    some 50 rows; json.loads took 2.6 us a row, the cache 0.2), a list (PostgreSQL) as it is."""
    if isinstance(value, str):
        return list(_categories_of(value))
    return list(value or ())


@lru_cache(maxsize=20_000)
def _provenance_of(text: str) -> tuple[SourceRef, ...]:
    return tuple(SourceRef.from_json(item) for item in json.loads(text))


def _provenance(value: Any, d: Dialect) -> list[SourceRef]:
    """A memory's provenance: JSON text (SQLite) decoded once per distinct text — the same candidates come back
    search after search, and decoding took 11 of the 29 us a row cost (SourceRef is frozen: shared safely) — or a
    decoded list (PostgreSQL) read as it is."""
    if isinstance(value, str):
        return list(_provenance_of(value))
    return [SourceRef.from_json(item) for item in d.json_in(value)]


@lru_cache(maxsize=4096)
def _scope(user_id: str | None, agent_id: str | None, run_id: str | None) -> Scope:
    # Scope is frozen, so one object can stand for every memory of a scope: its checks cost 1.4 us, some 60 rows a
    # search.
    return Scope(user_id, agent_id, run_id)


def memory_from_row(row: Row, d: Dialect) -> MemoryRecord:
    return MemoryRecord(
        id=row["id"],
        content=row["content"],
        hash=row["hash"],
        scope=_scope(row["user_id"], row["agent_id"], row["run_id"]),
        actor_id=row["actor_id"],
        role=row["role"],
        memory_type=_MEMORY_TYPES[row["memory_type"]],
        layer=_LAYERS[row["layer"]],
        category=_CATEGORIES[row["category"]],
        importance=row["importance"],
        strength=row["strength"],
        access_count=int(row["access_count"]),
        confidence=row["confidence"],
        source=_SOURCES[row["source"]],
        verified=bool(row["verified"]),
        tags=d.json_in(row["tags"]),
        metadata=d.json_in(row["metadata"]),
        categories=_categories(row["categories"]),
        provenance=_provenance(row["provenance"], d),
        related_ids=d.json_in(row["related_ids"]),
        compression_source_ids=d.json_in(row["compression_source_ids"]),
        created_at=_now_if_none(d.time_in(row["created_at"])),
        updated_at=d.time_in(row["updated_at"]),
        last_accessed_at=d.time_in(row["last_accessed_at"]),
        event_time=d.time_in(row["event_time"]),
        expiration_date=d.time_in(row["expiration_date"]),
        deleted_at=d.time_in(row["deleted_at"]),
        delete_reason=row["delete_reason"],
        version=row["version"],
    )


# --- history -----------------------------------------------------------------------------------------------------

HISTORY_COLUMNS = ("id", "memory_id", "old_memory", "new_memory", "event", "created_at", "updated_at", "is_deleted",
                   "actor_id", "role")


def history_values(event: HistoryEvent, d: Dialect) -> tuple[Any, ...]:
    return (
        event.id, event.memory_id, event.old_memory, event.new_memory, event.event.value, d.time_out(event.created_at),
        d.time_out(event.updated_at), int(event.is_deleted), event.actor_id, event.role,
    )


def history_from_row(row: Row, d: Dialect) -> HistoryEvent:
    return HistoryEvent(
        id=row["id"],
        memory_id=row["memory_id"],
        old_memory=row["old_memory"],
        new_memory=row["new_memory"],
        event=Event(row["event"]),
        created_at=_now_if_none(d.time_in(row["created_at"])),
        updated_at=d.time_in(row["updated_at"]),
        is_deleted=bool(row["is_deleted"]),
        actor_id=row["actor_id"],
        role=row["role"],
        reason=_optional(row, "reason"),
    )


# --- messages and turns ------------------------------------------------------------------------------------------

MESSAGE_COLUMNS = ("id", "user_id", "agent_id", "run_id", "role", "name", "content", "created_at", "external_id",
                   "metadata")


def message_values(message: StoredMessage, d: Dialect) -> tuple[Any, ...]:
    return (
        message.id, message.scope.user_id, message.scope.agent_id, message.scope.run_id, message.role,
        message.name, message.content, d.time_out(message.created_at), message.external_id,
        d.json_out(message.metadata),
    )


def message_from_row(row: Row, d: Dialect) -> StoredMessage:
    return StoredMessage(
        id=row["id"],
        scope=Scope(row["user_id"], row["agent_id"], row["run_id"]),
        role=row["role"],
        name=row["name"],
        content=row["content"],
        created_at=_now_if_none(d.time_in(row["created_at"])),
        external_id=row["external_id"],
        metadata=d.json_in(row["metadata"]),
    )


TURN_COLUMNS = ("id", "user_id", "agent_id", "run_id", "message_ids", "options", "status", "attempts",
                "next_attempt_at", "lease_until", "last_error", "extractor", "results", "created_at", "updated_at")


def turn_values(turn: TurnRecord, d: Dialect) -> tuple[Any, ...]:
    return (
        turn.id, turn.scope.user_id, turn.scope.agent_id, turn.scope.run_id, d.json_out(turn.message_ids),
        d.json_out(turn.options), turn.status.value, int(turn.attempts), d.time_out(turn.next_attempt_at),
        d.time_out(turn.lease_until), turn.last_error, turn.extractor, d.json_out(turn.results),
        d.time_out(turn.created_at), d.time_out(turn.updated_at),
    )


def turn_from_row(row: Row, d: Dialect) -> TurnRecord:
    return TurnRecord(
        id=row["id"],
        scope=Scope(row["user_id"], row["agent_id"], row["run_id"]),
        message_ids=d.json_in(row["message_ids"]),
        options=d.json_in(row["options"]),
        status=TurnStatus(row["status"]),
        attempts=row["attempts"],
        next_attempt_at=_now_if_none(d.time_in(row["next_attempt_at"])),
        lease_until=d.time_in(row["lease_until"]),
        last_error=row["last_error"],
        extractor=row["extractor"],
        results=d.json_in(row["results"]),
        created_at=_now_if_none(d.time_in(row["created_at"])),
        updated_at=d.time_in(row["updated_at"]),
    )
