"""Choose jiyi's default local embedder by numbers: retrieval quality, latency and calibration.

Run from the repository root (in the project's venv):

    python bench/embedders.py                                   # writes bench/results/embedders.json
    python bench/embedders.py --out /tmp/e.json --scale 0       # skip the 10k-memory latency check
    python bench/embedders.py --quiet-wait 300                  # on a shared machine: wait for idle CPUs first

About a minute on 2 cores. Timings are only meaningful on an otherwise idle machine: the JSON records how many cores
other processes used while each embedder ran (`other_processes_cores`).

What it measures, on bench/data/embedder_eval.json (96 memories, 124 queries: zh, en and cross-language):

1. Vector only: every memory is embedded, each query ranks all memories by cosine. hit@1, hit@3 (any relevant in
   the top 3), recall@5 and MRR@10, per query kind and overall; query-embedding latency (p50/p99 after a warm-up)
   and document-embedding throughput (one batch of the 96 memories).
2. Hybrid: the same metrics through jiyi's full search (`Memory` over an in-memory SQLite store: vector + BM25 over
   jieba-segmented text, fused), and its end-to-end latency; then the hybrid quality again with the calibration
   suggested in 3 (document vectors reused), to show what new constants would change.
3. Calibration: cosine between a query and its relevant memories vs. its irrelevant ones (p10/p50/p90, the best
   irrelevant memory per query, ROC AUC), next to the embedder's `calibration` constants, with a suggestion
   (unrelated = p90 of irrelevant cosines, same = p90 of relevant cosines).
4. Scale: end-to-end search latency with `--scale` memories (default 10,000) in one user's scope. The extra memories
   copy the dataset's texts (pessimistic for BM25: every query word matches ~100x more rows) and carry the real
   memory vectors plus small noise, so only the query is embedded by the model.

Everything but the timings is deterministic.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from jiyi import Memory, build_embedder, build_store
from jiyi.embedders.base import Calibration, Embedder, l2_normalize

BENCH_DIR = Path(__file__).resolve().parent
DATA_PATH = BENCH_DIR / "data" / "embedder_eval.json"
DEFAULT_OUT = BENCH_DIR / "results" / "embedders.json"
EMBEDDERS = ("e5", "use", "hashing")
KINDS = ("zh", "en", "cross")
TOP_K = 10  # results looked at per query; MRR is MRR@10 on both paths so they compare
USER = "bench"
WARMUP_QUERIES = 10
SCALE_NOISE = 0.05
SCALE_QUERIES = 60


# --- data -------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Query:
    id: str
    text: str
    kind: str
    relevant: frozenset[str]


@dataclass(frozen=True, slots=True)
class Dataset:
    memory_ids: list[str]
    texts: list[str]
    queries: list[Query]


def load_dataset(path: Path) -> Dataset:
    raw = json.loads(path.read_text(encoding="utf-8"))
    queries = [Query(q["id"], q["query"], q["kind"], frozenset(q["relevant"])) for q in raw["queries"]]
    return Dataset([m["id"] for m in raw["memories"]], [m["text"] for m in raw["memories"]], queries)


# --- metrics ----------------------------------------------------------------------------------------------------


def rank_metrics(ranked: Sequence[str], relevant: frozenset[str]) -> dict[str, float]:
    """Metrics of one ranked list of memory ids (best first) against the query's relevant ids."""
    first = next((i for i, mid in enumerate(ranked[:TOP_K]) if mid in relevant), None)
    return {
        "hit@1": float(first == 0),
        "hit@3": float(first is not None and first < 3),
        "recall@5": len(relevant.intersection(ranked[:5])) / len(relevant),
        "mrr@10": 0.0 if first is None else 1.0 / (first + 1),
    }


def aggregate(queries: Sequence[Query], per_query: Sequence[dict[str, float]]) -> dict[str, dict[str, float]]:
    """Mean of each metric per query kind and overall, with the query count as `n`."""
    groups: dict[str, list[dict[str, float]]] = {kind: [] for kind in (*KINDS, "all")}
    for query, metrics in zip(queries, per_query, strict=True):
        groups.setdefault(query.kind, []).append(metrics)
        groups["all"].append(metrics)
    out: dict[str, dict[str, float]] = {}
    for kind, rows in groups.items():
        if rows:
            out[kind] = {name: round(statistics.fmean(r[name] for r in rows), 4) for name in rows[0]}
            out[kind]["n"] = len(rows)
    return out


def percentiles(values: Iterable[float], points: Sequence[int] = (50, 99)) -> dict[str, float]:
    array = np.asarray(list(values), dtype=np.float64)
    return {f"p{p}": round(float(np.percentile(array, p)), 4) for p in points}


def latency_summary(seconds: Sequence[float]) -> dict[str, float]:
    ms = [s * 1000 for s in seconds]
    return {**percentiles(ms, (50, 99)), "mean": round(statistics.fmean(ms), 4), "n": len(ms)}


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    started = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - started


# --- 1. vector only ---------------------------------------------------------------------------------------------


def doc_throughput(embedder: Embedder, texts: list[str], rounds: int) -> tuple[np.ndarray, float]:
    """Document vectors and docs/s (median of `rounds` batches of all texts, after one warm-up batch)."""
    matrix = embedder.embed_documents(texts[:8])
    times = []
    for _ in range(rounds):
        matrix, seconds = timed(lambda: embedder.embed_documents(texts))
        times.append(seconds)
    return np.asarray(matrix, dtype=np.float32), round(len(texts) / statistics.median(times), 2)


def query_vectors(embedder: Embedder, queries: Sequence[Query], rounds: int) -> tuple[np.ndarray, list[float]]:
    """Query vectors (from the first round) and every timed call, after a warm-up."""
    for query in queries[:WARMUP_QUERIES]:
        embedder.embed_query(query.text)
    vectors: list[np.ndarray] = []
    times: list[float] = []
    for round_no in range(rounds):
        for query in queries:
            vector, seconds = timed(partial(embedder.embed_query, query.text))
            times.append(seconds)
            if round_no == 0:
                vectors.append(vector)
    return np.stack(vectors).astype(np.float32), times


def cosine_rankings(doc_matrix: np.ndarray, query_matrix: np.ndarray, memory_ids: list[str]) -> list[list[str]]:
    """Memory ids per query, best first; ties break on dataset order (stable sort)."""
    scores = query_matrix @ doc_matrix.T
    return [[memory_ids[i] for i in np.argsort(-row, kind="stable")] for row in scores]


def bench_vector(embedder: Embedder, data: Dataset, rounds: int) -> tuple[dict[str, Any], np.ndarray, np.ndarray]:
    """Quality and speed of cosine ranking; also the document and query vectors, for the later sections."""
    doc_matrix, throughput = doc_throughput(embedder, data.texts, rounds)
    query_matrix, times = query_vectors(embedder, data.queries, rounds)
    rankings = cosine_rankings(doc_matrix, query_matrix, data.memory_ids)
    per_query = [rank_metrics(r, q.relevant) for r, q in zip(rankings, data.queries, strict=True)]
    result = {
        "quality": aggregate(data.queries, per_query),
        "query_latency_ms": latency_summary(times),
        "doc_throughput_per_s": throughput,
    }
    return result, doc_matrix, query_matrix


# --- 2. hybrid search -------------------------------------------------------------------------------------------


def filled_memory(embedder: Embedder, texts: list[str]) -> tuple[Memory, list[str]]:
    """A Memory over an in-memory SQLite store holding `texts` for one user, and the ids it gave them, in order."""
    memory = Memory(build_store("sqlite://:memory:"), embedder)
    ids: list[str] = []
    for start in range(0, len(texts), 1000):
        chunk = [{"role": "user", "content": t} for t in texts[start:start + 1000]]
        ids.extend(r["id"] for r in memory.add(chunk, user_id=USER, infer=False)["results"])
    if len(ids) != len(texts):
        raise RuntimeError(f"stored {len(ids)} memories for {len(texts)} texts")
    return memory, ids


@dataclass(slots=True)
class SearchRun:
    results: list[list[str]]  # memory ids per query, first round
    seconds: list[float]  # every timed search
    timings_ms: dict[str, list[float]]  # jiyi's own per-stage timings (explain=True), every timed search

    def stage_p50(self) -> dict[str, float]:
        return {name: round(statistics.median(values), 4) for name, values in sorted(self.timings_ms.items())}


def timed_searches(memory: Memory, queries: Sequence[Query], rounds: int) -> SearchRun:
    """Search every query `rounds` times after a warm-up, with explain=True to get jiyi's per-stage timings."""
    for query in queries[:WARMUP_QUERIES]:
        memory.search(query.text, user_id=USER, top_k=TOP_K)
    run = SearchRun([], [], {})
    for round_no in range(rounds):
        for query in queries:
            answer, seconds = timed(partial(memory.search, query.text, user_id=USER, top_k=TOP_K, explain=True))
            found = answer["results"]
            run.seconds.append(seconds)
            if round_no == 0:
                run.results.append([hit["id"] for hit in found])
            stages = found[0].get("score_details", {}).get("timings_ms", {}) if found else {}
            for name, value in stages.items():
                run.timings_ms.setdefault(name, []).append(float(value))
    return run


def bench_hybrid(embedder: Embedder, data: Dataset, rounds: int) -> dict[str, Any]:
    memory, stored_ids = filled_memory(embedder, data.texts)
    try:
        to_dataset = dict(zip(stored_ids, data.memory_ids, strict=True))
        run = timed_searches(memory, data.queries, rounds)
    finally:
        memory.close()
    per_query = [rank_metrics([to_dataset[i] for i in r], q.relevant)
                 for r, q in zip(run.results, data.queries, strict=True)]
    return {"quality": aggregate(data.queries, per_query), "search_latency_ms": latency_summary(run.seconds),
            "stage_p50_ms": run.stage_p50()}


class PrecomputedEmbedder:
    """Embeds queries with the real model but hands out prepared document vectors, in order (cheap to fill a big
    store); optionally with another calibration, to see what new constants would do to hybrid search."""

    def __init__(self, inner: Embedder, documents: np.ndarray, calibration: Calibration | None = None) -> None:
        self.model_id, self.dims = inner.model_id, inner.dims
        self.calibration = calibration or inner.calibration
        self._inner = inner
        self._documents = documents
        self._next = 0

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        out = self._documents[self._next:self._next + len(texts)]
        if out.shape[0] != len(texts):
            raise RuntimeError("PrecomputedEmbedder ran out of prepared vectors")
        self._next += len(texts)
        return out

    def embed_query(self, text: str) -> np.ndarray:
        return self._inner.embed_query(text)


def bench_recalibrated(embedder: Embedder, doc_matrix: np.ndarray, suggested: dict[str, float],
                       data: Dataset) -> dict[str, Any]:
    """Hybrid quality with the suggested calibration constants (one round; its timings are not reported)."""
    calibration = Calibration(unrelated=suggested["unrelated"], same=suggested["same"])
    result = bench_hybrid(PrecomputedEmbedder(embedder, doc_matrix, calibration), data, rounds=1)
    return {"calibration": suggested, "quality": result["quality"]}


# --- 3. calibration ---------------------------------------------------------------------------------------------


def roc_auc(positive: np.ndarray, negative: np.ndarray) -> float:
    """Probability that a relevant pair has a higher cosine than an irrelevant one (ties count half)."""
    ordered = np.sort(negative)
    below = np.searchsorted(ordered, positive, side="left")
    not_above = np.searchsorted(ordered, positive, side="right")
    return float(np.mean((below + not_above) / 2) / len(negative))


def relevance_share(calibration: Calibration, cosines: np.ndarray) -> float:
    """Fraction of pairs the calibration maps to a relevance above zero."""
    return float(np.mean([calibration.relevance(float(c)) > 0 for c in cosines]))


def bench_calibration(calibration: Calibration, scores: np.ndarray, data: Dataset) -> dict[str, Any]:
    relevant_mask = np.array([[mid in q.relevant for mid in data.memory_ids] for q in data.queries])
    relevant, irrelevant = scores[relevant_mask], scores[~relevant_mask]
    best_irrelevant = np.where(relevant_mask, -np.inf, scores).max(axis=1)
    rel_p = percentiles(relevant, (10, 50, 90))
    irr_p = percentiles(irrelevant, (10, 50, 90))
    suggested = Calibration(unrelated=round(irr_p["p90"], 2), same=round(rel_p["p90"], 2))
    return {
        "current": {"unrelated": calibration.unrelated, "same": calibration.same},
        "relevant_cosine": rel_p,
        "irrelevant_cosine": irr_p,
        "best_irrelevant_per_query": percentiles(best_irrelevant, (50, 90)),
        "roc_auc": round(roc_auc(relevant, irrelevant), 4),
        "suggested": {"unrelated": suggested.unrelated, "same": suggested.same},
        "relevance_above_zero": {
            "current": {"relevant": round(relevance_share(calibration, relevant), 4),
                        "irrelevant": round(relevance_share(calibration, irrelevant), 4)},
            "suggested": {"relevant": round(relevance_share(suggested, relevant), 4),
                          "irrelevant": round(relevance_share(suggested, irrelevant), 4)},
        },
    }


# --- 4. latency at scale ----------------------------------------------------------------------------------------


def scaled_corpus(texts: list[str], doc_matrix: np.ndarray, size: int) -> tuple[list[str], np.ndarray]:
    """`size` memories: the dataset repeated, each copy's vector jittered by seeded noise and re-normalized."""
    picks = np.arange(size) % len(texts)
    noise = np.random.default_rng(0).normal(0.0, SCALE_NOISE / np.sqrt(doc_matrix.shape[1]),
                                            (size, doc_matrix.shape[1]))
    return [texts[i] for i in picks], l2_normalize(doc_matrix[picks] + noise)


def bench_scale(embedder: Embedder, doc_matrix: np.ndarray, data: Dataset, size: int) -> dict[str, Any]:
    texts, vectors = scaled_corpus(data.texts, doc_matrix, size)
    (memory, _), fill_seconds = timed(lambda: filled_memory(PrecomputedEmbedder(embedder, vectors), texts))
    try:
        run = timed_searches(memory, data.queries[:SCALE_QUERIES], rounds=1)
    finally:
        memory.close()
    return {"memories": size, "fill_s": round(fill_seconds, 2), "search_latency_ms": latency_summary(run.seconds),
            "stage_p50_ms": run.stage_p50()}


# --- machine load -----------------------------------------------------------------------------------------------


def machine_busy_s() -> float | None:
    """CPU seconds all processes have used since boot (Linux /proc/stat), or None where that is not readable."""
    try:
        fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except (OSError, ValueError):
        return None
    busy_ticks = sum(fields[:3]) + sum(fields[5:8])  # user nice system (idle iowait) irq softirq steal
    return busy_ticks / os.sysconf("SC_CLK_TCK")


class ForeignLoad:
    """How many cores other processes kept busy since creation: the machine's CPU time minus this process's."""

    def __init__(self) -> None:
        self.wall, self.busy, self.own = time.perf_counter(), machine_busy_s(), time.process_time()

    def cores(self) -> float | None:
        busy = machine_busy_s()
        if busy is None or self.busy is None:
            return None
        other = busy - self.busy - (time.process_time() - self.own)
        return round(max(other, 0.0) / max(time.perf_counter() - self.wall, 1e-9), 2)


def wait_for_quiet(max_wait_s: float, threshold: float = 0.3) -> float | None:
    """Wait up to max_wait_s until other processes use fewer than `threshold` cores; return the last reading."""
    deadline = time.monotonic() + max_wait_s
    while True:
        meter = ForeignLoad()
        time.sleep(1.0)
        load = meter.cores()
        if load is None or load < threshold or time.monotonic() > deadline:
            return load
        print(f"machine busy ({load:.2f} cores used by other processes), waiting", file=sys.stderr)
        time.sleep(4.0)


# --- driver -----------------------------------------------------------------------------------------------------


def bench_embedder(name: str, data: Dataset, rounds: int, scale: int, quiet_wait_s: float) -> dict[str, Any]:
    quiet_before = wait_for_quiet(quiet_wait_s) if quiet_wait_s > 0 else None
    load = ForeignLoad()
    embedder, load_seconds = timed(lambda: build_embedder(name))
    vector, doc_matrix, query_matrix = bench_vector(embedder, data, rounds)
    calibration = bench_calibration(embedder.calibration, query_matrix @ doc_matrix.T, data)
    result: dict[str, Any] = {
        "model_id": embedder.model_id,
        "dims": embedder.dims,
        "load_s": round(load_seconds, 3),
        "vector": vector,
        "hybrid": bench_hybrid(embedder, data, rounds),
        "hybrid_recalibrated": bench_recalibrated(embedder, doc_matrix, calibration["suggested"], data),
        "calibration": calibration,
    }
    if scale:
        result["scale"] = bench_scale(embedder, doc_matrix, data, scale)
    result["other_processes_cores"] = {"before": quiet_before, "during": load.cores()}
    return result


def machine_info() -> dict[str, Any]:
    return {
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(),
        "numpy": np.__version__,
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
    }


def run(names: Sequence[str], data_path: Path, rounds: int, scale: int, quiet_wait_s: float) -> dict[str, Any]:
    data = load_dataset(data_path)
    started = time.perf_counter()
    embedders = {name: bench_embedder(name, data, rounds, scale, quiet_wait_s) for name in names}
    kinds = {kind: sum(q.kind == kind for q in data.queries) for kind in KINDS}
    return {
        "machine": machine_info(),
        "dataset": {"path": str(data_path.relative_to(BENCH_DIR.parent)) if data_path.is_relative_to(BENCH_DIR.parent)
                    else str(data_path), "memories": len(data.texts), "queries": len(data.queries), "by_kind": kinds},
        "settings": {"top_k": TOP_K, "rounds": rounds, "warmup_queries": WARMUP_QUERIES, "scale": scale,
                     "scale_queries": SCALE_QUERIES, "quiet_wait_s": quiet_wait_s},
        "embedders": embedders,
        "elapsed_s": round(time.perf_counter() - started, 1),
    }


# --- report -----------------------------------------------------------------------------------------------------


def table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


SEARCH_LABELS = {"vector": "vector", "hybrid": "hybrid", "hybrid_recalibrated": "hybrid, suggested cal."}
QUALITY_COLUMNS = ("all", *KINDS)


def quality_cell(metrics: dict[str, float] | None) -> str:
    if metrics is None:
        return "—"
    return " / ".join(f"{metrics[name]:.2f}" for name in ("hit@1", "hit@3", "recall@5", "mrr@10"))


def quality_rows(results: dict[str, Any]) -> Iterable[list[Any]]:
    for name, res in results["embedders"].items():
        for path, label in SEARCH_LABELS.items():
            quality = res[path]["quality"]
            yield [name, label, *(quality_cell(quality.get(kind)) for kind in QUALITY_COLUMNS)]


def stages(res: dict[str, Any]) -> str:
    return ", ".join(f"{k.removesuffix('_ms')} {v:.1f}" for k, v in res.get("stage_p50_ms", {}).items()) or "—"


def speed_rows(results: dict[str, Any]) -> Iterable[list[Any]]:
    nan = {"p50": float("nan"), "p99": float("nan")}
    for name, res in results["embedders"].items():
        q, h = res["vector"]["query_latency_ms"], res["hybrid"]["search_latency_ms"]
        s = res.get("scale", {}).get("search_latency_ms", nan)
        other = res.get("other_processes_cores", {}).get("during")
        yield [name, res["dims"], f"{q['p50']:.2f}", f"{q['p99']:.2f}", f"{res['vector']['doc_throughput_per_s']:.0f}",
               f"{h['p50']:.2f}", f"{h['p99']:.2f}", f"{s['p50']:.2f}", f"{s['p99']:.2f}", stages(res.get("scale", {})),
               "?" if other is None else f"{other:.2f}"]


def calibration_rows(results: dict[str, Any]) -> Iterable[list[Any]]:
    def triple(p: dict[str, float]) -> str:
        return f"{p['p10']:.2f} / {p['p50']:.2f} / {p['p90']:.2f}"

    for name, res in results["embedders"].items():
        c = res["calibration"]
        best = c["best_irrelevant_per_query"]
        yield [name, f"{c['current']['unrelated']:.2f} → {c['current']['same']:.2f}", triple(c["relevant_cosine"]),
               triple(c["irrelevant_cosine"]), f"{best['p50']:.2f} / {best['p90']:.2f}", f"{c['roc_auc']:.3f}",
               f"{c['suggested']['unrelated']:.2f} → {c['suggested']['same']:.2f}"]


def markdown(results: dict[str, Any]) -> str:
    m = results["machine"]
    scale = results["settings"]["scale"] or "—"
    return "\n\n".join([
        f"## Embedder benchmark ({m['date']}, Python {m['python']}, {m['cpu_count']} CPUs, "
        f"{results['dataset']['memories']} memories, {results['dataset']['queries']} queries)",
        "### Retrieval quality: hit@1 / hit@3 / recall@5 / MRR@10\n\n"
        "vector = cosine only; hybrid = jiyi `Memory.search` (vector + BM25 over jieba words, fused); "
        "suggested cal. = hybrid with the calibration suggested below.",
        table(["embedder", "search", *(f"{k} (n={results['dataset']['by_kind'].get(k, results['dataset']['queries'])})"
                                       for k in QUALITY_COLUMNS)], quality_rows(results)),
        f"### Speed (ms; search = end-to-end `Memory.search`, top_k={TOP_K}; scale = {scale} memories in one scope, "
        "with jiyi's own stage timings p50)",
        table(["embedder", "dims", "query p50", "query p99", "docs/s", "search p50", "search p99", "scale p50",
               "scale p99", "scale stages p50", "other procs (cores)"], speed_rows(results)),
        "### Calibration (cosine p10 / p50 / p90; suggested = irrelevant p90 → relevant p90)",
        table(["embedder", "current", "relevant", "irrelevant", "best irrelevant/query p50 / p90", "AUC",
               "suggested"], calibration_rows(results)),
    ])


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where to write the JSON results")
    parser.add_argument("--data", type=Path, default=DATA_PATH, help="evaluation set (memories + queries)")
    parser.add_argument("--embedders", nargs="+", default=list(EMBEDDERS), help="embedder specs to compare")
    parser.add_argument("--rounds", type=int, default=3, help="timed passes over the queries / documents")
    parser.add_argument("--scale", type=int, default=10_000, help="memories for the latency-at-scale check; 0 skips")
    parser.add_argument("--quiet-wait", type=float, default=0.0,
                        help="before each embedder, wait up to this many seconds for other processes to go quiet")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    results = run(args.embedders, args.data.resolve(), max(args.rounds, 1), max(args.scale, 0), args.quiet_wait)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    print(markdown(results))
    print(f"\nwrote {args.out} in {results['elapsed_s']} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
