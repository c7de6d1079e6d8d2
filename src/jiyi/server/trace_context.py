"""A server span per HTTP request, child of the caller's trace when the request carries a W3C `traceparent`: an app
that traces its LLM calls sees jiyi's /context, /search and add inside its own trace (docs/tracing.md).

Only the route template, the method and the status go on the span, never the path (it may hold a user id), a query
string or a header. A plain ASGI middleware, as server/request_log.py explains; with no tracer provider configured
it only passes the request on.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from jiyi import tracing


class TraceContext:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not tracing.enabled():
            await self.app(scope, receive, send)
            return
        headers = {name.decode("latin-1"): value.decode("latin-1") for name, value in scope["headers"]
                   if name in (b"traceparent", b"tracestate")}
        status = 500

        async def send_with_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        method = scope["method"]
        with tracing.span(method, kind="server", context=tracing.extract_context(headers)) as span:
            try:
                await self.app(scope, receive, send_with_status)
            finally:
                route = getattr(scope.get("route"), "path", None)  # the template, set by the router
                if span.is_recording():
                    if route:
                        span.update_name(f"{method} {route}")
                        span.set_attribute("http.route", route)
                    span.set_attributes({"http.request.method": method, "http.response.status_code": status})
                    if status >= 500:
                        tracing.mark_failed(span, str(status))
