"""mem0's platform webhook routes, at the paths its SDKs call, and jiyi's delivery log.

A key's project is its Principal.project_id: "default" for the admin key (or an open server), whose webhooks hear
every memory; "user-<id>" for a user key, whose webhooks hear only that user's. Another project is "not found".
Deliveries are signed (see jiyi/webhooks/signing.py) and sent by the dispatcher the app's lifespan runs.
"""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel, ConfigDict, Field

from jiyi.errors import NotFound, NotSupportedYet
from jiyi.server.auth import Principal
from jiyi.server.routes import COMMON_ERRORS, NOT_FOUND, Caller, state
from jiyi.webhooks.dispatcher import WebhookOptions
from jiyi.webhooks.model import DeliveryStatus, EventType, Webhook, WebhookDelivery
from jiyi.webhooks.registry import MAX_NAME_CHARS, MAX_URL_CHARS, WebhookRegistry
from jiyi.webhooks.store import WebhookStore

router = APIRouter(prefix="/api/v1/webhooks", tags=["webhooks"], responses=COMMON_ERRORS)

_TYPES = ", ".join(EventType)
_EVENT_TYPES = (f"what to send: {_TYPES} (mem0's \"memory:add\" spelling too); none or empty: every type but "
                "memory_categorize. memory_forget is a memory the lifecycle forgot (or the user asked, in the chat, "
                "to forget); memory_delete one deleted by a request or contradicted by a later turn; "
                "memory_categorize follows each add (and each new text) with the memory's categories")
_NOT_FOUND: dict[int | str, dict[str, Any]] = {
    404: {**NOT_FOUND[404], "description": "no such webhook or project, or it belongs to another key's project"}}


class WebhookCreate(BaseModel):
    model_config = ConfigDict(extra="ignore")
    url: str = Field(..., max_length=MAX_URL_CHARS, description="an http:// or https:// URL; deliveries are POSTed")
    name: str | None = Field(None, max_length=MAX_NAME_CHARS)
    event_types: list[str] | None = Field(None, description=_EVENT_TYPES)
    is_active: bool = Field(True, description="false: nothing is queued for it until it is active again")


class WebhookChange(BaseModel):
    model_config = ConfigDict(extra="ignore")
    url: str | None = Field(None, max_length=MAX_URL_CHARS)
    name: str | None = Field(None, max_length=MAX_NAME_CHARS)
    event_types: list[str] | None = Field(None, description=_EVENT_TYPES)
    is_active: bool | None = None


class LastDelivery(BaseModel):
    status: Literal["delivered", "retrying", "failed"]
    status_code: int | None = Field(None, description="the receiver's HTTP status, if it answered")
    error: str | None = Field(None, description="what went wrong, if it did")
    at: datetime | None


class WebhookOut(BaseModel):
    webhook_id: str
    name: str
    url: str
    event_types: list[str]
    is_active: bool
    project: str
    created_at: datetime
    updated_at: datetime | None
    last_delivery: LastDelivery | None = Field(None, description="the outcome of the latest attempt")
    deliveries: dict[str, int] = Field(default_factory=dict, description="deliveries kept, per status "
                                                                         "(pending, delivered, failed)")


class WebhookCreated(WebhookOut):
    secret: str = Field(..., description="signs every delivery (X-Jiyi-Signature); shown only in this answer")


class WebhookUpdated(WebhookOut):
    message: str = "Webhook updated successfully"


class Message(BaseModel):
    message: str


class DeliveryOut(BaseModel):
    id: str
    change_id: str = Field(..., description="the change's id: the same as the `id` of the body delivered")
    event_type: str
    status: DeliveryStatus
    attempts: int
    next_attempt_at: datetime | None = Field(..., description="when it is tried again; null once finished")
    last_status_code: int | None
    last_error: str | None
    created_at: datetime
    updated_at: datetime | None


def _registry(request: Request, who: Principal, project_id: str | None = None) -> WebhookRegistry:
    """The caller's project's registry; another project is not found. The whole-server project ("default") is the
    admin's when there is an admin key."""
    if project_id is not None and project_id != who.project_id:
        raise NotFound(f"project {project_id} not found")
    if who.kind != "user":
        state(request).policy.require_admin(who)
    store = state(request).memory.store
    if not isinstance(store, WebhookStore):
        raise NotSupportedYet(f"the store {type(store).__name__} does not keep webhooks")
    options: WebhookOptions = request.app.state.webhook_options
    return WebhookRegistry(store, private_urls=options.private_urls)


def _shape(webhook: Webhook, counts: dict[str, int]) -> dict[str, Any]:
    last = None
    if webhook.last_status is not None:
        status = "retrying" if webhook.last_status == DeliveryStatus.PENDING else webhook.last_status
        last = {"status": status, "status_code": webhook.last_status_code, "error": webhook.last_error,
                "at": webhook.last_attempt_at}
    return {"webhook_id": webhook.id, "name": webhook.name, "url": webhook.url, "event_types": webhook.event_types,
            "is_active": webhook.is_active, "project": webhook.project_id, "created_at": webhook.created_at,
            "updated_at": webhook.updated_at, "last_delivery": last, "deliveries": counts}


async def _shaped(registry: WebhookRegistry, webhook: Webhook) -> dict[str, Any]:
    return _shape(webhook, await asyncio.to_thread(registry.store.delivery_counts, webhook.id))


def _delivery(delivery: WebhookDelivery) -> dict[str, Any]:
    pending = delivery.status is DeliveryStatus.PENDING
    return {"id": delivery.id, "change_id": delivery.change_id, "event_type": delivery.event_type,
            "status": delivery.status, "attempts": delivery.attempts,
            "next_attempt_at": delivery.next_attempt_at if pending else None,
            "last_status_code": delivery.last_status_code, "last_error": delivery.last_error,
            "created_at": delivery.created_at, "updated_at": delivery.updated_at}


@router.get("/projects/{project_id}/", responses=_NOT_FOUND)
async def list_webhooks(project_id: str, request: Request, who: Caller) -> list[WebhookOut]:
    """The project's webhooks, each with its latest delivery's outcome."""
    registry = _registry(request, who, project_id)
    webhooks = await asyncio.to_thread(registry.list, project_id)
    return [WebhookOut(**await _shaped(registry, webhook)) for webhook in webhooks]


@router.post("/projects/{project_id}/", status_code=201, responses=_NOT_FOUND)
async def create_webhook(project_id: str, body: WebhookCreate, request: Request, who: Caller) -> WebhookCreated:
    """A new webhook. Its `secret` is in this answer only: keep it to verify each delivery's X-Jiyi-Signature."""
    registry = _registry(request, who, project_id)
    webhook = await asyncio.to_thread(registry.create, project_id, who.user_id if who.kind == "user" else None,
                                      url=body.url, name=body.name, event_types_asked=body.event_types,
                                      is_active=body.is_active)
    return WebhookCreated(**_shape(webhook, {}), secret=webhook.secret)


@router.get("/{webhook_id}/", responses=_NOT_FOUND)
async def get_webhook(webhook_id: str, request: Request, who: Caller) -> WebhookOut:
    registry = _registry(request, who)
    webhook = await asyncio.to_thread(registry.get, who.project_id, webhook_id)
    return WebhookOut(**await _shaped(registry, webhook))


@router.put("/{webhook_id}/", responses=_NOT_FOUND)
async def update_webhook(webhook_id: str, body: WebhookChange, request: Request, who: Caller) -> WebhookUpdated:
    """Change a webhook's name, url, event types or is_active; what is left out stays. The secret stays."""
    registry = _registry(request, who)
    webhook = await asyncio.to_thread(registry.update, who.project_id, webhook_id, url=body.url, name=body.name,
                                      event_types_asked=body.event_types, is_active=body.is_active)
    return WebhookUpdated(**await _shaped(registry, webhook))


@router.delete("/{webhook_id}/", responses=_NOT_FOUND)
async def delete_webhook(webhook_id: str, request: Request, who: Caller) -> Message:
    """The webhook goes, with its deliveries not yet sent."""
    registry = _registry(request, who)
    await asyncio.to_thread(registry.delete, who.project_id, webhook_id)
    return Message(message="Webhook deleted successfully")


@router.get("/{webhook_id}/deliveries/", responses=_NOT_FOUND)
async def list_deliveries(webhook_id: str, request: Request, who: Caller,
                          limit: Annotated[int, Query(ge=1, le=500)] = 50) -> list[DeliveryOut]:
    """jiyi's delivery log, newest first: each delivery's status, attempts, next attempt and last answer."""
    registry = _registry(request, who)
    await asyncio.to_thread(registry.get, who.project_id, webhook_id)
    deliveries = await asyncio.to_thread(registry.store.list_deliveries, webhook_id, limit)
    return [DeliveryOut(**_delivery(delivery)) for delivery in deliveries]
