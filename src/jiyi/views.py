"""The shapes jiyi answers with: mem0's MemoryItem and history rows, plus jiyi's own fields beside them."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from jiyi.core.retrieval import Retrieval
from jiyi.records import HistoryEvent, MemoryRecord, SearchHit, TurnRecord
from jiyi.stores.base import Entity


def _time(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def memory_item(record: MemoryRecord) -> dict[str, Any]:
    item: dict[str, Any] = {
        "id": record.id,
        "memory": record.content,
        "hash": record.hash,
        "metadata": record.metadata,
        "created_at": _time(record.created_at),
        "updated_at": _time(record.updated_at),
    }
    item.update(record.scope.as_dict())
    if record.actor_id:
        item["actor_id"] = record.actor_id
    if record.role:
        item["role"] = record.role
    if record.expiration_date:
        item["expiration_date"] = record.expiration_date.date().isoformat()
    item.update({
        "memory_type": record.memory_type.value,
        "layer": record.layer.value,
        "category": record.category.value,
        "categories": record.categories,
        "importance": record.importance,
        "confidence": record.confidence,
        "access_count": record.access_count,
        "source": record.source.value,
        "tags": record.tags,
        "event_time": _time(record.event_time),
        "provenance": [ref.to_json() for ref in record.provenance],
        "version": record.version,
    })
    return item


def search_item(hit: SearchHit, explain: bool = False) -> dict[str, Any]:
    item = memory_item(hit.record)
    item["score"] = hit.score
    if explain:
        item["score_details"] = hit.details
    return item


def search_items(retrieval: Retrieval, explain: bool = False) -> list[dict[str, Any]]:
    """A search's results; with `explain` each also carries the search's timings and candidate counts per path."""
    results = [search_item(hit, explain) for hit in retrieval.hits]
    if explain:
        for item in results:
            item["score_details"]["timings_ms"] = retrieval.timings_ms
            item["score_details"]["candidates"] = retrieval.paths
    return results


def entity_item(entity: Entity) -> dict[str, Any]:
    return {"id": f"{entity.kind}:{entity.name}", "name": entity.name, "type": entity.kind,
            "total_memories": entity.memories, "created_at": entity.first_created.isoformat(),
            "updated_at": entity.last_updated.isoformat()}


def history_item(event: HistoryEvent) -> dict[str, Any]:
    return {
        "id": event.id,
        "memory_id": event.memory_id,
        "old_memory": event.old_memory,
        "new_memory": event.new_memory,
        "event": event.event.value,
        "created_at": _time(event.created_at),
        "updated_at": _time(event.updated_at),
        "is_deleted": event.is_deleted,
        "actor_id": event.actor_id,
        "role": event.role,
        **({"reason": event.reason} if event.reason else {}),
    }


_TURN_STATUS = {"queued": "PENDING", "processing": "RUNNING", "retry": "RETRYING", "done": "SUCCEEDED",
                "failed": "FAILED"}


def turn_item(turn: TurnRecord) -> dict[str, Any]:
    """An add() turn as a pollable event (the shape mem0's platform uses for async adds, plus jiyi's details)."""
    return {
        "id": turn.id,
        "status": _TURN_STATUS[turn.status.value],
        "results": turn.results,
        "attempts": turn.attempts,
        "extractor": turn.extractor,
        "error": turn.last_error,
        "next_attempt_at": _time(turn.next_attempt_at) if turn.status.value == "retry" else None,
        "created_at": _time(turn.created_at),
        "updated_at": _time(turn.updated_at),
        **turn.scope.as_dict(),
    }


def entity_deletion(kind: str, name: str, deleted: dict[str, Any]) -> dict[str, Any]:
    """The answer to deleting one user, agent or run (what Memory.delete_entity counted), with a sentence saying
    what went: the REST route's and the MCP tool's. An entity an earlier delete emptied is said to be so, as mem0's
    SDKs delete every listed entity in turn (the user before its agents)."""
    if not deleted["memories"]:
        said = f"{kind} {name} has no memories left (an earlier delete took them); nothing more to delete."
    else:
        others = [f"{e['type']} {e['name']}" for e in deleted["entities"] if (e["type"], e["name"]) != (kind, name)]
        went = f"; {', '.join(others)} had no other memories and went with it" if others else ""
        count = deleted["memories"]
        said = f"Deleted {kind} {name}: {count} {'memory' if count == 1 else 'memories'}{went}."
    return {"message": said, "deleted": deleted}
