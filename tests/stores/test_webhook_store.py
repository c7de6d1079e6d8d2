"""The WebhookStore port's contract (webhooks/store.py: webhooks, the change log, the delivery queue): every store
(conftest.STORE_KINDS) must pass it. The dispatcher over a real HTTP receiver is tests/server/test_webhooks.py."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from jiyi.embedders.base import Embedder
from jiyi.records import Event, HistoryEvent, MemoryRecord, Scope
from jiyi.stores.base import MemoryStore
from jiyi.webhooks.model import DeliveryStatus, Webhook, WebhookDelivery
from jiyi.webhooks.store import WebhookStore
from tests.stores.ports import as_port

T0 = datetime(2026, 5, 1, 12, tzinfo=UTC)


@pytest.fixture
def hooks(store: MemoryStore) -> WebhookStore:
    return as_port(store, WebhookStore)


def remember(store: MemoryStore, embedder: Embedder, text: str) -> str:
    if store.embedding_binding() is None:
        store.bind_embedding(embedder.model_id, embedder.dims)
    record = MemoryRecord(content=text, scope=Scope("alice"))
    store.insert([record], embedder.embed_documents([text]), [HistoryEvent(record.id, Event.ADD, None, text)])
    return record.id


def hook(project: str = "p1", name: str = "h") -> Webhook:
    return Webhook(project, "http://127.0.0.1:9/hook", name, ["memory_add"], "s3cret")


def test_webhooks_are_added_listed_saved_and_deleted(store: MemoryStore, hooks: WebhookStore,
                                                      embedder: Embedder) -> None:
    remember(store, embedder, "before the webhook")
    first, second, other = hook(name="first"), hook(name="second"), hook("p2")
    for webhook in (first, second, other):
        hooks.add_webhook(webhook)
    assert hooks.get_webhook(first.id).after_change == hooks.changes_after(0, 10)[-1].position  # type: ignore[union-attr]
    assert [w.name for w in hooks.list_webhooks("p1")] == ["first", "second"]
    assert {w.id for w in hooks.list_webhooks()} == {first.id, second.id, other.id}
    first.name, first.is_active, first.updated_at = "renamed", False, T0
    hooks.save_webhook(first)
    saved = hooks.get_webhook(first.id)
    assert saved is not None and (saved.name, saved.is_active, saved.updated_at) == ("renamed", False, T0)
    assert hooks.delete_webhook(second.id) and not hooks.delete_webhook(second.id)
    assert hooks.get_webhook(second.id) is None and hooks.get_webhook("unknown") is None


def test_the_change_log_is_read_in_order_and_the_cursor_moves_once(store: MemoryStore, hooks: WebhookStore,
                                                                   embedder: Embedder) -> None:
    ids = [remember(store, embedder, text) for text in ("tea", "coffee", "juice")]
    changes = hooks.changes_after(0, 10)
    assert [c.event.memory_id for c in changes] == ids and [c.content for c in changes] == ["tea", "coffee", "juice"]
    assert hooks.changes_after(changes[0].position, 1)[0].event.memory_id == ids[1]
    webhook = hook()
    hooks.add_webhook(webhook)
    assert hooks.webhook_cursor() == 0
    delivery = WebhookDelivery(webhook.id, changes[0].event.id, "memory_add", "{}")
    assert hooks.enqueue_deliveries([delivery], 0, changes[-1].position)
    assert not hooks.enqueue_deliveries([delivery], 0, changes[-1].position)  # another process got there first
    assert hooks.webhook_cursor() == changes[-1].position
    assert hooks.enqueue_deliveries([delivery], changes[-1].position, changes[-1].position)  # queued once only
    assert hooks.delivery_counts(webhook.id) == {"pending": 1}


def test_deliveries_are_claimed_one_per_webhook_attempted_released_and_pruned(hooks: WebhookStore) -> None:
    one, two = hook(name="one"), hook(name="two")
    hooks.add_webhook(one)
    hooks.add_webhook(two)
    queued = [WebhookDelivery(one.id, f"c{i}", "memory_add", f'{{"n": {i}}}', created_at=T0 + timedelta(seconds=i),
                              next_attempt_at=T0) for i in range(3)]
    queued.append(WebhookDelivery(two.id, "c9", "memory_add", "{}", next_attempt_at=T0))
    assert hooks.enqueue_deliveries(queued, 0, 0)
    lease = T0 + timedelta(minutes=1)
    claimed = hooks.claim_deliveries(T0, lease, 10)
    assert sorted((d.webhook_id, d.change_id) for d in claimed) == sorted([(one.id, "c0"), (two.id, "c9")])
    # leased: nobody else gets them (the dispatcher leaves out a webhook with a delivery in flight, for order)
    assert hooks.claim_deliveries(T0, lease, 10, exclude_webhooks=[one.id]) == []
    first = next(d for d in claimed if d.webhook_id == one.id)
    first.status, first.attempts, first.last_status_code = DeliveryStatus.DELIVERED, 1, 200
    hooks.record_attempt(first, T0)
    assert hooks.get_webhook(one.id).last_status_code == 200  # type: ignore[union-attr]
    hooks.release_deliveries([d.id for d in claimed if d.webhook_id == two.id])  # a shutdown: due again at once
    again = hooks.claim_deliveries(T0, lease, 10)
    assert sorted(d.change_id for d in again) == ["c1", "c9"]
    assert [d.change_id for d in hooks.list_deliveries(one.id)][-1] == "c0"  # newest first
    assert hooks.delivery_counts(one.id) == {"delivered": 1, "pending": 2}
    assert hooks.prune_deliveries(T0 + timedelta(days=1)) == 1
    assert hooks.delivery_counts(one.id) == {"pending": 2}
