"""Rows ↔ records, and pgvector's binary format for numpy vectors.

Times are timestamptz: naive datetimes are taken as UTC on the way in (as the SQLite store does), and every time comes
back in UTC whatever the session's time zone. JSON that filters look into (tags, metadata) is jsonb; the rest is json,
kept as written.
"""

from __future__ import annotations

import json
import struct
from datetime import UTC, datetime
from typing import Any

import numpy as np
from psycopg.adapt import Buffer, Dumper, Loader
from psycopg.pq import Format
from psycopg.types.json import Json, Jsonb

from jiyi.keys import ApiKey, KeyScope
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
from jiyi.text import analyze_for_index
from jiyi.webhooks.model import DeliveryStatus, Webhook, WebhookDelivery

Row = dict[str, Any]

# Stored in the memories table (access_count and last_accessed_at live in memory_access).
MEMORY_COLUMNS = (
    "id", "content", "hash", "user_id", "agent_id", "run_id", "actor_id", "role", "memory_type", "layer",
    "category", "importance", "strength", "confidence", "source", "verified", "tags", "metadata", "provenance",
    "related_ids", "compression_source_ids", "created_at", "updated_at", "event_time", "expiration_date",
    "deleted_at", "delete_reason", "version",
)
# What a read selects: the table's columns (as m.*) and the read counts beside them.
MEMORY_SELECT = (", ".join(f"m.{c}" for c in MEMORY_COLUMNS)
                 + ", coalesce(a.access_count, 0) AS access_count, a.last_accessed_at")
MEMORY_FROM = "memories m LEFT JOIN memory_access a ON a.memory_id = m.id"


def utc(value: datetime | None) -> datetime | None:
    if value is None:
        return None
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def _dumps(value: Any) -> str:
    # allow_nan=False: JSON has no NaN, and PostgreSQL refuses it; the caller gets a ValueError as with SQLite.
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str, allow_nan=False)


def jsonb(value: Any) -> Jsonb:
    return Jsonb(value, dumps=_dumps)


def json_text(value: Any) -> Json:
    return Json(value, dumps=_dumps)


# --- keywords --------------------------------------------------------------------------------------------------

CHAR_PREFIX = "#"  # a CJK character's key in `keywords`; jiyi.text's terms are word characters only


def keyword_columns(content: str) -> tuple[list[str], str]:
    """(keywords, cjk) for a memory's text: see migrations.m002_memories."""
    analyzed = analyze_for_index(content)
    chars = analyzed.chars.split()
    return analyzed.terms.split() + [CHAR_PREFIX + c for c in chars], "".join(chars)


def keyword_counts(keywords: list[str] | None) -> tuple[set[str], int]:
    """The distinct terms of a memory's keywords (its document frequencies) and its length (for BM25)."""
    if not keywords:
        return set(), 0
    return {k for k in keywords if not k.startswith(CHAR_PREFIX)}, len(keywords)


# --- memories --------------------------------------------------------------------------------------------------


def memory_params(record: MemoryRecord) -> tuple[Any, ...]:
    """Values for MEMORY_COLUMNS, in order."""
    return (
        record.id, record.content, record.hash, record.scope.user_id, record.scope.agent_id, record.scope.run_id,
        record.actor_id, record.role, record.memory_type.value, record.layer.value, record.category.value,
        float(record.importance), float(record.strength), float(record.confidence), record.source.value,
        bool(record.verified), jsonb(record.tags), jsonb(record.metadata),
        json_text([ref.to_json() for ref in record.provenance]), json_text(record.related_ids),
        json_text(record.compression_source_ids), utc(record.created_at), utc(record.updated_at),
        utc(record.event_time), utc(record.expiration_date), utc(record.deleted_at), record.delete_reason,
        int(record.version),
    )


def row_to_memory(row: Row) -> MemoryRecord:
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
        access_count=int(row["access_count"]),
        confidence=row["confidence"],
        source=Source(row["source"]),
        verified=bool(row["verified"]),
        tags=row["tags"],
        metadata=row["metadata"],
        provenance=[SourceRef.from_json(item) for item in row["provenance"]],
        related_ids=row["related_ids"],
        compression_source_ids=row["compression_source_ids"],
        created_at=utc(row["created_at"]) or datetime.now(UTC),
        updated_at=utc(row["updated_at"]),
        last_accessed_at=utc(row["last_accessed_at"]),
        event_time=utc(row["event_time"]),
        expiration_date=utc(row["expiration_date"]),
        deleted_at=utc(row["deleted_at"]),
        delete_reason=row["delete_reason"],
        version=row["version"],
    )


# --- history ---------------------------------------------------------------------------------------------------

HISTORY_COLUMNS = ("id", "memory_id", "old_memory", "new_memory", "event", "created_at", "updated_at", "is_deleted",
                   "actor_id", "role")


def history_params(event: HistoryEvent) -> tuple[Any, ...]:
    return (
        event.id, event.memory_id, event.old_memory, event.new_memory, event.event.value, utc(event.created_at),
        utc(event.updated_at), int(event.is_deleted), event.actor_id, event.role,
    )


def row_to_history(row: Row) -> HistoryEvent:
    return HistoryEvent(
        id=row["id"],
        memory_id=row["memory_id"],
        old_memory=row["old_memory"],
        new_memory=row["new_memory"],
        event=Event(row["event"]),
        created_at=utc(row["created_at"]) or datetime.now(UTC),
        updated_at=utc(row["updated_at"]),
        is_deleted=bool(row["is_deleted"]),
        actor_id=row["actor_id"],
        role=row["role"],
        reason=row.get("reason"),
    )


# --- messages and turns ------------------------------------------------------------------------------------------

MESSAGE_COLUMNS = ("id", "user_id", "agent_id", "run_id", "role", "name", "content", "created_at", "external_id",
                   "metadata")


def message_params(message: StoredMessage) -> tuple[Any, ...]:
    return (
        message.id, message.scope.user_id, message.scope.agent_id, message.scope.run_id, message.role,
        message.name, message.content, utc(message.created_at), message.external_id, json_text(message.metadata),
    )


def row_to_message(row: Row) -> StoredMessage:
    return StoredMessage(
        id=row["id"],
        scope=Scope(row["user_id"], row["agent_id"], row["run_id"]),
        role=row["role"],
        name=row["name"],
        content=row["content"],
        created_at=utc(row["created_at"]) or datetime.now(UTC),
        external_id=row["external_id"],
        metadata=row["metadata"],
    )


TURN_COLUMNS = ("id", "user_id", "agent_id", "run_id", "message_ids", "options", "status", "attempts",
                "next_attempt_at", "lease_until", "last_error", "extractor", "results", "created_at", "updated_at")


def turn_params(turn: TurnRecord) -> tuple[Any, ...]:
    return (
        turn.id, turn.scope.user_id, turn.scope.agent_id, turn.scope.run_id, json_text(turn.message_ids),
        json_text(turn.options), turn.status.value, int(turn.attempts), utc(turn.next_attempt_at),
        utc(turn.lease_until), turn.last_error, turn.extractor, json_text(turn.results), utc(turn.created_at),
        utc(turn.updated_at),
    )


def row_to_turn(row: Row) -> TurnRecord:
    return TurnRecord(
        id=row["id"],
        scope=Scope(row["user_id"], row["agent_id"], row["run_id"]),
        message_ids=row["message_ids"],
        options=row["options"],
        status=TurnStatus(row["status"]),
        attempts=row["attempts"],
        next_attempt_at=utc(row["next_attempt_at"]) or datetime.now(UTC),
        lease_until=utc(row["lease_until"]),
        last_error=row["last_error"],
        extractor=row["extractor"],
        results=row["results"],
        created_at=utc(row["created_at"]) or datetime.now(UTC),
        updated_at=utc(row["updated_at"]),
    )


# --- webhooks and API keys ---------------------------------------------------------------------------------------

WEBHOOK_COLUMNS = ("id", "project_id", "user_id", "name", "url", "event_types", "secret", "is_active", "after_change",
                   "created_at", "updated_at", "last_status", "last_status_code", "last_error", "last_attempt_at")
DELIVERY_COLUMNS = ("id", "webhook_id", "change_id", "event_type", "body", "status", "attempts", "next_attempt_at",
                    "lease_until", "last_status_code", "last_error", "created_at", "updated_at")


def webhook_params(webhook: Webhook) -> tuple[Any, ...]:
    return (webhook.id, webhook.project_id, webhook.user_id, webhook.name, webhook.url,
            json_text(webhook.event_types), webhook.secret, bool(webhook.is_active), int(webhook.after_change),
            utc(webhook.created_at), utc(webhook.updated_at), webhook.last_status, webhook.last_status_code,
            webhook.last_error, utc(webhook.last_attempt_at))


def row_to_webhook(row: Row) -> Webhook:
    return Webhook(
        id=row["id"], project_id=row["project_id"], user_id=row["user_id"], name=row["name"], url=row["url"],
        event_types=row["event_types"], secret=row["secret"], is_active=bool(row["is_active"]),
        after_change=int(row["after_change"]), created_at=utc(row["created_at"]) or datetime.now(UTC),
        updated_at=utc(row["updated_at"]), last_status=row["last_status"],
        last_status_code=row["last_status_code"], last_error=row["last_error"],
        last_attempt_at=utc(row["last_attempt_at"]),
    )


def delivery_params(delivery: WebhookDelivery) -> tuple[Any, ...]:
    return (delivery.id, delivery.webhook_id, delivery.change_id, delivery.event_type, delivery.body,
            delivery.status.value, delivery.attempts, utc(delivery.next_attempt_at), utc(delivery.lease_until),
            delivery.last_status_code, delivery.last_error, utc(delivery.created_at), utc(delivery.updated_at))


def row_to_delivery(row: Row) -> WebhookDelivery:
    return WebhookDelivery(
        id=row["id"], webhook_id=row["webhook_id"], change_id=row["change_id"], event_type=row["event_type"],
        body=row["body"], status=DeliveryStatus(row["status"]), attempts=row["attempts"],
        next_attempt_at=utc(row["next_attempt_at"]) or datetime.now(UTC), lease_until=utc(row["lease_until"]),
        last_status_code=row["last_status_code"], last_error=row["last_error"],
        created_at=utc(row["created_at"]) or datetime.now(UTC), updated_at=utc(row["updated_at"]),
    )


def row_to_key(row: Row) -> ApiKey:
    return ApiKey(id=row["id"], key_hash=row["key_hash"], scope=KeyScope(row["scope"]), user_id=row["user_id"],
                  agent_id=row["agent_id"], name=row["name"], created_at=utc(row["created_at"]) or datetime.now(UTC),
                  last_used_at=utc(row["last_used_at"]), revoked_at=utc(row["revoked_at"]))


# --- pgvector ----------------------------------------------------------------------------------------------------
# pgvector's binary format: dimension and a reserved word (uint16 each), then float32 values, all big-endian.


def _dumper(vector_oid: int) -> type[Dumper]:
    class VectorDumper(Dumper):
        oid = vector_oid
        format = Format.BINARY

        def dump(self, obj: Any) -> Buffer:
            values = np.asarray(obj, dtype=">f4").reshape(-1)
            return struct.pack(">HH", values.shape[0], 0) + values.tobytes()

    return VectorDumper


class VectorBinaryLoader(Loader):
    format = Format.BINARY

    def load(self, data: Buffer) -> np.ndarray:
        dims, _ = struct.unpack_from(">HH", data)
        return np.frombuffer(bytes(data), dtype=">f4", count=dims, offset=4).astype(np.float32)


class VectorTextLoader(Loader):
    def load(self, data: Buffer) -> np.ndarray:
        return np.array(json.loads(bytes(data)), dtype=np.float32)


def register_vector(adapters: Any, vector_oid: int) -> None:
    """numpy arrays go out as pgvector's `vector`; `vector` values come back as float32 arrays."""
    adapters.register_dumper(np.ndarray, _dumper(vector_oid))
    adapters.register_loader(vector_oid, VectorBinaryLoader)
    adapters.register_loader(vector_oid, VectorTextLoader)
