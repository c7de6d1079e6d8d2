"""Scale benchmark: search latency and add throughput of jiyi at 1k, 10k and 100k memories in one user's scope.

    . /tmp/venv/bin/activate
    python bench/scale.py                         # full: 1k, 10k, 100k x e5, use: ~5 min (+ ~25 min to embed once)
    python bench/scale.py --sizes 1000            # quick: < 1 minute
    python bench/scale.py --sizes 1000,10000 --embedders use --out bench/results/scale-use.json
    python bench/scale.py --quiet-wait 90         # on a shared machine: wait for other processes before each phase
    python bench/scale.py --sizes 10000 --embedders e5 --baseline HEAD~1 --rounds 2   # this tree vs a commit

With --baseline REV the same harness (this file) measures this working tree's jiyi and REV's (a temporary git
worktree, first on PYTHONPATH), one size at a time, in alternating order for --rounds rounds, each side in a process
of its own; the report holds both sides' results and, per size, the ratios HEAD / baseline of the search latencies.

What is measured, and how (also written into the JSON under "method"):

* Store layout per (embedder, size S): one SQLite file holding S memories of user "u_main" plus S/5 memories spread
  over 50 other users, rows interleaved, so the scope filter matters. Texts come from bench/corpus.py (seeded,
  Chinese + English). The file is filled through `store.insert` with real vectors of that embedder, computed once
  and cached in bench/.cache/ per embedder, corpus version and seed: this is the "bulk insert" rate, no embedding.
* Cold search: the store is closed and reopened, then one search is timed: it loads the scope's vectors from SQLite.
* Search, in process: `Memory.search(q, user_id="u_main", top_k=10, explain=True)`, each of ~200 distinct queries
  once (after 10 distinct warm-up queries), wall time around the call, query embedding included. The split comes
  from wrapping embedder.embed_query and the store's vector_search, keyword_search, document_frequencies and
  get_many with timers (a store method's time includes waiting for the store's lock while the other recall path
  holds it); "rest" is wall time when none of them ran (segmentation, coverage, fusion, record->dict, thread
  hops). The library's own score_details.timings_ms are kept too.
* Search over HTTP: then the same queries, POST /search to a real uvicorn server (jiyi.server.create_app around an
  AsyncMemory on the same file) in a separate process on 127.0.0.1, one keep-alive httpx client. The HTTP
  overhead is the median of the per-query differences (HTTP - in process). The two phases are not interleaved:
  see search_http() for why.
* Search over HTTP while passages are being embedded: the same queries again, while LOAD_WRITERS other users each
  POST /memories (infer=false, LOAD_BATCH messages a call, one call after another) to the same server, as the
  extraction worker does beside searches; the writers start a second before the first query and stop after the last.
  The issue's target: its p99 at most twice the idle HTTP p99.
* Other load: this machine is shared; the CPU cores that other processes kept busy during each phase are recorded
  (from /proc), and --quiet-wait N waits up to N s before each phase for the machine to calm down.
* Add: fresh texts (never in the store) through `Memory.add(100 messages, infer=False)`, then as many through
  POST /memories; embedding, raw-message log, insert and keyword indexing included. memories/s = messages / wall time.
  Adds run after the searches, into the same scope.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import multiprocessing
import os
import platform
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from jiyi import Event, Memory, MemoryRecord, Scope, build_embedder, build_store
from jiyi.embedders.base import Embedder
from jiyi.records import history_row
from jiyi.stores.base import MemoryStore

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/ is not a package
import corpus

BENCH_DIR = Path(__file__).resolve().parent
CACHE_DIR = BENCH_DIR / ".cache"
MAIN_USER = "u_main"
OTHER_USERS = 50
OTHER_FRACTION = 0.2
TOP_K = 10
ADD_BATCH = 100
WARMUP_QUERIES = 10
INSERT_CHUNK = 1000
EMBED_CHUNK = 256
LOAD_WRITERS = 2  # users adding while the searches run (each its own lane in the embedding scheduler)
LOAD_BATCH = 16  # messages per POST /memories of a writer: about one extracted turn's facts
SAVE_EVERY = 10_000

TARGETS = {
    "search_p50_ms": 10.0,  # in process, 10k memories in the scope, query embedding included
    "search_p99_ms": 30.0,
    "http_overhead_ms": 5.0,
    "add_memories_per_s": 200.0,  # infer=False, batched
    "search_http_p99_ms": 20.0,  # issue 12: over HTTP on an idle machine, e5, 10k
    "under_load_p99_ratio": 2.0,  # issue 12: HTTP p99 while passages are embedded / idle HTTP p99
}


def log(message: str) -> None:
    print(f"[{datetime.now():%H:%M:%S}] {message}", file=sys.stderr, flush=True)


# --- statistics ----------------------------------------------------------------------------------------------------


def summary(values: Sequence[float]) -> dict[str, float]:
    """p50/p90/p99/mean/max in ms (or whatever unit the values are in), rounded for reading."""
    if not values:
        return {"n": 0}
    arr = np.asarray(values, dtype=np.float64)
    p50, p90, p99 = np.percentile(arr, [50, 90, 99])
    return {"n": int(arr.size), "p50": round(float(p50), 3), "p90": round(float(p90), 3),
            "p99": round(float(p99), 3), "mean": round(float(arr.mean()), 3), "max": round(float(arr.max()), 3)}


Interval = tuple[float, float]  # perf_counter seconds: start, end


@contextmanager
def timed_methods(obj: Any, names: Sequence[str]) -> Iterator[dict[str, list[Interval]]]:
    """Wrap `obj`'s methods with a timer for the duration of the block; yields name -> (start, end) per call.

    Calls may come from several threads at once (the facade runs recall paths in parallel): list.append is atomic.
    """
    calls: dict[str, list[Interval]] = {name: [] for name in names}
    originals = {name: getattr(obj, name) for name in names}

    def wrap(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                calls[name].append((started, time.perf_counter()))
        return timed

    for name, fn in originals.items():
        setattr(obj, name, wrap(name, fn))
    try:
        yield calls
    finally:
        for name in names:
            delattr(obj, name)  # back to the class attribute


def total_ms(intervals: Sequence[Interval]) -> float:
    return sum(end - start for start, end in intervals) * 1000


def covered_ms(intervals: Sequence[Interval]) -> float:
    """Length of the union of the intervals: wall time during which at least one of them ran."""
    covered, reach = 0.0, float("-inf")
    for start, end in sorted(intervals):
        if end > reach:
            covered += end - max(start, reach)
            reach = end
    return covered * 1000


# --- other load on the machine -------------------------------------------------------------------------------------

_TICK = os.sysconf("SC_CLK_TCK")


def system_busy_s() -> float:
    """CPU seconds all processes spent busy since boot (user, nice, system, irq, softirq, steal)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return (fields[0] + fields[1] + fields[2] + fields[5] + fields[6] + fields[7]) / _TICK


def process_cpu_s(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / _TICK  # utime, stime


class CpuMeter:
    """How many cores other processes kept busy while a phase ran: machine busy time minus this benchmark's."""

    def __init__(self, pids: Sequence[int]) -> None:
        self.pids = list(pids)
        self.started = time.perf_counter()
        self.busy = system_busy_s()
        self.own = sum(process_cpu_s(p) for p in self.pids)

    def foreign_cores(self) -> float:
        wall = time.perf_counter() - self.started
        own = sum(process_cpu_s(p) for p in self.pids) - self.own
        return round(max(system_busy_s() - self.busy - own, 0.0) / max(wall, 1e-9), 2)


def wait_for_quiet(max_wait_s: float, pids: Sequence[int], threshold: float = 0.3) -> float:
    """Wait (up to max_wait_s) until other processes use less than `threshold` cores; return what was last seen."""
    deadline = time.monotonic() + max_wait_s
    while True:
        meter = CpuMeter(pids)
        time.sleep(1.0)
        load = meter.foreign_cores()
        if load < threshold or time.monotonic() > deadline:
            return load
        log(f"machine busy ({load:.2f} cores used by other processes), waiting")
        time.sleep(4.0)


# --- corpus and cached vectors -------------------------------------------------------------------------------------


def texts_digest(texts: Sequence[str]) -> str:
    digest = hashlib.sha256()
    for text in texts:
        digest.update(text.encode("utf-8"))
        digest.update(b"\n")
    return digest.hexdigest()


def cache_paths(name: str, seed: int) -> tuple[Path, Path]:
    stem = f"vectors-{name}-corpus{corpus.CORPUS_VERSION}-seed{seed}"
    return CACHE_DIR / f"{stem}.npy", CACHE_DIR / f"{stem}.json"


def load_cache(name: str, seed: int, embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
    """Cached vectors for a prefix of `texts` (possibly empty), checked against the corpus and the model."""
    vectors_path, meta_path = cache_paths(name, seed)
    empty = np.zeros((0, embedder.dims), dtype=np.float32)
    if not (vectors_path.exists() and meta_path.exists()):
        return empty
    meta = json.loads(meta_path.read_text())
    count = int(meta["count"])
    if meta.get("model_id") != embedder.model_id or meta.get("dims") != embedder.dims:
        return empty
    # The corpus is prefix-stable, so a longer cache also serves a shorter run.
    reference = texts[:count] if len(texts) >= count else corpus.memories(count, seed)
    if texts_digest(reference) != meta["sha256"]:
        return empty
    return np.array(np.load(vectors_path, mmap_mode="r")[: min(count, len(texts))], dtype=np.float32)


def save_cache(name: str, seed: int, embedder: Embedder, texts: Sequence[str], vectors: np.ndarray) -> None:
    vectors_path, meta_path = cache_paths(name, seed)
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    tmp = vectors_path.with_suffix(".tmp.npy")
    np.save(tmp, vectors)
    os.replace(tmp, vectors_path)
    meta = {"count": len(vectors), "sha256": texts_digest(texts[: len(vectors)]), "model_id": embedder.model_id,
            "dims": embedder.dims, "corpus_version": corpus.CORPUS_VERSION, "seed": seed}
    meta_path.write_text(json.dumps(meta, indent=1))


def corpus_vectors(name: str, seed: int, embedder: Embedder, texts: Sequence[str]) -> tuple[np.ndarray, dict[str, Any]]:
    """Vectors of every text, from the cache where possible; the missing tail is embedded and saved as it goes."""
    cached = load_cache(name, seed, embedder, texts)
    parts = [cached]
    have = len(cached)
    started = time.perf_counter()
    since_save = 0
    for start in range(have, len(texts), EMBED_CHUNK):
        chunk = texts[start:start + EMBED_CHUNK]
        parts.append(embedder.embed_documents(chunk))
        since_save += len(chunk)
        if since_save >= SAVE_EVERY or start + EMBED_CHUNK >= len(texts):
            save_cache(name, seed, embedder, texts, np.concatenate(parts))
            parts = [np.concatenate(parts)]
            since_save = 0
            done = start + len(chunk)
            log(f"{name}: embedded {done - have}/{len(texts) - have} texts "
                f"({(done - have) / (time.perf_counter() - started):.0f}/s)")
    vectors = np.concatenate(parts)[: len(texts)]
    info = {"cached": have, "embedded_now": len(texts) - min(have, len(texts)),
            "embed_seconds": round(time.perf_counter() - started, 1)}
    return vectors, info


# --- building a store ----------------------------------------------------------------------------------------------


def layout(size: int, seed: int) -> list[tuple[int, str]]:
    """(corpus index, user id) in insertion order: `size` texts of MAIN_USER, size/5 of 50 others, interleaved."""
    others = int(size * OTHER_FRACTION)
    rows = [(i, MAIN_USER) for i in range(size)]
    rows += [(size + j, f"u_other_{j % OTHER_USERS:02d}") for j in range(others)]
    random.Random(f"layout:{seed}:{size}").shuffle(rows)
    return rows


def fill_store(store: MemoryStore, embedder: Embedder, texts: Sequence[str], vectors: np.ndarray,
               rows: Sequence[tuple[int, str]]) -> dict[str, float]:
    """Bulk-insert the rows with their cached vectors, INSERT_CHUNK per transaction."""
    store.bind_embedding(embedder.model_id, embedder.dims)
    started = time.perf_counter()
    for start in range(0, len(rows), INSERT_CHUNK):
        chunk = rows[start:start + INSERT_CHUNK]
        records = [MemoryRecord(content=texts[i], scope=Scope(user_id=user), role="user") for i, user in chunk]
        history = [history_row(Event.ADD, r, r.created_at) for r in records]
        store.insert(records, vectors[[i for i, _ in chunk]], history)
    seconds = time.perf_counter() - started
    return {"rows": len(rows), "seconds": round(seconds, 2), "rows_per_s": round(len(rows) / seconds, 1)}


# --- measurements --------------------------------------------------------------------------------------------------


def cold_search(memory: Memory, query: str) -> float:
    started = time.perf_counter()
    memory.search(query, user_id=MAIN_USER, top_k=TOP_K)
    return (time.perf_counter() - started) * 1000


SEARCH_PARTS = {"embed": "embed_query", "vector": "vector_search", "keyword": "keyword_search",
                "keyword_df": "document_frequencies", "load_records": "get_many"}


@dataclass
class SearchLog:
    """Per-query measurements of the search phase."""

    inproc_ms: list[float] = field(default_factory=list)
    http_ms: list[float] = field(default_factory=list)
    parts_ms: dict[str, list[float]] = field(default_factory=lambda: {k: [] for k in [*SEARCH_PARTS, "rest"]})
    library_ms: dict[str, list[float]] = field(default_factory=dict)
    empty_results: int = 0


def search_once_inproc(memory: Memory, query: str, calls: dict[str, list[Interval]], out: SearchLog) -> None:
    """One timed Memory.search; the wrapped methods' intervals since the call started give its split."""
    marks = {name: len(found) for name, found in calls.items()}
    started = time.perf_counter()
    results = memory.search(query, user_id=MAIN_USER, top_k=TOP_K, explain=True)["results"]
    out.inproc_ms.append((time.perf_counter() - started) * 1000)
    mine = {name: found[marks[name]:] for name, found in calls.items()}
    for key, method in SEARCH_PARTS.items():
        out.parts_ms[key].append(total_ms(mine.get(method, [])))
    out.parts_ms["rest"].append(out.inproc_ms[-1] - covered_ms([i for found in mine.values() for i in found]))
    for key, value in (results[0]["score_details"].get("timings_ms", {}) if results else {}).items():
        out.library_ms.setdefault(key, []).append(value)
    out.empty_results += not results


def search_once_http(client: httpx.Client, query: str, out: SearchLog) -> None:
    started = time.perf_counter()
    response = client.post("/search", json={"query": query, "user_id": MAIN_USER, "top_k": TOP_K})
    response.raise_for_status()
    response.json()
    out.http_ms.append((time.perf_counter() - started) * 1000)


def search_inproc(memory: Memory, queries: Sequence[str], warmup: Sequence[str], out: SearchLog) -> None:
    """Each query once through Memory.search, split by timing the embedder's and the store's methods."""
    for q in warmup:
        memory.search(q, user_id=MAIN_USER, top_k=TOP_K)
    store_methods = [m for m in SEARCH_PARTS.values() if m != "embed_query" and hasattr(memory.store, m)]
    with timed_methods(memory.embedder, ["embed_query"]) as embed_calls, \
            timed_methods(memory.store, store_methods) as store_calls:
        calls = {**embed_calls, **store_calls}
        for q in queries:
            search_once_inproc(memory, q, calls, out)


def search_http(client: httpx.Client, queries: Sequence[str], warmup: Sequence[str], out: SearchLog) -> None:
    """The same queries over HTTP. Not interleaved with the in-process ones on purpose: a search leaves numpy's
    OpenBLAS threads spinning for a while, which slows the other process's next query embedding (measured: e5 at
    10k, in-process p50 27 -> 40 ms when interleaved; no effect with OPENBLAS_NUM_THREADS=1)."""
    for q in warmup:
        client.post("/search", json={"query": q, "user_id": MAIN_USER, "top_k": TOP_K}).raise_for_status()
    for q in queries:
        search_once_http(client, q, out)


def search_http_under_load(client: httpx.Client, queries: Sequence[str], texts: Sequence[str],
                           out: list[float]) -> dict[str, Any]:
    """The queries over HTTP while LOAD_WRITERS threads add texts through the same server (infer=false)."""
    stop = threading.Event()
    added = [0] * LOAD_WRITERS
    errors: list[str] = []

    def write(writer: int) -> None:
        with httpx.Client(base_url=client.base_url, timeout=120) as own:
            start = writer * LOAD_BATCH
            while not stop.is_set():
                batch = [{"role": "user", "content": texts[(start + j) % len(texts)]} for j in range(LOAD_BATCH)]
                response = own.post("/memories", json={"messages": batch, "user_id": f"u_writer_{writer}",
                                                       "infer": False})
                if response.status_code != 200:
                    errors.append(f"{response.status_code}: {response.text[:100]}")
                added[writer] += LOAD_BATCH
                start += LOAD_WRITERS * LOAD_BATCH

    writers = [threading.Thread(target=write, args=(i,), daemon=True) for i in range(LOAD_WRITERS)]
    for thread in writers:
        thread.start()
    time.sleep(1.0)
    started = time.perf_counter()
    measured = SearchLog()
    for q in queries:
        search_once_http(client, q, measured)
    seconds = time.perf_counter() - started
    stop.set()
    for thread in writers:
        thread.join(timeout=120)
    out.extend(measured.http_ms)
    return {"writers": LOAD_WRITERS, "batch": LOAD_BATCH, "memories_added": sum(added),
            "memories_per_s_during_searches": round(sum(added) / (seconds + 1.0), 1), "add_errors": errors[:5]}


def batches(texts: Sequence[str], size: int) -> list[list[dict[str, str]]]:
    return [[{"role": "user", "content": t} for t in texts[i:i + size]] for i in range(0, len(texts), size)]


def add_inproc(memory: Memory, texts: Sequence[str]) -> dict[str, Any]:
    """Memory.add(infer=False) in batches, split by timing the embedder's and the store's methods."""
    calls: list[float] = []
    with timed_methods(memory.embedder, ["embed_documents"]) as embed_calls, \
            timed_methods(memory.store, ["insert", "add_messages"]) as store_calls:
        for batch in batches(texts, ADD_BATCH):
            started = time.perf_counter()
            added = memory.add(batch, user_id=MAIN_USER, infer=False)["results"]
            calls.append((time.perf_counter() - started) * 1000)
            if len(added) != len(batch):
                raise RuntimeError(f"{len(batch)} messages gave {len(added)} memories")
    timed = {"embed_documents": total_ms(embed_calls["embed_documents"]),
             "store_insert": total_ms(store_calls["insert"]),
             "store_add_messages": total_ms(store_calls["add_messages"])}
    timed["rest"] = sum(calls) - sum(timed.values())
    return {"memories": len(texts), "batch": ADD_BATCH, "memories_per_s": round(len(texts) / (sum(calls) / 1000), 1),
            "call_ms": summary(calls), "ms_per_call": {k: round(v / len(calls), 2) for k, v in timed.items()}}


def add_http(client: httpx.Client, texts: Sequence[str]) -> dict[str, Any]:
    calls: list[float] = []
    for batch in batches(texts, ADD_BATCH):
        started = time.perf_counter()
        response = client.post("/memories", json={"messages": batch, "user_id": MAIN_USER, "infer": False})
        response.raise_for_status()
        calls.append((time.perf_counter() - started) * 1000)
        if len(response.json()["results"]) != len(batch):
            raise RuntimeError("POST /memories did not store every message")
    return {"memories": len(texts), "batch": ADD_BATCH, "memories_per_s": round(len(texts) / (sum(calls) / 1000), 1),
            "call_ms": summary(calls)}


# --- the HTTP server, in its own process ---------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve(db_path: str, embedder_name: str, port: int) -> None:
    """Child process: uvicorn on 127.0.0.1 around an AsyncMemory on the benchmark's file."""
    import uvicorn

    from jiyi import AsyncMemory
    from jiyi.server import create_app

    app = create_app(AsyncMemory(build_store(f"sqlite:///{db_path}"), build_embedder(embedder_name)))
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)


@contextmanager
def http_server(db_path: Path, embedder_name: str) -> Iterator[tuple[httpx.Client, int]]:
    """Start the server process, wait for /health, yield a keep-alive client and the server's pid; stop it after."""
    port = free_port()
    process = multiprocessing.get_context("spawn").Process(
        target=serve, args=(str(db_path), embedder_name, port), daemon=True)
    process.start()
    client = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=120)
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if client.get("/health").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline or not process.is_alive():
                raise RuntimeError("the benchmark's uvicorn server did not start")
            time.sleep(0.1)
        yield client, int(process.pid or 0)
    finally:
        client.close()
        process.terminate()
        process.join(timeout=20)
        if process.is_alive():
            process.kill()
            process.join()


# --- one (embedder, size) run --------------------------------------------------------------------------------------


@dataclass
class Workload:
    texts: list[str]  # stored corpus, prefix-stable
    vectors: np.ndarray
    fresh_inproc: list[str]  # never stored before the add measurement
    fresh_http: list[str]
    queries: list[str]
    warmup: list[str]
    seed: int = 0
    quiet_wait_s: float = 0.0


@dataclass
class Phases:
    """Runs measured phases, each after waiting for a quiet machine, noting how busy other processes kept it."""

    quiet_wait_s: float
    pids: list[int]
    load: dict[str, dict[str, float]] = field(default_factory=dict)

    def run(self, label: str, fn: Callable[[], Any]) -> Any:
        before = wait_for_quiet(self.quiet_wait_s, self.pids) if self.quiet_wait_s > 0 else None
        meter = CpuMeter(self.pids)
        result = fn()
        self.load[label] = {"before": before, "during": meter.foreign_cores()}
        return result


def build_file(db_path: Path, name: str, embedder: Embedder, size: int, work: Workload) -> dict[str, Any]:
    """A fresh SQLite file for this size, filled with store.insert; returns the fill rate and the counts."""
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db_path}{suffix}").unlink(missing_ok=True)
    rows = layout(size, work.seed)
    store = build_store(f"sqlite:///{db_path}")
    log(f"{name} @ {size}: bulk insert of {len(rows)} rows")
    build = fill_store(store, embedder, work.texts, work.vectors, rows)
    counts = {"scope": sum(store.count(Scope(user_id=MAIN_USER)).values()), "total": sum(store.count().values())}
    store.close()
    return {"bulk_insert": build, "memories_in_scope": counts["scope"], "memories_in_file": counts["total"],
            "db_mb": round(db_path.stat().st_size / 2**20, 1)}


def run_one(name: str, embedder: Embedder, size: int, work: Workload, workdir: Path) -> dict[str, Any]:
    db_path = workdir / f"{name}-{size}.db"
    built = build_file(db_path, name, embedder, size, work)
    gc.collect()
    phases = Phases(work.quiet_wait_s, [os.getpid()])
    memory = Memory(build_store(f"sqlite:///{db_path}"), embedder)
    cold_ms = phases.run("cold_search", lambda: cold_search(memory, work.warmup[0]))
    searched = SearchLog()
    log(f"{name} @ {size}: in-process search ({len(work.queries)} queries)")
    phases.run("search_inproc", lambda: search_inproc(memory, work.queries, work.warmup[1:], searched))
    with http_server(db_path, name) as (client, server_pid):
        phases.pids.append(server_pid)
        log(f"{name} @ {size}: HTTP search")
        phases.run("search_http", lambda: search_http(client, work.queries, work.warmup[1:], searched))
        log(f"{name} @ {size}: HTTP search while passages are being embedded")
        under_load: list[float] = []
        writes = phases.run("search_http_under_load",
                            lambda: search_http_under_load(client, work.queries, work.fresh_inproc, under_load))
        log(f"{name} @ {size}: add, in process then HTTP")
        add_local = phases.run("add_inproc", lambda: add_inproc(memory, work.fresh_inproc))
        add_remote = phases.run("add_http", lambda: add_http(client, work.fresh_http))
    memory.close()
    diffs = [h - i for h, i in zip(searched.http_ms, searched.inproc_ms, strict=True)]
    return {
        "embedder": name, "model_id": embedder.model_id, "dims": embedder.dims, "size": size,
        "other_users": OTHER_USERS, **built, "cold_first_search_ms": round(cold_ms, 2),
        "search_inproc_ms": summary(searched.inproc_ms),
        "search_inproc_parts_ms": {k: summary(v) for k, v in searched.parts_ms.items()},
        "search_inproc_library_timings_ms": {k: summary(v) for k, v in searched.library_ms.items()},
        "search_empty_results": searched.empty_results,
        "search_http_ms": summary(searched.http_ms),
        "http_overhead_ms": summary(diffs),
        "search_http_under_load_ms": summary(under_load), "under_load_writes": writes,
        "add_inproc": add_local, "add_http": add_remote,
        "other_processes_cpu_cores": phases.load,
    }


# --- report --------------------------------------------------------------------------------------------------------


def machine_info() -> dict[str, Any]:
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())
    mem_kb = next((int(line.split()[1]) for line in Path("/proc/meminfo").read_text().splitlines()
                   if line.startswith("MemTotal")), 0)
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=BENCH_DIR, capture_output=True,
                                text=True, check=False).stdout.strip()
        dirty = bool(subprocess.run(["git", "status", "--porcelain", "--", "src"], cwd=BENCH_DIR,
                                    capture_output=True, text=True, check=False).stdout.strip())
    except OSError:
        commit, dirty = "", False
    import sqlite3

    import jiyi

    return {"cpu": cpu, "cores": os.cpu_count(), "memory_gb": round(mem_kb / 2**20, 1),
            "platform": platform.platform(), "python": platform.python_version(), "numpy": np.__version__,
            "sqlite": sqlite3.sqlite_version, "jiyi": jiyi.__version__, "jiyi_imported_from": jiyi.__file__,
            "git_commit": commit, "src_uncommitted_changes": dirty}


def fmt(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


LEGEND = (
    "Times in ms. scope = memories of the searched user; file = all users. cold 1st = first search after opening "
    "the store (loads the scope's vectors). embed / vector / keyword / df / load = time in embed_query / "
    "store.vector_search / store.keyword_search / store.document_frequencies / store.get_many (recall paths may "
    "overlap); rest = time in none of them (segmentation, coverage, fusion, record->dict, thread hops). "
    "add = Memory.add / POST /memories, 100 messages per call, infer=False, embedding included. "
    "bulk insert = store.insert with precomputed vectors. "
    "other load = CPU cores that other processes on the machine kept busy during the search / add phases."
)


def other_load(result: dict[str, Any]) -> str:
    load = result["other_processes_cpu_cores"]
    adds = max(load["add_inproc"]["during"], load["add_http"]["during"])
    search = max(load["search_inproc"]["during"], load["search_http"]["during"])
    return f"{search:.2f} / {adds:.2f}"


def markdown(results: Sequence[dict[str, Any]]) -> str:
    head = ("| embedder | scope / file | cold 1st | in-proc p50 / p99 | embed p50 | vector p50 | keyword p50 / p99 "
            "| df p50 | load p50 | rest p50 | HTTP p50 / p99 | HTTP overhead p50 | add in-proc | add HTTP "
            "| bulk insert | other load |")
    lines = [head, "|" + "---|" * 16]
    for r in results:
        s, h, p, o = r["search_inproc_ms"], r["search_http_ms"], r["search_inproc_parts_ms"], r["http_overhead_ms"]
        lines.append(
            f"| {r['embedder']} | {r['memories_in_scope']:,} / {r['memories_in_file']:,} "
            f"| {fmt(r['cold_first_search_ms'])} | {fmt(s['p50'])} / {fmt(s['p99'])} | {fmt(p['embed']['p50'])} "
            f"| {fmt(p['vector']['p50'])} | {fmt(p['keyword']['p50'])} / {fmt(p['keyword']['p99'])} "
            f"| {fmt(p['keyword_df']['p50'])} | {fmt(p['load_records']['p50'])} | {fmt(p['rest']['p50'])} "
            f"| {fmt(h['p50'])} / {fmt(h['p99'])} "
            f"| {fmt(o['p50'])} | {r['add_inproc']['memories_per_s']:.0f}/s | {r['add_http']['memories_per_s']:.0f}/s "
            f"| {r['bulk_insert']['rows_per_s']:.0f}/s | {other_load(r)} |")
    for r in results:
        u, h = r["search_http_under_load_ms"], r["search_http_ms"]
        lines.append(f"\n{r['embedder']} @ {r['size']:,}: HTTP search p50 / p99 idle {fmt(h['p50'])} / "
                     f"{fmt(h['p99'])}, while passages are embedded {fmt(u['p50'])} / {fmt(u['p99'])} ms "
                     f"({r['under_load_writes']['memories_per_s_during_searches']:.0f} memories/s added meanwhile)")
    lines.append("")
    lines.append(LEGEND)
    return "\n".join(lines)


def target_check(results: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each target against each embedder at the 10k scope (or the nearest size run); add at every size."""
    checks = []
    for r in results:
        near_10k = min({x["size"] for x in results if x["embedder"] == r["embedder"]}, key=lambda s: abs(s - 10_000))
        items = [("add_memories_per_s", r["add_inproc"]["memories_per_s"], True)]
        if r["size"] == near_10k:
            items += [("search_p50_ms", r["search_inproc_ms"]["p50"], False),
                      ("search_p99_ms", r["search_inproc_ms"]["p99"], False),
                      ("http_overhead_ms", r["http_overhead_ms"]["p50"], False),
                      ("search_http_p99_ms", r["search_http_ms"]["p99"], False),
                      ("under_load_p99_ratio",
                       round(r["search_http_under_load_ms"]["p99"] / r["search_http_ms"]["p99"], 2), False)]
        for target, value, higher_is_better in items:
            goal = TARGETS[target]
            ok = value >= goal if higher_is_better else value <= goal
            checks.append({"embedder": r["embedder"], "size": r["size"], "target": target, "goal": goal,
                           "measured": value, "met": ok, "ratio": round(value / goal, 2)})
    return checks


def markdown_targets(checks: Sequence[dict[str, Any]]) -> str:
    lines = ["| embedder | size | target | goal | measured | met |", "|---|---|---|---|---|---|"]
    for c in checks:
        lines.append(f"| {c['embedder']} | {c['size']:,} | {c['target']} | {c['goal']:g} | {c['measured']:g} "
                     f"| {'yes' if c['met'] else 'NO (x' + str(c['ratio']) + ')'} |")
    return "\n".join(lines)


METHOD = {
    "layout": f"S memories of '{MAIN_USER}' + {OTHER_FRACTION:.0%} of S over {OTHER_USERS} other users, interleaved",
    "fill": "store.insert with vectors cached in bench/.cache (real vectors of the same embedder), "
            f"{INSERT_CHUNK} rows per transaction",
    "cold_first_search_ms": "first Memory.search after reopening the store (scope vectors loaded from SQLite)",
    "search_inproc_ms": f"wall time of Memory.search(top_k={TOP_K}, explain=True), each query once, after "
                        f"{WARMUP_QUERIES} distinct warm-up queries; query embedding included",
    "search_inproc_parts_ms": "time inside embedder.embed_query, store.vector_search, store.keyword_search, "
                              "store.document_frequencies (keyword_df), store.get_many (methods wrapped with "
                              "timers during the run); rest: wall time when none of them ran (segmentation, "
                              "coverage, fusion, record->dict, thread hops). Parts may overlap (recall paths run in "
                              "parallel), so they need not sum to the total",
    "search_inproc_library_timings_ms": "score_details.timings_ms of the top hit, as the library reports it",
    "search_http_ms": "POST /search, the same queries after the in-process phase, real uvicorn in a separate "
                      "process on 127.0.0.1, keep-alive httpx client, response JSON parsed",
    "http_overhead_ms": "per-query difference HTTP - in process (paired by query)",
    "search_http_under_load_ms": f"POST /search, the same queries again, while {LOAD_WRITERS} other users each add "
                                 f"{LOAD_BATCH} messages per POST /memories (infer=false) back to back to the same "
                                 "server (writers start 1 s before the first query)",
    "add": f"fresh texts, {ADD_BATCH} messages per Memory.add / POST /memories call, infer=False, after the "
           "searches, into the same scope; memories_per_s = messages / summed call wall time",
}


# --- main ----------------------------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000", help="memories in the searched scope")
    parser.add_argument("--embedders", default="e5,use")
    parser.add_argument("--out", default=str(BENCH_DIR / "results" / "scale.json"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--queries", type=int, default=200, help="distinct measured queries")
    parser.add_argument("--add-batches", type=int, default=5, help=f"{ADD_BATCH}-message calls per add measurement")
    parser.add_argument("--workdir", default=None, help="where the SQLite files go (default: a temp dir, removed)")
    parser.add_argument("--note", default="", help="free text stored in the JSON (e.g. which source was measured)")
    parser.add_argument("--quiet-wait", type=float, default=0.0,
                        help="before each phase, wait up to this many seconds for other processes to go quiet")
    parser.add_argument("--baseline", metavar="REV", help="also measure this commit, interleaved (see the docstring)")
    parser.add_argument("--rounds", type=int, default=2, help="with --baseline: rounds per side and size")
    return parser.parse_args(argv)


LATENCIES = ("search_inproc", "search_http", "search_http_under_load")


def compare_with_baseline(args: argparse.Namespace) -> int:
    """Run this harness on this tree and on --baseline REV (PYTHONPATH), alternating, and report the ratios."""
    sides = {"head": str(BENCH_DIR.parent / "src")}
    folder = Path(tempfile.mkdtemp(prefix="jiyi-scale-baseline-"))
    subprocess.run(["git", "worktree", "add", "--detach", "-q", str(folder), args.baseline], check=True,
                   cwd=BENCH_DIR.parent)
    sides["baseline"] = str(folder / "src")
    runs: list[dict[str, Any]] = []
    try:
        for size in sorted(int(s) for s in args.sizes.split(",")):
            for index in range(args.rounds):
                for side in (sides if index % 2 == 0 else dict(reversed(sides.items()))):
                    out = folder / f"{side}-{size}-{index}.json"
                    command = [sys.executable, __file__, "--sizes", str(size), "--embedders", args.embedders,
                               "--out", str(out), "--seed", str(args.seed), "--queries", str(args.queries),
                               "--add-batches", str(args.add_batches), "--quiet-wait", str(args.quiet_wait)]
                    log(f"{side} ({args.baseline if side == 'baseline' else 'this tree'}), {size} memories, "
                        f"round {index + 1}")
                    subprocess.run(command, check=True, env={**os.environ, "PYTHONPATH": sides[side]})
                    for result in json.loads(out.read_text())["results"]:
                        runs.append({"side": side, "round": index + 1, **result})
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(folder)], check=False, cwd=BENCH_DIR.parent)
    ratios = []
    for size in sorted({r["size"] for r in runs}):
        row: dict[str, Any] = {"size": size}
        for phase in LATENCIES:
            for stat in ("p50", "p99"):
                values = {side: statistics.median(r[f"{phase}_ms"][stat] for r in runs
                                                  if r["side"] == side and r["size"] == size)
                          for side in sides}
                row[f"{phase}_{stat}_ms"] = {**{k: round(v, 2) for k, v in values.items()},
                                             "head_vs_baseline": round(values["head"] / values["baseline"], 3)}
        ratios.append(row)
    report = {"date": datetime.now(UTC).isoformat(timespec="seconds"), "machine": machine_info(), "args": vars(args),
              "baseline": args.baseline, "ratios": ratios, "runs": runs}
    Path(args.out).write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n")
    for row in ratios:
        print(f"{row['size']} memories: " + "; ".join(
            f"{phase} p50 {row[f'{phase}_p50_ms']['head']} / {row[f'{phase}_p50_ms']['baseline']} ms "
            f"({row[f'{phase}_p50_ms']['head_vs_baseline']}x), p99 {row[f'{phase}_p99_ms']['head_vs_baseline']}x"
            for phase in LATENCIES))
    print(f"written: {args.out}")
    return 0


def workload(sizes: Sequence[int], args: argparse.Namespace) -> tuple[list[str], list[str], list[str]]:
    stored = max(int(s * (1 + OTHER_FRACTION)) for s in sizes)
    fresh = args.add_batches * ADD_BATCH
    texts = corpus.memories(stored + 2 * fresh, args.seed)
    measured = corpus.queries(args.queries, args.seed)
    warmup = [q for q in corpus.queries(args.queries + 50, args.seed, salt="warmup") if q not in set(measured)]
    return texts, measured, warmup[: WARMUP_QUERIES + 1]


def write_report(path: Path, meta: dict[str, Any], results: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    report = {**meta, "targets": TARGETS, "target_check": target_check(results), "results": results}
    path.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n")


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.baseline:
        return compare_with_baseline(args)
    sizes = sorted(int(s) for s in args.sizes.split(","))
    names = [n.strip() for n in args.embedders.split(",") if n.strip()]
    all_texts, queries, warmup = workload(sizes, args)
    stored = max(int(s * (1 + OTHER_FRACTION)) for s in sizes)
    fresh = args.add_batches * ADD_BATCH
    meta = {"date": datetime.now(UTC).isoformat(timespec="seconds"), "machine": machine_info(),
            "args": vars(args), "method": METHOD,
            "corpus": {"version": corpus.CORPUS_VERSION, "seed": args.seed, **corpus.describe(all_texts[:stored])},
            "queries": {**corpus.describe(queries), "sample": queries[:10]}, "vectors": {}}
    out = Path(args.out)
    workdir = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="jiyi-scale-"))
    workdir.mkdir(parents=True, exist_ok=True)
    results: list[dict[str, Any]] = []
    try:
        for name in names:
            embedder = build_embedder(name)
            embedder.embed_documents(["warm-up 预热"])  # load the model now, not inside the first timed call
            embedder.embed_query("warm-up 预热")
            vectors, info = corpus_vectors(name, args.seed, embedder, all_texts[:stored])
            meta["vectors"][name] = info
            work = Workload(all_texts[:stored], vectors, all_texts[stored:stored + fresh],
                            all_texts[stored + fresh:], queries, warmup, args.seed, args.quiet_wait)
            for size in sizes:
                results.append(run_one(name, embedder, size, work, workdir))
                write_report(out, meta, results)
                gc.collect()
    finally:
        if not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    print(markdown(results))
    print()
    print(markdown_targets(target_check(results)))
    print(f"\nwritten: {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
