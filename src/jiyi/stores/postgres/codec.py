"""Rows ↔ records in PostgreSQL (the mapping itself is jiyi.stores.rows), and pgvector's binary format for numpy
vectors.

Times are timestamptz: naive datetimes are taken as UTC on the way in (as the SQLite store does), and every time comes
back in UTC whatever the session's time zone. JSON that filters look into (tags, metadata) is jsonb; the rest is json,
kept as written.
"""

from __future__ import annotations

import json
import struct
from collections import Counter
from datetime import UTC, datetime
from typing import Any

import numpy as np
import psycopg
from psycopg.adapt import Buffer, Dumper, Loader
from psycopg.pq import Format
from psycopg.types.json import Json, Jsonb

from jiyi.keys import ApiKey, KeyScope
from jiyi.records import HistoryEvent, MemoryRecord, StoredMessage, TurnRecord
from jiyi.stores import rows
from jiyi.stores.rows import ACCESS_COLUMNS, HISTORY_COLUMNS, MESSAGE_COLUMNS, TURN_COLUMNS
from jiyi.text import analyze_for_index
from jiyi.webhooks.model import DeliveryStatus, Webhook, WebhookDelivery

Row = dict[str, Any]

__all__ = ["HISTORY_COLUMNS", "MESSAGE_COLUMNS", "TURN_COLUMNS"]

# Stored in the memories table (access_count and last_accessed_at live in memory_access).
MEMORY_COLUMNS = tuple(c for c in rows.MEMORY_COLUMNS if c not in ACCESS_COLUMNS)
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


def jsonb(value: Any) -> Jsonb:
    return Jsonb(value, dumps=rows.dumps)


def json_text(value: Any) -> Json:
    return Json(value, dumps=rows.dumps)


def _loaded(value: Any) -> Any:
    return value  # psycopg parses json and jsonb columns itself


POSTGRES = rows.Dialect(time_out=utc, time_in=utc, json_out=json_text, json_in=_loaded, jsonb_out=jsonb)


# --- keywords --------------------------------------------------------------------------------------------------

CHAR_PREFIX = "#"  # a CJK character's key in `keywords`; jiyi.text's terms are word characters only


def keyword_columns(content: str) -> tuple[list[str], str]:
    """(keywords, cjk) for a memory's text: see migrations.m002_memories."""
    analyzed = analyze_for_index(content)
    chars = analyzed.chars.split()
    return analyzed.terms.split() + [CHAR_PREFIX + c for c in chars], "".join(chars)


def keyword_counts(keywords: list[str] | None) -> tuple[set[str], int]:
    """The distinct entries of a memory's keywords, its terms and its CJK characters (what it adds to the document
    frequencies in keyword_stats), and its length (for BM25)."""
    if not keywords:
        return set(), 0
    return set(keywords), len(keywords)


KEYWORD_SHARDS = 16  # rows per term in keyword_stats: see migrations.m007_keyword_stats


def add_keyword_stats(db: psycopg.Connection[Any], changes: Counter[str], length: int, docs: int) -> None:
    """Add to the document frequencies (and the count and total length of indexed memories, the row ''). The
    last statement of a transaction: its rows are locked in term order, after everything else."""
    rows = [(term, n, 0) for term, n in changes.items() if n and term]
    if docs or length:
        rows.append(("", docs, length))
    if not rows:
        return
    rows.sort()
    db.execute(
        "INSERT INTO keyword_stats (term, shard, docs, length) "
        f"SELECT term, pg_backend_pid() %% {KEYWORD_SHARDS}, docs, length "
        "FROM unnest(%s::text[], %s::bigint[], %s::bigint[]) AS d(term, docs, length) ORDER BY term "
        "ON CONFLICT (term, shard) DO UPDATE SET docs = keyword_stats.docs + excluded.docs, "
        "length = keyword_stats.length + excluded.length",
        ([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows]),
    )


# --- memories --------------------------------------------------------------------------------------------------


def memory_params(record: MemoryRecord) -> tuple[Any, ...]:
    """Values for MEMORY_COLUMNS, in order."""
    return rows.memory_values(record, POSTGRES, without_access=True)


def row_to_memory(row: Row) -> MemoryRecord:
    return rows.memory_from_row(row, POSTGRES)


def history_params(event: HistoryEvent) -> tuple[Any, ...]:
    return rows.history_values(event, POSTGRES)


def row_to_history(row: Row) -> HistoryEvent:
    return rows.history_from_row(row, POSTGRES)


def message_params(message: StoredMessage) -> tuple[Any, ...]:
    return rows.message_values(message, POSTGRES)


def row_to_message(row: Row) -> StoredMessage:
    return rows.message_from_row(row, POSTGRES)


def turn_params(turn: TurnRecord) -> tuple[Any, ...]:
    return rows.turn_values(turn, POSTGRES)


def row_to_turn(row: Row) -> TurnRecord:
    return rows.turn_from_row(row, POSTGRES)


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
