"""From the change log to webhook events: which changes are events, who hears them, and the body they are sent as.

The body follows mem0's webhook payload (`event_details` with the memory's id, `event` and `data.memory`) and adds
what a receiver needs to act on it without calling back: the event type, the change's id (the same on a retry: a
receiver drops what it has seen), when it happened, the memory's owner and, for the lifecycle's changes, why.
"""

from __future__ import annotations

import json
from typing import Any

from jiyi.records import Category, Event
from jiyi.webhooks.model import Change, EventType, Webhook

ALL_EVENT_TYPES = tuple(EventType)
# What each history event becomes; BOOST, MOVE, KEEP and NONE are bookkeeping, not news for a receiver.
_BY_EVENT = {Event.ADD: EventType.ADD, Event.UPDATE: EventType.UPDATE, Event.MERGE: EventType.MERGE,
             Event.PROMOTE: EventType.PROMOTE}


def event_type_of(change: Change) -> EventType | None:
    """The webhook event a change is, or None. A DELETE with a reason is the lifecycle's (or the user asking in the
    chat): forgotten; one without is a deletion someone asked for by the API, or a contradiction."""
    if change.category == Category.MESSAGE.value:
        return None  # the evidence kept word for word beneath the memories: mem0's add() does not report it either
    if change.event.event is Event.DELETE:
        return EventType.FORGET if change.event.reason else EventType.DELETE
    return _BY_EVENT.get(change.event.event)


def event_types_of(change: Change) -> list[EventType]:
    """Every webhook event a change is: its own, and memory_categorize when it gave the memory categories (an ADD,
    or an UPDATE that changed the text: the write path categorises both). When the text has changed again before
    the change is read, the categories at hand are the later text's: only that later change tells them (an add
    followed at once by a new text sent 'sports' for 用户对花生过敏)."""
    main = event_type_of(change)
    if main is None:
        return []
    event = change.event
    categorized = change.categories and change.content == event.new_memory and (
        event.event is Event.ADD or (event.event is Event.UPDATE and event.new_memory != event.old_memory))
    return [main, EventType.CATEGORIZE] if categorized else [main]


def delivery_change_id(change: Change, event_type: EventType) -> str:
    """What identifies a delivery's change: the history row's id, and for the categorize event that follows the
    same row, that id marked (a receiver tells the two apart, and a retry of either by its own id)."""
    return f"{change.event.id}:categorize" if event_type is EventType.CATEGORIZE else change.event.id


def hears(webhook: Webhook, change: Change, event_type: EventType) -> bool:
    if not webhook.is_active or change.position <= webhook.after_change or event_type not in webhook.event_types:
        return False
    return webhook.user_id is None or (change.scope is not None and change.scope.user_id == webhook.user_id)


def delivery_body(webhook: Webhook, change: Change, event_type: EventType) -> str:
    event = change.event
    text = event.old_memory if event.event is Event.DELETE else event.new_memory
    data: dict[str, Any] = {"memory": text}
    if event.event is Event.UPDATE and event_type is not EventType.CATEGORIZE:
        data["old_memory"] = event.old_memory
    if event_type is EventType.CATEGORIZE:
        data["categories"] = list(change.categories)
    scope = change.scope
    body = {
        "id": delivery_change_id(change, event_type),
        "event_type": event_type.value,
        "created_at": (event.updated_at or event.created_at).isoformat(),
        "webhook_id": webhook.id,
        "project_id": webhook.project_id,
        "event_details": {
            "id": event.memory_id,
            "event": "CATEGORIZE" if event_type is EventType.CATEGORIZE else event.event.value,
            "data": data,
            "user_id": scope.user_id if scope else None,
            "agent_id": scope.agent_id if scope else None,
            "run_id": scope.run_id if scope else None,
            "reason": event.reason,
        },
    }
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"))
