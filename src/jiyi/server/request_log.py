"""Every HTTP request gets an id (X-Request-ID, the caller's or a new one), is counted by route template and status,
and an unexpected error becomes a 500 that still carries its id and leaves the connection usable.

A plain ASGI middleware: Starlette's BaseHTTPMiddleware (`@app.middleware("http")`) runs the rest of the app in a
task of its own and passes the response through memory streams, which cost each request more than everything
this does (py-spy, 8 clients searching: the middleware machinery was ~4 % of the server's busy samples).
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable

from starlette.datastructures import Headers, MutableHeaders
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from jiyi.server.metrics import Metrics

log = logging.getLogger("jiyi.server")


def new_request_id() -> str:
    """32 hex digits, as uuid4().hex gave. An id names a request in logs and traces; it guards nothing, so it needs
    no secret randomness: uuid4 reads os.urandom, a system call that lets go of the GIL on the event loop, and with
    the search threads busy the loop waited to get it back (py-spy, 8 in-process clients: 5 % of its samples)."""
    return f"{random.getrandbits(128):032x}"


class RequestLog:
    def __init__(self, app: ASGIApp, *, metrics: Callable[[], Metrics], error: Callable[[], Response],
                 allowed_methods: Callable[[str], str]) -> None:
        """`metrics`: where requests are counted; `error`: the 500 answer; `allowed_methods`: a path's Allow header
        (a 405 from the router lists only the methods of the first route that matched the path)."""
        self.app = app
        self.metrics = metrics
        self.error = error
        self.allowed_methods = allowed_methods

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = Headers(scope=scope).get("x-request-id") or new_request_id()
        started = time.perf_counter()
        status = 500
        answered = False

        async def send_with_id(message: Message) -> None:
            nonlocal status, answered
            if message["type"] == "http.response.start":
                answered, status = True, message["status"]
                headers = MutableHeaders(scope=message)
                if status == 405:
                    headers["Allow"] = self.allowed_methods(scope["path"]) or headers.get("Allow", "")
                headers["X-Request-ID"] = request_id
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        except Exception:
            # The body is not logged: it may be a user's private text.
            log.exception("unexpected error on %s %s id=%s", scope["method"], scope["path"], request_id)
            if answered:  # too late for a 500: the server closes the connection
                raise
            await self.error()(scope, receive, send_with_id)
        finally:
            path = getattr(scope.get("route"), "path", "unmatched")  # the route template, set by the router
            self.metrics().requests.labels(scope["method"], path, str(status)).inc()
            log.debug("%s %s %s %.1fms id=%s", scope["method"], path, status,
                      (time.perf_counter() - started) * 1000, request_id)
