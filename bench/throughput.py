"""What a search costs beside what the model costs, in one run on one machine: the bare e5 model's query rate (one at a
time, and in batches: the limit), jiyi's HTTP search rate under closed-loop clients at several store sizes, the server's
CPU per search with the model's own share taken out, and the idle p99 — all beside each other, and, with `--baseline
REV`, the same for another commit's server on a copy of the same store, in interleaved rounds.

    .venv/bin/python bench/throughput.py                        # HEAD: 2k and 10k memories, 8 and 64 clients
    .venv/bin/python bench/throughput.py --baseline HEAD~1      # the gate: this change against the commit before
    .venv/bin/python bench/throughput.py --memories 2000 --clients 8 --seconds 10 --rounds 1   # a quick look

The gate (docs/benchmarks.md, "Throughput"): every change to the read path, core/ or stores/ runs
`--baseline <the commit before>` and says the ratio in its commit message; a drop of more than 10 %
is fixed before it lands.

How:
- The model is measured in a process of its own (`--model-rates`), before and after the servers' rounds: the
  sequential rate, batches of 8 and 32, and its CPU per query at batch sizes 1-32 (process CPU time).
- Each store size is seeded once (memory_text(0..N-1) for one user, infer=false, in requests of 50 memories) by the
  oldest server measured, and cached in .cache/throughput/; every server gets a copy of the file (a newer one
  migrates it forward).
- Rounds interleave the servers (A B, then B A, …) so that machine noise hits both; the driver is bench/http_load.py
  (the side-by-side's: two random words, top_k 5).
- CPU outside the model per search = the server's CPU seconds in the round / searches − the model's CPU per query at
  the batch size the server's queries got (its /metrics: memory_embedding_texts / _model_calls, kind=query), read
  from the bare model's curve. A server without those metrics (an older commit) gets its batch size assumed 1.
- The idle p99: one client, one search after another, at the largest store.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import math
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from http_load import WORDS, ServerProcess, free_port, machine, memory_text, run_load
from report import write_report

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".cache" / "throughput"
RESULTS = ROOT / "bench" / "results"
BATCH_SIZES = (1, 2, 4, 8, 16, 32)
SEED_PER_REQUEST = 50


# --- the bare model ------------------------------------------------------------------------------------------------

def measure_model(seconds: float) -> dict[str, Any]:
    """The e5 model alone, in this process: queries one after another, and batches (texts are the driver's)."""
    from jiyi.embedders import build_embedder

    model = build_embedder("e5")
    words = random.Random(7)

    def query() -> str:
        return f"{words.choice(WORDS)} {words.choice(WORDS)}"

    for _ in range(30):  # warm: the engine's buffers and thread team
        model.embed_query(query())
    latencies: list[float] = []
    started, cpu = time.perf_counter(), time.process_time()
    while time.perf_counter() - started < seconds:
        began = time.perf_counter()
        model.embed_query(query())
        latencies.append((time.perf_counter() - began) * 1000)
    elapsed = time.perf_counter() - started
    result: dict[str, Any] = {
        "single": {"queries_per_s": round(len(latencies) / elapsed, 1),
                   "p50_ms": round(statistics.median(latencies), 2),
                   "p99_ms": round(sorted(latencies)[int(0.99 * (len(latencies) - 1))], 2),
                   "cpu_ms_per_query": round((time.process_time() - cpu) * 1000 / len(latencies), 2)}}
    curve: dict[str, dict[str, float]] = {}
    for size in BATCH_SIZES:
        done, started, cpu = 0, time.perf_counter(), time.process_time()
        while time.perf_counter() - started < seconds / 3 or done < 4 * size:
            model.embed_queries([query() for _ in range(size)])
            done += size
        elapsed = time.perf_counter() - started
        curve[str(size)] = {"queries_per_s": round(done / elapsed, 1),
                       "cpu_ms_per_query": round((time.process_time() - cpu) * 1000 / done, 2)}
    result["batches"] = curve
    return result


def model_rates(seconds: float) -> dict[str, Any]:
    """measure_model in a fresh process, so that its thread team is not the servers' and ends with it."""
    out = subprocess.run([sys.executable, __file__, "--model-rates", str(seconds)], capture_output=True, text=True,
                         check=True, cwd=ROOT)
    return json.loads(out.stdout.strip().splitlines()[-1])


def model_cpu_ms(model: dict[str, Any], batch: float) -> float:
    """The model's CPU per query at a (mean) batch size, interpolated on log2(batch) between measured sizes."""
    curve = sorted((int(size), values["cpu_ms_per_query"]) for size, values in model["batches"].items())
    batch = min(max(batch, curve[0][0]), curve[-1][0])
    for (low, low_ms), (high, high_ms) in itertools.pairwise(curve):
        if batch <= high:
            share = (math.log2(batch) - math.log2(low)) / (math.log2(high) - math.log2(low))
            return low_ms + share * (high_ms - low_ms)
    return curve[-1][1]


# --- servers -------------------------------------------------------------------------------------------------------

def commit_of(rev: str) -> str:
    return subprocess.run(["git", "rev-parse", "--short", rev], capture_output=True, text=True, check=True,
                          cwd=ROOT).stdout.strip()


@contextmanager
def checkout(rev: str | None) -> Iterator[Path]:
    """The src/ folder of `rev` (a temporary worktree), or of this working tree for None."""
    if rev is None:
        yield ROOT / "src"
        return
    folder = Path(tempfile.mkdtemp(prefix="jiyi-baseline-"))
    subprocess.run(["git", "worktree", "add", "--detach", "-q", str(folder), rev], check=True, cwd=ROOT)
    try:
        yield folder / "src"
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(folder)], check=False, cwd=ROOT)


def server(name: str, src: Path, home: Path) -> ServerProcess:
    """`jiyi serve` from the code in `src` (first on the path, before the installed package), on `home`."""
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(src), "JIYI_LOG_LEVEL": "warning", "JIYI_MAINTENANCE_INTERVAL": "0"}
    return ServerProcess([sys.executable, "-m", "jiyi", "serve", "--home", str(home), "--port", str(port)], port,
                         env=env, cwd=home, name=name)


async def seed_bulk(url: str, n: int, user_id: str = "load") -> None:
    async with httpx.AsyncClient(base_url=url, timeout=600, trust_env=False) as http:
        for start in range(0, n, SEED_PER_REQUEST):
            chunk = range(start, min(n, start + SEED_PER_REQUEST))
            messages = [{"role": "user", "content": memory_text(i)} for i in chunk]
            response = await http.post("/memories", json={"messages": messages, "user_id": user_id, "infer": False})
            response.raise_for_status()


def _is_ancestor(older: str, newer: str) -> bool:
    return subprocess.run(["git", "merge-base", "--is-ancestor", older, newer], capture_output=True,
                          cwd=ROOT).returncode == 0


def seeded_store(n: int, seeder: str, src: Path) -> Path:
    """A store file with memory_text(0..n-1) for user "load", made by the server of `seeder` (cached). A store
    seeded by an ancestor of `seeder` serves as well: every later commit opens it (its migrations are appended), and
    seeding 10k memories takes minutes."""
    cached = CACHE / f"seed-{seeder}-{n}.db"
    if cached.exists():
        return cached
    for older in sorted(CACHE.glob(f"seed-*-{n}.db")):
        if _is_ancestor(older.name.removeprefix("seed-").removesuffix(f"-{n}.db"), seeder):
            return older
    CACHE.mkdir(parents=True, exist_ok=True)
    home = Path(tempfile.mkdtemp(prefix="jiyi-seed-"))
    try:
        with server(f"seed-{n}", src, home) as seeding:
            started = time.perf_counter()
            asyncio.run(seed_bulk(seeding.url, n))
            print(f"seeded {n} memories with {seeder} in {time.perf_counter() - started:.0f} s", flush=True)
        shutil.copy(home / "memory.db", cached.with_suffix(".tmp"))
        cached.with_suffix(".tmp").rename(cached)
    finally:
        shutil.rmtree(home, ignore_errors=True)
    return cached


def model_use(url: str) -> dict[str, float] | None:
    """The server's embedding counters (kind=query): calls, texts, seconds; None for a server without them."""
    text = httpx.get(f"{url}/metrics", timeout=10, trust_env=False).text
    found = {}
    for name in ("calls", "texts", "seconds"):
        metric = "model_seconds" if name == "seconds" else ("model_calls" if name == "calls" else "texts")
        match = re.search(rf'^memory_embedding_{metric}_total\{{kind="query"\}} (\S+)$', text, re.MULTILINE)
        if match is None:
            return None
        found[name] = float(match.group(1))
    return found


async def idle_latency(url: str, seconds: float) -> dict[str, Any]:
    """One client, one search after another: what a lone search takes."""
    result = await run_load(url, clients=1, seconds=seconds)
    return {"searches": result["search_n"], "p50_ms": result["search_p50"], "p99_ms": result["search_p99"]}


# --- the run -------------------------------------------------------------------------------------------------------

def round_result(srv: ServerProcess, clients: int, seconds: float, model: dict[str, Any]) -> dict[str, Any]:
    before = model_use(srv.url)
    result = asyncio.run(run_load(srv.url, clients=clients, seconds=seconds, server=srv))
    after = model_use(srv.url)
    batch = 1.0
    if before is not None and after is not None and after["calls"] > before["calls"]:
        batch = (after["texts"] - before["texts"]) / (after["calls"] - before["calls"])
        result["model_busy_share"] = round((after["seconds"] - before["seconds"]) / result["seconds"], 3)
    result["query_batch"] = round(batch, 2)
    if result["search_n"]:
        total = result["server_cpu_s"] * 1000 / result["search_n"]
        result["cpu_ms_per_search"] = round(total, 2)
        result["model_cpu_ms_per_search"] = round(model_cpu_ms(model, batch), 2)
        result["cpu_ms_outside_model"] = round(total - result["model_cpu_ms_per_search"], 2)
    return result


def run(args: argparse.Namespace) -> dict[str, Any]:
    head = commit_of("HEAD")
    dirty = bool(subprocess.run(["git", "status", "--porcelain", "--", "src"], capture_output=True, text=True,
                                cwd=ROOT).stdout.strip())
    names = {"head": f"{head}{'+' if dirty else ''}"}
    report: dict[str, Any] = {"benchmark": "throughput", "command": " ".join(sys.argv),
                              "created_at": datetime.now(UTC).isoformat(timespec="seconds"), "machine": machine(),
                              "servers": names, "rounds": [], "idle": {}}
    print(f"machine: {report['machine']}", flush=True)
    report["model_before"] = model = model_rates(args.model_seconds)
    print(f"model alone: {json.dumps(model)}", flush=True)
    with ExitStack() as stack:
        sources = {"head": ROOT / "src"}
        if args.baseline:
            names["baseline"] = commit_of(args.baseline)
            sources["baseline"] = stack.enter_context(checkout(args.baseline))
        seeder = "baseline" if args.baseline else "head"
        for n in args.memories:
            stored = seeded_store(n, names[seeder], sources[seeder])
            with ExitStack() as running:
                servers = {}
                for key, src in sources.items():
                    home = Path(running.enter_context(tempfile.TemporaryDirectory(prefix=f"jiyi-{key}-")))
                    shutil.copy(stored, home / "memory.db")
                    servers[key] = running.enter_context(server(key, src, home))
                for srv in servers.values():  # warm: the scope's vectors into memory, the model's team awake
                    asyncio.run(run_load(srv.url, clients=4, seconds=3))
                for clients in args.clients:
                    for index in range(args.rounds):
                        order = list(servers) if index % 2 == 0 else list(reversed(servers))
                        for key in order:
                            result = round_result(servers[key], clients, args.seconds, model)
                            result.update(server=key, commit=names[key], memories=n)
                            report["rounds"].append(result)
                            print(json.dumps(result), flush=True)
                            write_report(args.out, report)  # a run cut short keeps its rounds
                if n == max(args.memories):
                    for key, srv in servers.items():
                        report["idle"][key] = asyncio.run(idle_latency(srv.url, args.seconds))
                report.setdefault("rss_mb", {})[str(n)] = {key: srv.rss_mb() for key, srv in servers.items()}
    report["model_after"] = model_rates(args.model_seconds)
    report["summary"] = summarise(report)
    write_report(args.out, report)
    return report


def summarise(report: dict[str, Any]) -> dict[str, Any]:
    model = report["model_before"]
    sequential = statistics.mean([model["single"]["queries_per_s"], report["model_after"]["single"]["queries_per_s"]])
    summary: dict[str, Any] = {"model_sequential_queries_per_s": round(sequential, 1),
                               "model_batch8_queries_per_s": model["batches"]["8"]["queries_per_s"],
                               "model_single_p99_ms": model["single"]["p99_ms"], "cells": []}
    cells: dict[tuple[int, int], dict[str, list[dict[str, Any]]]] = {}
    for row in report["rounds"]:
        cells.setdefault((row["memories"], row["clients"]), {}).setdefault(row["server"], []).append(row)
    for (n, clients), by_server in sorted(cells.items()):
        cell: dict[str, Any] = {"memories": n, "clients": clients}
        for key, rows in by_server.items():
            cell[key] = {
                "req_per_s": round(statistics.median(r["req_per_s"] for r in rows), 1),
                "p50_ms": statistics.median(r["search_p50"] for r in rows),
                "p99_ms": statistics.median(r["search_p99"] for r in rows),
                "cpu_ms_per_search": round(statistics.median(r.get("cpu_ms_per_search", math.nan) for r in rows), 2),
                "cpu_ms_outside_model": round(statistics.median(r.get("cpu_ms_outside_model", math.nan)
                                                                for r in rows), 2),
                "query_batch": round(statistics.median(r["query_batch"] for r in rows), 2)}
        cell["head_vs_model_sequential"] = round(cell["head"]["req_per_s"] / sequential, 2)
        if "baseline" in cell:
            cell["head_vs_baseline"] = round(cell["head"]["req_per_s"] / cell["baseline"]["req_per_s"], 3)
        summary["cells"].append(cell)
    for key, idle in report["idle"].items():
        summary[f"idle_{key}_p99_minus_model_p99_ms"] = round(idle["p99_ms"] - model["single"]["p99_ms"], 1)
    return summary


def print_table(report: dict[str, Any]) -> None:
    summary = report["summary"]
    print(f"\nmodel alone: {summary['model_sequential_queries_per_s']} queries/s one at a time, "
          f"{summary['model_batch8_queries_per_s']} in batches of 8; single p99 {summary['model_single_p99_ms']} ms")
    baseline = "baseline" in report["servers"]
    print("| memories | clients | HEAD req/s | vs model | p50 / p99 ms | CPU ms/search | outside model | batch |"
          + (" baseline req/s | HEAD / baseline |" if baseline else ""))
    print("|---|---|---|---|---|---|---|---|" + ("---|---|" if baseline else ""))
    for cell in summary["cells"]:
        head = cell["head"]
        line = (f"| {cell['memories']} | {cell['clients']} | {head['req_per_s']} | {cell['head_vs_model_sequential']}× "
                f"| {head['p50_ms']} / {head['p99_ms']} | {head['cpu_ms_per_search']} | {head['cpu_ms_outside_model']} "
                f"| {head['query_batch']} |")
        if baseline:
            line += f" {cell['baseline']['req_per_s']} | {cell['head_vs_baseline']}× |"
        print(line)
    for key, idle in report["idle"].items():
        print(f"idle ({key}): p50 {idle['p50_ms']} ms, p99 {idle['p99_ms']} ms "
              f"(model alone p99 {summary['model_single_p99_ms']} ms)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline", metavar="REV", help="also measure this commit's server, in interleaved rounds")
    parser.add_argument("--memories", type=int, nargs="+", default=[2000, 10000])
    parser.add_argument("--clients", type=int, nargs="+", default=[8, 64])
    parser.add_argument("--seconds", type=float, default=20.0, help="per round")
    parser.add_argument("--rounds", type=int, default=2, help="per server, store size and client count")
    parser.add_argument("--model-seconds", type=float, default=8.0, help="per measurement of the bare model")
    parser.add_argument("--out", type=Path, default=RESULTS / "throughput.json")
    parser.add_argument("--model-rates", type=float, metavar="SECONDS", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.model_rates is not None:
        print(json.dumps(measure_model(args.model_rates)))
        return
    print_table(run(args))


if __name__ == "__main__":
    main()
