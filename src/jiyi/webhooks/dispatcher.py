"""The webhook dispatcher: a background task owned by whoever starts it (the server's lifespan).

Each pass does two things. The fan-out reads the history table past its cursor and queues one delivery row per
(webhook, change) the webhook hears, moving the cursor in the same transaction: a change is never queued twice, nor
lost when the process dies (the next start reads on from the cursor). The sender claims due deliveries with a lease,
one per webhook at a time, and POSTs each, signed; a receiver that does not answer 2xx in time gets it again after an
exponential backoff, until the attempts or the age run out (then the delivery is failed). Delivery is at least once:
a process killed after a receiver answered but before the answer was written sends that delivery again; the body's
`id` tells a receiver it has seen it. Any number of processes may share one store: claims are atomic.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

import httpx

from jiyi import __version__
from jiyi.records import utcnow
from jiyi.webhooks.events import delivery_body, delivery_change_id, event_types_of, hears
from jiyi.webhooks.model import DeliveryStatus, Webhook, WebhookDelivery
from jiyi.webhooks.signing import SIGNATURE_HEADER, signature_header
from jiyi.webhooks.store import WebhookStore

log = logging.getLogger("jiyi.webhooks")

FAN_OUT_PAGE = 500  # history rows read per pass
LEASE_MARGIN = 5.0  # seconds a claim outlives the send timeout: an attempt ends (and is written) before others retry
PRUNE_EVERY = 3600.0  # seconds between removals of old finished deliveries


@dataclass(frozen=True, slots=True)
class WebhookOptions:
    """How deliveries are sent and retried. The defaults retry after 1 s, 2 s, 4 s … then every 5 min, for a day."""

    poll_interval: float = 0.5  # seconds between looks at the change log and the queue when there is nothing to do
    timeout: float = 10.0  # seconds a receiver has to answer one delivery
    retry_base: float = 1.0  # the first retry waits this long; each next one twice as long ...
    retry_max: float = 300.0  # ... but never longer than this
    max_attempts: int = 300  # a delivery is failed after this many attempts ...
    max_age: float = 86_400.0  # ... or once it is this old (seconds), whichever comes first
    concurrency: int = 16  # deliveries in flight at once (one per webhook)
    keep_finished: float = 7 * 86_400.0  # seconds delivered and failed deliveries stay visible
    private_urls: bool = False  # user keys' projects may register loopback / private addresses too

    def retry_delay(self, attempts: int) -> float:
        """Seconds before the next attempt after `attempts` failed ones; ±10 % jitter spreads a burst."""
        # 2.0, not 2: int ** int is typed Any (a negative exponent gives a float)
        delay = min(self.retry_max, self.retry_base * 2.0 ** min(attempts - 1, 60))
        return delay * random.uniform(0.9, 1.1)


def fan_out(store: WebhookStore, limit: int = FAN_OUT_PAGE) -> int:
    """Queue a delivery of each change past the cursor to each webhook that hears it. Returns how many changes were
    read (0 also when another process moved the cursor first: the next pass reads on from where it left it)."""
    cursor = store.webhook_cursor()
    changes = store.changes_after(cursor, limit)
    if not changes:
        return 0
    webhooks = store.list_webhooks()
    deliveries = []
    for change in changes:
        for event_type in event_types_of(change):
            deliveries += [WebhookDelivery(webhook.id, delivery_change_id(change, event_type), event_type.value,
                                           delivery_body(webhook, change, event_type))
                           for webhook in webhooks if hears(webhook, change, event_type)]
    return len(changes) if store.enqueue_deliveries(deliveries, cursor, changes[-1].position) else 0


class WebhookDispatcher:
    def __init__(self, store: Callable[[], object], options: WebhookOptions | None = None, *,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        """`store` returns the current store (the server may swap it on /configure); one without webhook support is
        left alone. `transport`: an httpx transport to send through (tests)."""
        self._store = store
        self.options = options or WebhookOptions()
        self._transport = transport
        self._client: httpx.AsyncClient | None = None
        self._task: asyncio.Task[None] | None = None
        self._wakeup = asyncio.Event()
        self._sending: dict[str, tuple[str, asyncio.Task[None]]] = {}  # delivery id -> (webhook id, its task)
        self._last_prune = 0.0
        self.attempts = 0

    def start(self) -> None:
        if self._task is None:
            self._client = httpx.AsyncClient(timeout=self.options.timeout, transport=self._transport,
                                             headers={"User-Agent": f"jiyi-webhooks/{__version__}"})
            self._task = asyncio.create_task(self._run(), name="jiyi-webhook-dispatcher")

    def notify(self) -> None:
        """Look at the change log now rather than at the next poll."""
        self._wakeup.set()

    async def stop(self) -> None:
        """Stop sending. Deliveries cut short are released for the next pass (here or in another process)."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        sending, self._sending = self._sending, {}
        for _, send in sending.values():
            send.cancel()
        await asyncio.gather(*(send for _, send in sending.values()), return_exceptions=True)
        store = self._store()
        if sending and isinstance(store, WebhookStore):
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.to_thread(store.release_deliveries, list(sending)), 1.0)
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def _run(self) -> None:
        while True:
            self._wakeup.clear()
            busy = False
            try:
                store = self._store()
                if isinstance(store, WebhookStore):
                    busy = await self.run_once(store)
            except Exception:  # a failing pass (a locked or closed store) must not end the dispatcher
                log.exception("webhook dispatcher pass failed")
            if not busy:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wakeup.wait(), self.options.poll_interval)

    async def run_once(self, store: WebhookStore) -> bool:
        """One pass: fan out new changes, start sending what is due. True when there may be more to do at once."""
        read = await asyncio.to_thread(fan_out, store)
        claimed: list[WebhookDelivery] = []
        free = self.options.concurrency - len(self._sending)
        if free > 0:
            now = utcnow()
            lease = now + timedelta(seconds=self.options.timeout + LEASE_MARGIN)
            busy_webhooks = sorted({webhook_id for webhook_id, _ in self._sending.values()})
            claimed = await asyncio.to_thread(store.claim_deliveries, now, lease, free, busy_webhooks)
        for delivery in claimed:
            send = asyncio.create_task(self._deliver(store, delivery), name="jiyi-webhook-delivery")
            self._sending[delivery.id] = (delivery.webhook_id, send)
            send.add_done_callback(functools.partial(self._sent, delivery.id))
        if time.monotonic() - self._last_prune > PRUNE_EVERY:
            self._last_prune = time.monotonic()
            await asyncio.to_thread(store.prune_deliveries, utcnow() - timedelta(seconds=self.options.keep_finished))
        return read == FAN_OUT_PAGE or bool(claimed)

    def _sent(self, delivery_id: str, _: asyncio.Task[None]) -> None:
        self._sending.pop(delivery_id, None)
        self._wakeup.set()  # the webhook may have more waiting

    async def _deliver(self, store: WebhookStore, delivery: WebhookDelivery) -> None:
        try:
            webhook = await asyncio.to_thread(store.get_webhook, delivery.webhook_id)
            if webhook is None:
                return  # deleted meanwhile, and its deliveries with it
            code, error = await self._post(webhook, delivery)
            now = utcnow()
            self.attempts += 1
            delivery.attempts += 1
            delivery.last_status_code, delivery.last_error = code, error
            if error is None:
                delivery.status = DeliveryStatus.DELIVERED
            elif delivery.attempts >= self.options.max_attempts or \
                    now - delivery.created_at >= timedelta(seconds=self.options.max_age):
                delivery.status = DeliveryStatus.FAILED
                log.warning("webhook %s: gave up delivery %s after %d attempts: %s", webhook.id, delivery.id,
                            delivery.attempts, error)
            else:
                delivery.next_attempt_at = now + timedelta(seconds=self.options.retry_delay(delivery.attempts))
                log.debug("webhook %s: delivery %s attempt %d failed (%s); next at %s", webhook.id, delivery.id,
                          delivery.attempts, error, _clock(delivery.next_attempt_at))
            await asyncio.to_thread(store.record_attempt, delivery, now)
        except Exception:  # the store went away (a reconfigure): the lease runs out and the delivery is retried
            log.exception("webhook delivery %s could not be recorded", delivery.id)

    async def _post(self, webhook: Webhook, delivery: WebhookDelivery) -> tuple[int | None, str | None]:
        """(status code, None) on a 2xx answer, else (status code or None, what went wrong). Never the URL (it may
        hold a token) or the secret in the error. The answer's body is not read: only its status counts."""
        assert self._client is not None
        body = delivery.body.encode()
        headers = {"Content-Type": "application/json", SIGNATURE_HEADER: signature_header(webhook.secret, body),
                   "X-Jiyi-Event": delivery.event_type, "X-Jiyi-Delivery": delivery.id, "X-Jiyi-Webhook": webhook.id}
        try:
            async with asyncio.timeout(self.options.timeout):  # the whole attempt, not each read
                async with self._client.stream("POST", webhook.url, content=body, headers=headers) as response:
                    code = response.status_code
        except (TimeoutError, httpx.TimeoutException):
            return None, f"no answer within {self.options.timeout:g} s"
        except Exception as exc:  # connection refused, DNS, TLS, a bad URL: the receiver is not there yet
            text = str(exc).replace(webhook.url, "<url>")[:300]
            return None, f"{type(exc).__name__}: {text}" if text else type(exc).__name__
        if 200 <= code < 300:
            return code, None
        return code, f"the receiver answered {code}"


def _clock(when: datetime) -> str:
    return when.strftime("%H:%M:%S")
