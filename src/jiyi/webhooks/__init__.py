"""Webhooks: projects register URLs for memory events; every change in the history table is fanned out to the
webhooks that hear it as a durable delivery row, and sent, signed, by a background dispatcher that retries with
backoff. The request that made the change never waits for it.

Modules: model (the rows), signing (X-Jiyi-Signature), events (change → event type and body), registry (create /
update / delete with validation), dispatcher (fan-out and sending). The dispatcher and registry import the store
contract, which imports the model: import them from their modules, not from here.
"""

from jiyi.webhooks.model import Change, DeliveryStatus, EventType, Webhook, WebhookDelivery
from jiyi.webhooks.signing import SIGNATURE_HEADER, signature_header, verify_signature

__all__ = [
    "SIGNATURE_HEADER",
    "Change",
    "DeliveryStatus",
    "EventType",
    "Webhook",
    "WebhookDelivery",
    "signature_header",
    "verify_signature",
]
