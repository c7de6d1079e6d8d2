"""Bounded work per request: how large a body, a message, a query or a metadata object may be, and how deep JSON
may nest. Every refusal names what is too large and the limit, so a caller can fix the request.

The body is checked before anything parses it (a 5 MB body is refused after reading 1 MiB of it, or at once when
its Content-Length says so); fields are checked by the route handlers, which know what each field means.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from jiyi.core.messages import content_text
from jiyi.errors import InvalidInput, PayloadTooLarge, UnsupportedMediaType

JSON_CONTENT_TYPES = ("application/json",)


@dataclass(frozen=True, slots=True)
class RequestLimits:
    """Defaults fit a chat service: a message of 64k characters is a long document pasted into a chat; a search
    query is a question; metadata is a handful of tags. Each is settable (JIYI_MAX_*)."""

    max_body_bytes: int = 1 << 20
    max_message_chars: int = 65_536
    max_query_chars: int = 4_000
    max_metadata_bytes: int = 16_384
    max_json_depth: int = 32
    rate_per_minute: int = 0  # requests per API key (0: no limit); see RateLimiter

    def check_text(self, value: str | None, field: str, limit: int, setting: str) -> None:
        if value is not None and len(value) > limit:
            raise PayloadTooLarge(f"{field} is {len(value):,} characters; the limit is {limit:,} ({setting})")

    def check_query(self, value: str | None, field: str = "query") -> None:
        self.check_text(value, field, self.max_query_chars, "JIYI_MAX_QUERY_CHARS")

    def check_message_text(self, value: str | None, field: str) -> None:
        self.check_text(value, field, self.max_message_chars, "JIYI_MAX_MESSAGE_CHARS")

    def check_messages(self, messages: Iterable[Any]) -> None:
        """Each message's text: a string, or what jiyi keeps of its content parts (text parts, captions)."""
        for index, message in enumerate(messages):
            content = message.get("content") if isinstance(message, Mapping) else getattr(message, "content", None)
            if isinstance(content, list | dict):
                content = content_text(content, f"messages[{index}].content", media_needs_text=False)
            if isinstance(content, str):
                self.check_message_text(content, f"messages[{index}].content")

    def check_metadata(self, metadata: Mapping[str, Any] | None, field: str = "metadata") -> None:
        if not metadata:
            return
        size = len(json.dumps(metadata, ensure_ascii=False, default=str).encode("utf-8", "surrogatepass"))
        if size > self.max_metadata_bytes:
            raise PayloadTooLarge(f"{field} is {size:,} bytes as JSON; the limit is {self.max_metadata_bytes:,} "
                                  "(JIYI_MAX_METADATA_BYTES)")


def json_depth(value: Any) -> int:
    """Nesting depth of a parsed JSON value (a scalar is 0, [] and {} are 1), without recursion."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            item = item.values()
        elif not isinstance(item, list):
            continue
        depth += 1
        deepest = max(deepest, depth)
        stack.extend((child, depth) for child in item if isinstance(child, dict | list))
    return deepest


def check_json_body(body: bytes, content_type: str, limits: RequestLimits) -> None:
    """Raise InvalidInput (or PayloadTooLarge) naming what is wrong with a JSON request body."""
    if len(body) > limits.max_body_bytes:
        raise PayloadTooLarge(f"the request body is {len(body):,} bytes; the limit is {limits.max_body_bytes:,} "
                              "(JIYI_MAX_BODY_BYTES)")
    media_type = content_type.split(";", 1)[0].strip().lower()
    if media_type and media_type not in JSON_CONTENT_TYPES and not media_type.endswith("+json"):
        raise UnsupportedMediaType(
            f"the body must be JSON with Content-Type: application/json (got {media_type}); "
            "with curl, add -H 'content-type: application/json'"
        )
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"the request body is not valid UTF-8 (byte {exc.start})") from exc
    try:
        parsed = json.loads(text)
    except RecursionError as exc:
        raise InvalidInput(f"the request body nests JSON deeper than {limits.max_json_depth} levels") from exc
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"the request body is not valid JSON: {exc.msg} (line {exc.lineno}, column "
                           f"{exc.colno})") from exc
    depth = json_depth(parsed)
    if depth > limits.max_json_depth:
        raise InvalidInput(f"the request body nests JSON {depth} levels deep; the limit is {limits.max_json_depth} "
                           "(JIYI_MAX_JSON_DEPTH)")
    # Valid UTF-8 bytes cannot hold a surrogate; only a "\ud800"-style escape can. Such text cannot be stored or
    # answered, whatever field it is in, so it is refused here once instead of in every route.
    if _SURROGATE_ESCAPE.search(text) and (where := _lone_surrogate_at(parsed)):
        raise InvalidInput(f"{where} is not valid Unicode text (a lone surrogate escape such as \\ud800)")


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _lone_surrogate_at(value: Any) -> str | None:
    """The path of the first key or string that is not valid Unicode (a lone surrogate), if any."""
    stack: list[tuple[Any, str]] = [(value, "body")]
    while stack:
        item, path = stack.pop()
        if isinstance(item, str):
            if not item.isascii() and not _encodes(item):
                return path
        elif isinstance(item, list):
            stack.extend((child, f"{path}[{index}]") for index, child in enumerate(item))
        elif isinstance(item, dict):
            for key, child in item.items():
                if not _encodes(key):
                    return f"a key in {path}"
                stack.append((child, key if path == "body" else f"{path}.{key}"))
    return None


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class BodyGuard:
    """ASGI middleware: reads a request body up to the limit and checks it is JSON a route can use, then hands the
    same bytes to the app. Refusals go through `reject`, so they look like every other error answer."""

    def __init__(self, app: ASGIApp, limits: RequestLimits, reject: Callable[[InvalidInput], ASGIApp]) -> None:
        self.app = app
        self.limits = limits
        self.reject = reject

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in ("POST", "PUT", "PATCH"):
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        try:
            body = await self._read(headers, receive)
            if body:
                check_json_body(body, headers.get("content-type", ""), self.limits)
        except InvalidInput as exc:
            await self.reject(exc)(scope, receive, send)
            return

        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()  # after the body: wait for the disconnect, as the server would

        await self.app(scope, replay, send)

    async def _read(self, headers: Mapping[str, str], receive: Receive) -> bytes:
        limit = self.limits.max_body_bytes
        declared = headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            raise PayloadTooLarge(f"the request body is {int(declared):,} bytes; the limit is {limit:,} "
                                  "(JIYI_MAX_BODY_BYTES)")
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                raise PayloadTooLarge(f"the request body is over {limit:,} bytes, the limit (JIYI_MAX_BODY_BYTES)")
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        return b"".join(chunks)

