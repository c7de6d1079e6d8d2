"""`jiyi serve` with OTEL_EXPORTER_OTLP_ENDPOINT sends its spans by OTLP/HTTP: a tiny real receiver on 127.0.0.1
takes the protobuf POSTs on /v1/traces and reads them with opentelemetry-proto's own classes. And jiyi without
OpenTelemetry installed: the library works, and the server started with the variable set says so in one line."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from jiyi import __version__
from tests.cli.process import SRC, environment, serving

SAID = "我每周三晚上去游泳"
QUESTION = "我什么时候去游泳"


class Receiver:
    """An OTLP/HTTP trace receiver: every span it was sent, with its resource's attributes."""

    def __init__(self) -> None:
        self.spans: list[dict[str, Any]] = []
        self.paths: list[str] = []
        received = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                request = ExportTraceServiceRequest.FromString(body)
                received.paths.append(self.path)
                for resource_spans in request.resource_spans:
                    resource = {a.key: a.value.string_value for a in resource_spans.resource.attributes}
                    for scope_spans in resource_spans.scope_spans:
                        for span in scope_spans.spans:
                            attributes = {a.key: _value(a.value) for a in span.attributes}
                            received.spans.append({"name": span.name, "kind": span.kind, "resource": resource,
                                                   "attributes": attributes})
                answer = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, format: str, *args: Any) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def wait_for(self, *names: str, timeout: float = 30.0) -> list[dict[str, Any]]:
        """The spans received once every one of `names` is among them (or the timeout passed)."""
        deadline = time.monotonic() + timeout
        while not set(names) <= {s["name"] for s in self.spans} and time.monotonic() < deadline:
            time.sleep(0.05)
        return list(self.spans)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _value(value: Any) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [_value(v) for v in value.array_value.values]
    return getattr(value, kind) if kind else None


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    yield r
    r.close()


def _search_once(url: str) -> None:
    with httpx.Client(base_url=url, timeout=30) as client:
        client.post("/v1/memories/", json={"messages": [{"role": "user", "content": SAID}], "user_id": "alice",
                                           "infer": False}).raise_for_status()
        client.post("/v1/memories/search/", json={"query": QUESTION, "user_id": "alice"}).raise_for_status()
        client.get("/v1/memories/", params={"user_id": "alice"}).raise_for_status()


def test_jiyi_serve_exports_its_spans_by_otlp_http(tmp_path: Path, receiver: Receiver) -> None:
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url, "OTEL_BSP_SCHEDULE_DELAY": "100"}
    with serving(tmp_path / "home", env=env) as server:
        _search_once(server.url)
        # the last request's span too: spans are exported in batches, the search's may come before the list's
        spans = receiver.wait_for("jiyi.search", "GET /v1/memories/")
        log = server.output()
    assert set(receiver.paths) == {"/v1/traces"}
    search = next(s for s in spans if s["name"] == "jiyi.search")
    assert search["resource"]["service.name"] == "jiyi"
    assert search["resource"]["service.version"] == __version__
    assert search["attributes"]["jiyi.scope.kind"] == "user" and search["attributes"]["jiyi.search.results"] == 1
    names = {s["name"] for s in spans}
    assert {"jiyi.add", "vector_search memories", "embeddings v1-256"} <= names
    # One server span per request, jiyi's: FastAPI's own (url.path, url.query: ?user_id=alice) is turned off.
    servers = [s for s in spans if s["name"].startswith(("POST /", "GET /"))]
    assert sorted(s["name"] for s in servers if s["name"] != "GET /health") == [
        "GET /v1/memories/", "POST /v1/memories/", "POST /v1/memories/search/"]
    said = json.dumps(spans, ensure_ascii=False)
    assert SAID not in said and QUESTION not in said and "alice" not in said
    assert "OpenTelemetry" not in log  # no warning: the packages are there


def test_jiyi_trace_content_puts_the_texts_in_the_exported_spans(tmp_path: Path, receiver: Receiver) -> None:
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url, "OTEL_BSP_SCHEDULE_DELAY": "100", "JIYI_TRACE_CONTENT": "1"}
    with serving(tmp_path / "home", env=env) as server:
        _search_once(server.url)
        spans = receiver.wait_for("jiyi.search")
    search = next(s for s in spans if s["name"] == "jiyi.search")
    assert search["attributes"]["jiyi.query"] == [QUESTION]
    assert search["attributes"]["jiyi.memory.texts"] == [SAID] and search["attributes"]["jiyi.user_id"] == "alice"


def hiding(tmp_path: Path, *packages: str) -> str:
    """A PYTHONPATH under which importing these packages fails, as where they were never installed."""
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "sitecustomize.py").write_text(f'''
import importlib.abc, sys
class Hidden(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if any(name == p or name.startswith(p + ".") for p in {packages!r}):
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None
sys.meta_path.insert(0, Hidden())
''', encoding="utf-8")
    return f"{tmp_path / 'site'}:{SRC}"


def test_without_opentelemetry_jiyi_works_untraced(tmp_path: Path) -> None:
    path = hiding(tmp_path, "opentelemetry")  # the API too: the library imports neither FastAPI nor MCP
    script = f'''
from jiyi import Memory, build_embedder, build_store, tracing
assert not tracing.available and not tracing.enabled()
m = Memory(build_store("sqlite:///{tmp_path / 'm.db'}"), build_embedder("hashing"))
m.add("我每周三晚上去游泳", user_id="alice", infer=False)
print(m.search("游泳", user_id="alice")["results"][0]["memory"])
print(m.context([{{"role": "user", "content": "我什么时候去游泳？"}}], user_id="alice")["degraded"])
m.close()
'''
    env = {**environment(tmp_path / "home"), "PYTHONPATH": path}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [SAID, "False"]


def test_serve_says_in_one_line_that_it_cannot_export_without_the_packages(tmp_path: Path) -> None:
    # The API stays: FastAPI and the MCP SDK need it. The SDK and the exporter were not installed.
    path = hiding(tmp_path, "opentelemetry.sdk", "opentelemetry.exporter")
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9", "PYTHONPATH": path}
    with serving(tmp_path / "home", env=env) as server:
        _search_once(server.url)
        log = server.output()
    warnings = [line for line in log.splitlines() if "OTEL_EXPORTER_OTLP_ENDPOINT" in line]
    assert warnings == ["jiyi: OTEL_EXPORTER_OTLP_ENDPOINT is set but the OpenTelemetry SDK or its OTLP exporter is "
                        "not installed; no traces are sent. pip install 'jiyi[otel]'"]


def test_a_global_provider_an_app_sets_after_jiyis_first_call_is_used(tmp_path: Path) -> None:
    script = f'''
import time
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from jiyi import Memory, build_embedder, build_store, tracing
m = Memory(build_store("sqlite:///{tmp_path / 'm.db'}"), build_embedder("hashing"))
m.search("游泳", user_id="alice")  # nothing configured yet: no span, and jiyi has looked
spans = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(spans))
trace.set_tracer_provider(provider)
time.sleep(tracing.RECHECK_SECONDS + 0.1)
m.search("游泳", user_id="alice")
m.close()
print(sorted({{s.name for s in spans.get_finished_spans() if s.name.startswith("jiyi.")}}))
'''
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False,
                          env=environment(tmp_path / "home"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["['jiyi.search']"]
