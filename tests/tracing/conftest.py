"""jiyi's spans recorded by the OpenTelemetry SDK's in-memory exporter, through a provider given to jiyi the way an
instrumentation takes one (`tracing.set_tracer_provider`), so the process's global provider stays untouched."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from jiyi import tracing


@pytest.fixture
def provider() -> Iterator[TracerProvider]:
    provider = TracerProvider()
    content = tracing.content_recorded()
    tracing.set_tracer_provider(provider)
    yield provider
    tracing.set_tracer_provider(None)
    tracing.record_content(content)
    provider.shutdown()


@pytest.fixture
def exporter(provider: TracerProvider) -> InMemorySpanExporter:
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return exporter


def named(spans: Sequence[ReadableSpan], name: str) -> list[ReadableSpan]:
    return [s for s in spans if s.name == name]


def one(spans: Sequence[ReadableSpan], name: str) -> ReadableSpan:
    found = named(spans, name)
    assert len(found) == 1, (name, [s.name for s in spans])
    return found[0]


def parent_of(spans: Sequence[ReadableSpan], child: ReadableSpan) -> ReadableSpan | None:
    if child.parent is None:
        return None
    return next((s for s in spans if s.context is not None and s.context.span_id == child.parent.span_id), None)


def ancestors(spans: Sequence[ReadableSpan], child: ReadableSpan) -> list[str]:
    names = []
    current = parent_of(spans, child)
    while current is not None:
        names.append(current.name)
        current = parent_of(spans, current)
    return names


def everything_said(spans: Sequence[ReadableSpan]) -> str:
    """Every name, attribute and event of the spans, as one text to search for what must not be there."""
    parts: list[Any] = []
    for s in spans:
        parts += [s.name, s.status.description or "", *(s.attributes or {}).items()]
        parts += [(e.name, *(e.attributes or {}).items()) for e in s.events]
        parts += [*(s.resource.attributes or {}).items()]
    return repr(parts)


def finished(exporter: InMemorySpanExporter, *names: str, timeout: float = 10.0) -> Sequence[ReadableSpan]:
    """The spans finished so far, once every name in `names` is among them: a request's server span ends just after
    its answer is sent, so the client may be back before it has."""
    deadline = time.monotonic() + timeout
    while True:
        spans = exporter.get_finished_spans()
        if all(named(spans, name) for name in names) or time.monotonic() > deadline:
            return spans
        time.sleep(0.02)
