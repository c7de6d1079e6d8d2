"""A project's webhooks: create, list, change, delete, with the input checked. Synchronous (the store is); a webhook
of another project is "not found", so that a caller cannot learn which ids exist."""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from urllib.parse import urlsplit

from jiyi.errors import InvalidInput, NotFound
from jiyi.records import utcnow
from jiyi.webhooks.model import EventType, Webhook
from jiyi.webhooks.signing import new_secret
from jiyi.webhooks.store import WebhookStore

MAX_URL_CHARS = 2048
MAX_NAME_CHARS = 200
# mem0's older documentation spells the types "memory:add"; its SDKs send "memory_add". Both are accepted.
_KNOWN = {t.value: t.value for t in EventType} | {t.value.replace("_", ":", 1): t.value for t in EventType}


# A webhook registered without event types hears every change; memory_categorize, which follows each add with the
# memory's categories, only when asked for by name (it would double every add's deliveries).
DEFAULT_EVENT_TYPES = tuple(t.value for t in EventType if t is not EventType.CATEGORIZE)


def event_types(asked: Sequence[str] | None) -> list[str]:
    """The event types asked for, in mem0's spelling; every change's type when none are given."""
    if not asked:
        return list(DEFAULT_EVENT_TYPES)
    chosen = []
    for name in asked:
        known = _KNOWN.get(str(name).strip().lower())
        if known is None:
            raise InvalidInput(f"event_types: unknown type {str(name)[:50]!r}; choose from {', '.join(EventType)}")
        if known not in chosen:
            chosen.append(known)
    return chosen


def check_url(url: str, *, private_ok: bool) -> str:
    """An absolute http(s) URL with a host. `private_ok` False: no loopback, private or link-local address (a user
    key must not make the server call into its own network); names are not resolved, so this stops the obvious
    cases, not a DNS name pointing inside."""
    url = url.strip()
    if not url or len(url) > MAX_URL_CHARS or any(c.isspace() for c in url):
        raise InvalidInput(f"url: give an http:// or https:// URL of at most {MAX_URL_CHARS} characters, no spaces")
    try:
        parts = urlsplit(url)
        host = parts.hostname
        parts.port  # noqa: B018 - raises on a port that is not a number
    except ValueError as exc:
        raise InvalidInput("url: not a valid URL (check the host and the port)") from exc
    if parts.scheme not in ("http", "https") or not host:
        raise InvalidInput("url: only http:// and https:// URLs with a host are supported")
    if not private_ok and _inside(host):
        raise InvalidInput("url: a loopback, private or link-local address is not allowed for this key's project; "
                           "use a public address (or ask the admin to set JIYI_WEBHOOK_ALLOW_PRIVATE_URLS)")
    return url


def _inside(host: str) -> bool:
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_link_local or address.is_unspecified


def check_name(name: str | None) -> str:
    name = (name or "").strip() or "webhook"
    if len(name) > MAX_NAME_CHARS:
        raise InvalidInput(f"name: at most {MAX_NAME_CHARS} characters")
    return name


class WebhookRegistry:
    def __init__(self, store: WebhookStore, *, private_urls: bool = False) -> None:
        """`private_urls`: a user key's project may also target loopback and private addresses (the admin's and an
        open server's always may: they run the server)."""
        self.store = store
        self.private_urls = private_urls

    def create(self, project_id: str, user_id: str | None, *, url: str, name: str | None = None,
               event_types_asked: Sequence[str] | None = None, is_active: bool = True) -> Webhook:
        """A new webhook with a new secret; `user_id` set: it hears only that user's memories."""
        webhook = Webhook(project_id=project_id, user_id=user_id, url=self._url(url, user_id), name=check_name(name),
                          event_types=event_types(event_types_asked), secret=new_secret(), is_active=is_active)
        self.store.add_webhook(webhook)
        return webhook

    def list(self, project_id: str) -> list[Webhook]:
        return self.store.list_webhooks(project_id)

    def get(self, project_id: str, webhook_id: str) -> Webhook:
        webhook = self.store.get_webhook(webhook_id)
        if webhook is None or webhook.project_id != project_id:
            raise NotFound(f"webhook {webhook_id} not found")
        return webhook

    def update(self, project_id: str, webhook_id: str, *, url: str | None = None, name: str | None = None,
               event_types_asked: Sequence[str] | None = None, is_active: bool | None = None) -> Webhook:
        webhook = self.get(project_id, webhook_id)
        if url is not None:
            webhook.url = self._url(url, webhook.user_id)
        if name is not None:
            webhook.name = check_name(name)
        if event_types_asked is not None:
            webhook.event_types = event_types(event_types_asked)
        if is_active is not None:
            webhook.is_active = is_active
        webhook.updated_at = utcnow()
        self.store.save_webhook(webhook)
        return webhook

    def delete(self, project_id: str, webhook_id: str) -> None:
        self.get(project_id, webhook_id)
        self.store.delete_webhook(webhook_id)

    def _url(self, url: str, user_id: str | None) -> str:
        return check_url(url, private_ok=self.private_urls or user_id is None)
