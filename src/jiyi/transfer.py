"""Export and import: JSON Lines, one memory, history row or source message per line, vectors left out (an import
re-embeds, so a file moves between embedders and between stores: `jiyi export` from SQLite, `jiyi import` into
PostgreSQL). The messages the memories came from travel with them, so provenance still leads to what was said.

Every field of a memory, a history row and a message is written, and read back as it was: an export imported into an
empty store exports again byte for byte (tests/test_transfer.py), with one exception — a number inside a memory's
`metadata` is written as the store gives it back, and PostgreSQL's jsonb spells some numbers its own way (1e20 as
100000000000000000000, -0.0 as 0.0: the same value). Two things are written in one form whatever the store: metadata
keys in sorted order (SQLite keeps them as written, jsonb by length), and an importance, strength or confidence of -0.0
as 0.0 (SQLite keeps no sign of zero). A history row is written as `history()` and the REST API show it
(views.history_item). A full export (every scope, deleted memories included: a backup) also carries the history rows
of memories purged since — their audit trail, without the text. API keys are not exported: they stay with the server
that issued them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from jiyi.errors import InvalidInput
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
)
from jiyi.views import history_item

FORMAT_VERSION = 1  # message lines were added within version 1: an older reader reports them as unknown
MESSAGE_BATCH = 500


def _time(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def _parse_time(value: Any) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def _float(value: float) -> float:
    # -0.0 as 0.0: SQLite keeps no sign of zero, so a file from PostgreSQL would not come back from SQLite the same.
    return float(value) + 0.0


def _sorted_keys(value: Any) -> Any:
    """A JSON value with every object's keys in sorted order (SQLite keeps them as written, jsonb by length)."""
    if isinstance(value, dict):
        return {key: _sorted_keys(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [_sorted_keys(item) for item in value]
    return value


def record_to_json(record: MemoryRecord) -> dict[str, Any]:
    return {
        "kind": "memory",
        "id": record.id,
        "content": record.content,
        "hash": record.hash,
        **record.scope.as_dict(),
        "actor_id": record.actor_id,
        "role": record.role,
        "memory_type": record.memory_type.value,
        "layer": record.layer.value,
        "category": record.category.value,
        "importance": _float(record.importance),
        "strength": _float(record.strength),
        "access_count": record.access_count,
        "confidence": _float(record.confidence),
        "source": record.source.value,
        "verified": record.verified,
        "tags": record.tags,
        "metadata": _sorted_keys(record.metadata),
        "categories": record.categories,
        "provenance": [ref.to_json() for ref in record.provenance],
        "related_ids": record.related_ids,
        "compression_source_ids": record.compression_source_ids,
        "created_at": _time(record.created_at),
        "updated_at": _time(record.updated_at),
        "last_accessed_at": _time(record.last_accessed_at),
        "event_time": _time(record.event_time),
        "expiration_date": _time(record.expiration_date),
        "deleted_at": _time(record.deleted_at),
        "delete_reason": record.delete_reason,
        "version": record.version,
    }


def record_from_json(data: dict[str, Any]) -> MemoryRecord:
    try:
        return MemoryRecord(
            id=str(data["id"]),
            content=data["content"],
            hash=data.get("hash") or "",
            scope=Scope(data.get("user_id"), data.get("agent_id"), data.get("run_id")).require(),
            actor_id=data.get("actor_id"),
            role=data.get("role"),
            memory_type=MemoryType(data.get("memory_type", "episodic")),
            layer=Layer(data.get("layer", "short_term")),
            category=Category(data.get("category", "fact")),
            importance=float(data.get("importance", 0.5)),
            strength=float(data.get("strength", 1.0)),
            access_count=int(data.get("access_count", 0)),
            confidence=float(data.get("confidence", 1.0)),
            source=Source(data.get("source", "user")),
            verified=bool(data.get("verified", False)),
            tags=list(data.get("tags", [])),
            metadata=dict(data.get("metadata") or {}),
            categories=[str(c) for c in data.get("categories") or []],
            provenance=[SourceRef.from_json(p) for p in data.get("provenance", [])],
            related_ids=list(data.get("related_ids", [])),
            compression_source_ids=list(data.get("compression_source_ids", [])),
            created_at=_parse_time(data.get("created_at")) or datetime.fromisoformat("1970-01-01T00:00:00+00:00"),
            updated_at=_parse_time(data.get("updated_at")),
            last_accessed_at=_parse_time(data.get("last_accessed_at")),
            event_time=_parse_time(data.get("event_time")),
            expiration_date=_parse_time(data.get("expiration_date")),
            deleted_at=_parse_time(data.get("deleted_at")),
            delete_reason=data.get("delete_reason"),
            version=int(data.get("version", 1)),
        )
    except (KeyError, ValueError, TypeError) as exc:
        raise InvalidInput(f"not a valid memory line: {exc}") from exc


def history_to_json(event: HistoryEvent) -> dict[str, Any]:
    return {"kind": "history", **history_item(event)}


def history_from_json(data: dict[str, Any]) -> HistoryEvent:
    try:
        return HistoryEvent(
            id=str(data["id"]),
            memory_id=str(data["memory_id"]),
            old_memory=data.get("old_memory"),
            new_memory=data.get("new_memory"),
            event=Event(data["event"]),
            created_at=_parse_time(data.get("created_at")) or datetime.fromisoformat("1970-01-01T00:00:00+00:00"),
            updated_at=_parse_time(data.get("updated_at")),
            is_deleted=bool(data.get("is_deleted", False)),
            actor_id=data.get("actor_id"),
            role=data.get("role"),
            reason=data.get("reason") or None,
        )
    except (KeyError, ValueError, TypeError) as exc:
        raise InvalidInput(f"not a valid history line: {exc}") from exc


def message_to_json(message: StoredMessage) -> dict[str, Any]:
    return {"kind": "message", "id": message.id, "content": message.content, "role": message.role,
            **message.scope.as_dict(), "name": message.name, "created_at": _time(message.created_at),
            "external_id": message.external_id, "metadata": _sorted_keys(message.metadata)}


def message_from_json(data: dict[str, Any]) -> StoredMessage:
    try:
        return StoredMessage(content=str(data["content"]), role=str(data["role"]),
                             scope=Scope(data.get("user_id"), data.get("agent_id"), data.get("run_id")),
                             id=str(data["id"]), name=data.get("name"),
                             created_at=_parse_time(data.get("created_at")) or datetime.fromtimestamp(0, UTC),
                             external_id=data.get("external_id"), metadata=dict(data.get("metadata") or {}))
    except (KeyError, TypeError, ValueError) as exc:
        raise InvalidInput(f"bad message line: {exc}") from exc


def header() -> dict[str, Any]:
    return {"kind": "jiyi-export", "version": FORMAT_VERSION}


def export_lines(records: Iterable[MemoryRecord], history_of: Any, messages_of: Any = None,
                 purged: Iterable[HistoryEvent] = ()) -> Iterator[dict[str, Any]]:
    """The header, each memory with its history, the history rows of `purged` memories, then the messages the
    memories came from (`messages_of(ids)`)."""
    yield header()
    sources: dict[str, None] = {}
    for record in records:
        yield record_to_json(record)
        for event in history_of(record.id):
            yield history_to_json(event)
        sources.update(dict.fromkeys(ref.message_id for ref in record.provenance))
    for event in purged:
        yield history_to_json(event)
    if messages_of is not None:
        wanted = list(sources)
        for start in range(0, len(wanted), MESSAGE_BATCH):
            for message in messages_of(wanted[start:start + MESSAGE_BATCH]):
                yield message_to_json(message)


def export_jsonl(store: Any, out: Any, scope: Scope | None = None, include_deleted: bool = False) -> int:
    """Write every memory (and its history) in scope to a text stream; returns the number of memories. An export of
    every scope with the deleted memories (a backup) also keeps the audit trail of those purged since: their history
    rows, whose owner no store keeps."""
    count = 0
    records = store.iter_records(scope, include_deleted)
    everything = include_deleted and (scope is None or scope.is_empty)
    purged = store.purged_history() if everything else ()
    for line in export_lines(records, store.history, store.get_messages, purged):
        out.write(json.dumps(line, ensure_ascii=False) + "\n")
        count += line["kind"] == "memory"
    return count


@dataclass(slots=True)
class ImportReport:
    imported: int = 0
    skipped_existing: int = 0
    history_rows: int = 0
    messages: int = 0
    errors: list[str] = field(default_factory=list)


def import_jsonl(store: Any, embedder: Any, lines: Iterable[str], batch_size: int = 256,
                 on_progress: Any = None) -> ImportReport:
    """Load an export. Existing ids are skipped (never overwritten); a bad line is reported and skipped; vectors
    are recomputed with the configured embedder."""
    report = ImportReport()
    records: list[MemoryRecord] = []
    history: list[HistoryEvent] = []
    messages: list[StoredMessage] = []

    def flush() -> None:
        if records:
            known = store.known_ids([r.id for r in records])
            fresh = [r for r in records if r.id not in known]
            report.skipped_existing += len(records) - len(fresh)
            if fresh:
                vectors = embedder.embed_documents([r.content for r in fresh])
                if store.embedding_binding() is None:
                    store.bind_embedding(embedder.model_id, embedder.dims)
                store.insert(fresh, vectors, [])
                report.imported += len(fresh)
            records.clear()
        if history:
            store.add_history(history)
            report.history_rows += len(history)
            history.clear()
        if messages:
            known_messages = {m.id for m in store.get_messages([m.id for m in messages])}
            fresh_messages = [m for m in messages if m.id not in known_messages]
            if fresh_messages:
                store.add_messages(fresh_messages)
                report.messages += len(fresh_messages)
            messages.clear()

    for number, raw in enumerate(lines, start=1):
        if on_progress:
            on_progress(len(raw.encode("utf-8")))
        if not raw.strip():
            continue
        try:
            data = json.loads(raw)
            kind = data.get("kind", "memory") if isinstance(data, dict) else None
            if kind == "memory":
                records.append(record_from_json(data))
            elif kind == "history":
                history.append(history_from_json(data))
            elif kind == "message":
                messages.append(message_from_json(data))
            elif kind != "jiyi-export":
                raise InvalidInput(f"unknown line kind {kind!r}")
        except (json.JSONDecodeError, InvalidInput) as exc:
            report.errors.append(f"line {number}: {exc}")
            continue
        if len(records) >= batch_size or len(messages) >= batch_size:
            flush()
    flush()
    return report
