"""The store port the webhooks need: webhooks, the change log they are fed from, and the durable delivery queue.

It lives here, with the code that uses it, so that `webhooks` needs nothing of `stores` (the stores implement it and
import the models; tests/test_package_cycles.py keeps the two from importing each other again)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol, runtime_checkable

from jiyi.webhooks.model import Change, Webhook, WebhookDelivery


@runtime_checkable
class WebhookStore(Protocol):
    """Webhooks and their durable delivery queue: a role of its own, so a store that cannot keep them still serves
    memories. The change log they are fed from is the history table, in the order its rows were written; a reset
    empties it, and webhooks (which a reset keeps) hear it again from its new start."""

    def add_webhook(self, webhook: Webhook) -> None:
        """Store a new webhook; its `after_change` is set to the change log's end, in the same transaction."""
        ...

    def get_webhook(self, webhook_id: str) -> Webhook | None:
        ...

    def list_webhooks(self, project_id: str | None = None) -> list[Webhook]:
        """A project's webhooks (every project's when None), oldest first."""
        ...

    def save_webhook(self, webhook: Webhook) -> None:
        """Write a webhook's settings: name, url, event types, is_active, updated_at."""
        ...

    def delete_webhook(self, webhook_id: str) -> bool:
        """Remove a webhook and its deliveries; False when there was none."""
        ...

    def changes_after(self, position: int, limit: int) -> list[Change]:
        """Up to `limit` history rows past `position` in the change log, in the order they were written."""
        ...

    def webhook_cursor(self) -> int:
        """How far the fan-out has read the change log (0 after a reset: the log starts again)."""
        ...

    def enqueue_deliveries(self, deliveries: Sequence[WebhookDelivery], cursor: int, new_cursor: int) -> bool:
        """Queue the deliveries and move the cursor from `cursor` to `new_cursor`, in one transaction; only if the
        cursor is still at `cursor` (else False and nothing is written: another process got there first). A delivery
        of a change to a webhook already queued is not queued again."""
        ...

    def claim_deliveries(self, now: datetime, lease_until: datetime, limit: int,
                         exclude_webhooks: Sequence[str] = ()) -> list[WebhookDelivery]:
        """Atomically take, for up to `limit` active webhooks not in `exclude_webhooks`, the oldest pending delivery
        due at `now` whose lease (if any) has run out, leasing it until `lease_until`; oldest first. One per webhook:
        a receiver gets its deliveries one at a time, in order while it answers. Never one delivery to two claimers
        at once."""
        ...

    def record_attempt(self, delivery: WebhookDelivery, when: datetime) -> None:
        """Write a delivery's status, attempts, next attempt and last answer (its lease ends), and make it its
        webhook's last status, in one transaction."""
        ...

    def release_deliveries(self, delivery_ids: Sequence[str]) -> None:
        """End the lease of claimed deliveries that were not attempted (a shutdown): they are due again at once."""
        ...

    def list_deliveries(self, webhook_id: str, limit: int = 50) -> list[WebhookDelivery]:
        """A webhook's deliveries, newest first."""
        ...

    def delivery_counts(self, webhook_id: str) -> dict[str, int]:
        """A webhook's deliveries per status."""
        ...

    def prune_deliveries(self, finished_before: datetime) -> int:
        """Remove delivered and failed deliveries last touched before `finished_before`; returns how many."""
        ...
