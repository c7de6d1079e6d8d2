"""Rows ↔ records. Datetimes are stored as fixed-width UTC ISO strings, so string order is time order."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime
from typing import Any

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

MEMORY_COLUMNS = (
    "id", "content", "hash", "user_id", "agent_id", "run_id", "actor_id", "role", "memory_type", "layer",
    "category", "importance", "strength", "access_count", "confidence", "source", "verified", "tags", "metadata",
    "provenance", "related_ids", "compression_source_ids", "created_at", "updated_at", "last_accessed_at",
    "event_time", "expiration_date", "deleted_at", "delete_reason", "version",
)


def format_datetime(value: datetime | None) -> str | None:
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f+00:00")


def parse_datetime(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def _dumps(value: Any) -> str:
    # allow_nan=False: SQLite's JSON functions reject NaN/Infinity, and one such value would break filtered reads.
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str, allow_nan=False)


def memory_to_row(record: MemoryRecord) -> tuple[Any, ...]:
    return (
        record.id, record.content, record.hash, record.scope.user_id, record.scope.agent_id, record.scope.run_id,
        record.actor_id, record.role, record.memory_type.value, record.layer.value, record.category.value,
        float(record.importance), float(record.strength), int(record.access_count), float(record.confidence),
        record.source.value, int(record.verified), _dumps(record.tags), _dumps(record.metadata),
        _dumps([ref.to_json() for ref in record.provenance]), _dumps(record.related_ids),
        _dumps(record.compression_source_ids), format_datetime(record.created_at),
        format_datetime(record.updated_at), format_datetime(record.last_accessed_at),
        format_datetime(record.event_time), format_datetime(record.expiration_date),
        format_datetime(record.deleted_at), record.delete_reason, int(record.version),
    )


def row_to_memory(row: sqlite3.Row) -> MemoryRecord:
    return MemoryRecord(
        id=row["id"],
        content=row["content"],
        hash=row["hash"],
        scope=Scope(row["user_id"], row["agent_id"], row["run_id"]),
        actor_id=row["actor_id"],
        role=row["role"],
        memory_type=MemoryType(row["memory_type"]),
        layer=Layer(row["layer"]),
        category=Category(row["category"]),
        importance=row["importance"],
        strength=row["strength"],
        access_count=row["access_count"],
        confidence=row["confidence"],
        source=Source(row["source"]),
        verified=bool(row["verified"]),
        tags=json.loads(row["tags"]),
        metadata=json.loads(row["metadata"]),
        provenance=[SourceRef.from_json(item) for item in json.loads(row["provenance"])],
        related_ids=json.loads(row["related_ids"]),
        compression_source_ids=json.loads(row["compression_source_ids"]),
        created_at=parse_datetime(row["created_at"]) or datetime.now(UTC),
        updated_at=parse_datetime(row["updated_at"]),
        last_accessed_at=parse_datetime(row["last_accessed_at"]),
        event_time=parse_datetime(row["event_time"]),
        expiration_date=parse_datetime(row["expiration_date"]),
        deleted_at=parse_datetime(row["deleted_at"]),
        delete_reason=row["delete_reason"],
        version=row["version"],
    )


def history_to_row(event: HistoryEvent) -> tuple[Any, ...]:
    return (
        event.id, event.memory_id, event.old_memory, event.new_memory, event.event.value,
        format_datetime(event.created_at), format_datetime(event.updated_at), int(event.is_deleted),
        event.actor_id, event.role,
    )


def row_to_history(row: sqlite3.Row) -> HistoryEvent:
    return HistoryEvent(
        id=row["id"],
        memory_id=row["memory_id"],
        old_memory=row["old_memory"],
        new_memory=row["new_memory"],
        event=Event(row["event"]),
        created_at=parse_datetime(row["created_at"]) or datetime.now(UTC),
        updated_at=parse_datetime(row["updated_at"]),
        is_deleted=bool(row["is_deleted"]),
        actor_id=row["actor_id"],
        role=row["role"],
        reason=row["reason"] if "reason" in row.keys() else None,  # noqa: SIM118 - `in row` looks at values
    )


def message_to_row(message: StoredMessage) -> tuple[Any, ...]:
    return (
        message.id, message.scope.user_id, message.scope.agent_id, message.scope.run_id, message.role,
        message.name, message.content, format_datetime(message.created_at), message.external_id,
        _dumps(message.metadata),
    )


def row_to_message(row: sqlite3.Row) -> StoredMessage:
    return StoredMessage(
        id=row["id"],
        scope=Scope(row["user_id"], row["agent_id"], row["run_id"]),
        role=row["role"],
        name=row["name"],
        content=row["content"],
        created_at=parse_datetime(row["created_at"]) or datetime.now(UTC),
        external_id=row["external_id"],
        metadata=json.loads(row["metadata"]),
    )


TURN_COLUMNS = ("id", "user_id", "agent_id", "run_id", "message_ids", "options", "status", "attempts",
                "next_attempt_at", "lease_until", "last_error", "extractor", "results", "created_at", "updated_at")


def turn_to_row(turn: TurnRecord) -> tuple[Any, ...]:
    return (
        turn.id, turn.scope.user_id, turn.scope.agent_id, turn.scope.run_id, _dumps(turn.message_ids),
        _dumps(turn.options), turn.status.value, int(turn.attempts), format_datetime(turn.next_attempt_at),
        format_datetime(turn.lease_until), turn.last_error, turn.extractor, _dumps(turn.results),
        format_datetime(turn.created_at), format_datetime(turn.updated_at),
    )


def row_to_turn(row: sqlite3.Row) -> TurnRecord:
    return TurnRecord(
        id=row["id"],
        scope=Scope(row["user_id"], row["agent_id"], row["run_id"]),
        message_ids=json.loads(row["message_ids"]),
        options=json.loads(row["options"]),
        status=TurnStatus(row["status"]),
        attempts=row["attempts"],
        next_attempt_at=parse_datetime(row["next_attempt_at"]) or datetime.now(UTC),
        lease_until=parse_datetime(row["lease_until"]),
        last_error=row["last_error"],
        extractor=row["extractor"],
        results=json.loads(row["results"]),
        created_at=parse_datetime(row["created_at"]) or datetime.now(UTC),
        updated_at=parse_datetime(row["updated_at"]),
    )
