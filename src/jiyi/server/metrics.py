"""Prometheus metrics with the names of the design (memory_add_total, memory_search_latency_seconds, ...).

No user_id label: per-user series would grow without bound and put user ids in a monitoring system.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from jiyi.embedders.scheduler import ModelUse


class _StoreSize(Collector):
    """Counting a large store takes a while and holds its lock: scrapes within `max_age` seconds reuse the count."""

    def __init__(self, count_by_layer: Callable[[], dict[str, int]], max_age: float = 15.0) -> None:
        self._count = count_by_layer
        self._max_age = max_age
        self._cached: tuple[float, dict[str, int]] | None = None

    def collect(self) -> Iterable[Metric]:
        now = time.monotonic()
        if self._cached is None or now - self._cached[0] > self._max_age:
            self._cached = (now, self._count())
        family = GaugeMetricFamily("memory_store_size", "Live memories in the store", labels=["layer"])
        for layer, count in sorted(self._cached[1].items()):
            family.add_metric([layer], count)
        yield family


class _TurnQueue(Collector):
    """Chat turns by extraction status: a growing `retry` count means the LLM is failing."""

    def __init__(self, count_by_status: Callable[[], dict[str, int]]) -> None:
        self._count = count_by_status

    def collect(self) -> Iterable[Metric]:
        family = GaugeMetricFamily("memory_turns", "Stored chat turns by extraction status", labels=["status"])
        for status, count in sorted(self._count().items()):
            family.add_metric([status], count)
        yield family


class _ModelUse(Collector):
    """The embedding model's calls, texts and busy seconds by kind (query, passage): queries per query call is the
    batch that searches waiting together got; seconds per text what the model costs (bench/throughput.py)."""

    def __init__(self, use: Callable[[], ModelUse]) -> None:
        self._use = use

    def collect(self) -> Iterable[Metric]:
        use = self._use()
        rows = {"calls": ("memory_embedding_model_calls", "Embedding model calls", use.query_calls, use.passage_calls),
                "texts": ("memory_embedding_texts", "Texts embedded", use.queries, use.passages),
                "seconds": ("memory_embedding_model_seconds", "Seconds the embedding model was busy",
                            use.query_seconds, use.passage_seconds)}
        for name, documentation, queries, passages in rows.values():
            family = CounterMetricFamily(name, documentation, labels=["kind"])
            family.add_metric(["query"], queries)
            family.add_metric(["passage"], passages)
            yield family
        # Of the query rows, what the model's second engine ran (the queries that found the first one busy).
        for name, documentation, value in (
                ("memory_embedding_second_engine_calls", "Query calls run on the model's second engine",
                 use.aside_calls),
                ("memory_embedding_second_engine_texts", "Queries embedded on the model's second engine",
                 use.aside_queries),
                ("memory_embedding_second_engine_seconds", "Seconds the model's second engine was busy",
                 use.aside_seconds)):
            yield CounterMetricFamily(name, documentation, value=value)


class Metrics:
    def __init__(self, count_by_layer: Callable[[], dict[str, int]], store_size_max_age: float = 15.0,
                 count_turns: Callable[[], dict[str, int]] | None = None,
                 model_use: Callable[[], ModelUse] | None = None) -> None:
        self.registry = CollectorRegistry()
        self.add_total = Counter("memory_add_total", "Memories added", ["memory_type"], registry=self.registry)
        self.update_total = Counter("memory_update_total", "Memories updated", registry=self.registry)
        self.delete_total = Counter("memory_delete_total", "Memories deleted", registry=self.registry)
        self.search_latency = Histogram(
            "memory_search_latency_seconds", "Search latency", registry=self.registry,
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0),
        )
        self.add_latency = Histogram(
            "memory_add_latency_seconds", "Add latency", registry=self.registry,
            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
        )
        self.context_latency = Histogram(
            "memory_context_latency_seconds", "Recall and injection latency (POST /context)", registry=self.registry,
            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0),
        )
        self.context_stages = Counter(
            "memory_context_stage_total", "Query-enhancement stages by outcome", ["stage", "outcome"],
            registry=self.registry,
        )
        self.context_degraded = Counter(
            "memory_context_degraded_total", "Context calls answered without memories because recall failed",
            registry=self.registry,
        )
        self.lifecycle = Counter(
            "memory_lifecycle_total", "Memories changed by maintenance passes", ["action"], registry=self.registry,
        )
        self.compression_ratio = Gauge(
            "memory_compression_ratio", "Live memories before / after the last maintenance pass",
            registry=self.registry,
        )
        self.retention_rate = Gauge(
            "memory_retention_rate", "Share of memories the last maintenance pass kept", registry=self.registry,
        )
        self.maintenance_seconds = Gauge(
            "memory_maintenance_last_seconds", "Duration of the last maintenance pass", registry=self.registry,
        )
        self.requests = Counter(
            "http_requests_total", "HTTP requests", ["method", "route", "status"], registry=self.registry
        )
        self.registry.register(_StoreSize(count_by_layer, store_size_max_age))
        if count_turns is not None:
            self.registry.register(_TurnQueue(count_turns))
        if model_use is not None:
            self.registry.register(_ModelUse(model_use))

    def count_changes(self, results: Iterable[dict[str, Any]]) -> None:
        """Count the memory changes an add, update or delete reported (mem0's result items: event, memory_type),
        whichever route made them (REST, the platform routes, MCP)."""
        for item in results:
            if item.get("event") == "ADD":
                self.add_total.labels(memory_type=item.get("memory_type") or "unknown").inc()
            elif item.get("event") == "UPDATE":
                self.update_total.inc()
            elif item.get("event") == "DELETE":
                self.delete_total.inc()

    def observe_maintenance(self, result: dict[str, Any]) -> None:
        for action in ("forgotten", "kept", "promoted", "moved", "merged", "summarized", "abstracted", "conflicts",
                       "purged"):
            self.lifecycle.labels(action).inc(result.get(action, 0))
        if result.get("compression_ratio") is not None:
            self.compression_ratio.set(result["compression_ratio"])
        if result.get("retention_rate") is not None:
            self.retention_rate.set(result["retention_rate"])
        self.maintenance_seconds.set(result.get("seconds", 0.0))

    def observe_context(self, seconds: float, result: dict[str, Any]) -> None:
        self.context_latency.observe(seconds)
        for stage in result["stages"]:
            self.context_stages.labels(stage["stage"], stage["outcome"]).inc()
        if result["degraded"]:
            self.context_degraded.inc()
