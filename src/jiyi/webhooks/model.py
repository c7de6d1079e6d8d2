"""What the webhook store keeps: webhooks, their deliveries, and the changes they are made from. Data only."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum

from jiyi.records import HistoryEvent, Scope, utcnow


class EventType(StrEnum):
    """What a webhook subscribes to. The first three are mem0's names; the others are jiyi's lifecycle."""

    ADD = "memory_add"
    UPDATE = "memory_update"
    DELETE = "memory_delete"  # deleted by a request, a delete-all, or contradicted by a later turn
    FORGET = "memory_forget"  # forgotten: decayed, superseded, folded into another, or the user asked in the chat
    MERGE = "memory_merge"  # consolidated: this memory now stands for several similar ones
    PROMOTE = "memory_promote"  # reviewed and made a core memory
    CATEGORIZE = "memory_categorize"  # mem0's: the memory's categories were assigned (with its ADD, or a new text)


class DeliveryStatus(StrEnum):
    PENDING = "pending"  # waiting for its first attempt or a retry
    DELIVERED = "delivered"  # the receiver answered 2xx
    FAILED = "failed"  # gave up: too many attempts, or too old


def new_webhook_id() -> str:
    return str(uuid.uuid4())


@dataclass(slots=True)
class Webhook:
    project_id: str
    url: str
    name: str
    event_types: list[str]
    secret: str
    user_id: str | None = None  # a user key's project hears only this user's memories; None: every user's
    id: str = field(default_factory=new_webhook_id)
    is_active: bool = True
    created_at: datetime = field(default_factory=utcnow)
    updated_at: datetime | None = None
    after_change: int = 0  # the change log's end when it was created: it hears only what changed later
    # The outcome of its latest delivery attempt, for GET (the deliveries themselves keep their own).
    last_status: str | None = None
    last_status_code: int | None = None
    last_error: str | None = None
    last_attempt_at: datetime | None = None


@dataclass(slots=True)
class WebhookDelivery:
    """One change on its way to one webhook. `body` is fixed when it is queued; each attempt signs it anew."""

    webhook_id: str
    change_id: str
    event_type: str
    body: str
    id: str = field(default_factory=lambda: str(uuid.uuid4()))
    status: DeliveryStatus = DeliveryStatus.PENDING
    attempts: int = 0
    next_attempt_at: datetime = field(default_factory=utcnow)
    lease_until: datetime | None = None
    last_status_code: int | None = None
    last_error: str | None = None
    created_at: datetime = field(default_factory=utcnow)
    updated_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class Change:
    """A history row at its place in the store's change log, with what the fan-out needs from its memory (None when
    the memory row is gone)."""

    position: int
    event: HistoryEvent
    scope: Scope | None
    category: str | None
    categories: tuple[str, ...] = ()  # the memory's mem0 categories as they are when the change is read
    # ... and its text then: the categories are this change's only while the text is still the one it wrote (they are
    # not kept per version)
    content: str | None = None
