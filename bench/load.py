"""Load benchmark: a real `jiyi serve` process (e5, the default embedder) on 127.0.0.1, 10k memories per user,
driven by concurrent clients (asyncio + httpx) mixing add (20 %), search (70 %) and context (10 %).

    python bench/load.py                          # 8 and 64 clients, 60 s each -> bench/results/load.json
    python bench/load.py --seconds 15             # shorter runs
    python bench/load.py --huge                   # also the huge-input fairness run -> bench/results/huge-input.json
    python bench/load.py --clients 8 --huge-only --seconds 20

What is measured, and how (also written into the JSON under "method"):

* Store: one SQLite file with --users users (8) of --memories memories each (10,000), bulk-inserted with
  bench/scale.py's code and its cached e5 vectors of bench/corpus.py's texts (bench/.cache; embedded once, a few
  minutes). Every user holds the same texts, so each user's scope is a full 10k-memory search.
* Server: `python -m jiyi serve` on a free port, as a user runs it (JIYI_MAINTENANCE_INTERVAL=0 so that no lifecycle
  pass runs mid-measurement). Each client count runs against the same server, one after another; adds grow the store.
* Clients: closed loop, no think time: each client sends its next request as soon as the last one answered. Per
  request an operation is drawn (add 20 %, search 70 %, context 10 %) and a user (uniform): add is POST /memories
  with one fresh corpus sentence, infer=false (one embedding, the store write, keyword indexing); search is
  POST /search with a corpus question, top_k 10; context is POST /context with a system and a user message.
  Latency is wall time around the request in the client; throughput is answers per second of the whole run.
* Errors: answers by status per operation; transport errors (timeouts, resets) by exception type.
* Machine load: this machine is shared. Recorded per run: the CPU cores the server process used, the cores other
  processes kept busy (machine busy time minus this benchmark's and the server's, from /proc), and the load average.
* Huge-input fairness (--huge): one client sends 50 KB texts back to back (infer=false, user "u_huge") while another
  client searches as user u00 back to back. The searcher runs alone first ("idle"), then beside the huge sender
  ("busy"), each for --seconds; the target is busy p99 <= 2 x idle p99.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/ is not a package
import corpus
import scale
from jiyi import build_embedder, build_store

BENCH_DIR = Path(__file__).resolve().parent
MIX = {"add": 20, "search": 70, "context": 10}  # percent
TOP_K = 10
HUGE_BYTES = 50_000
FAIRNESS_TARGET = 2.0  # busy p99 / idle p99 of the searching user

METHOD = __doc__.split("What is measured, and how (also written into the JSON under \"method\"):")[1].strip()


# --- the store and the server --------------------------------------------------------------------------------------


def build_file(db: Path, users: int, size: int, seed: int) -> dict[str, Any]:
    """`users` scopes of `size` memories each, with scale.py's cached e5 vectors."""
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    embedder = build_embedder("e5")
    texts = corpus.memories(size, seed)
    vectors, info = scale.corpus_vectors("e5", seed, embedder, texts)
    rows = [(i, f"u{u:02d}") for u in range(users) for i in range(size)]
    random.Random(seed).shuffle(rows)
    store = build_store(f"sqlite:///{db}")
    scale.log(f"bulk insert of {len(rows)} rows ({users} users x {size})")
    filled = scale.fill_store(store, embedder, texts, vectors, rows)
    store.close()
    return {"users": users, "memories_per_user": size, "vectors": info, "bulk_insert": filled,
            "db_mb": round(db.stat().st_size / 2**20, 1)}


class Server:
    """`python -m jiyi serve` on a free port of 127.0.0.1."""

    def __init__(self, db: Path, log_path: Path, embedder: str = "e5") -> None:
        self.port = scale.free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {k: v for k, v in os.environ.items() if not k.startswith("JIYI_")}
        env.update(JIYI_MAINTENANCE_INTERVAL="0", JIYI_LOG_LEVEL="warning", JIYI_HOME=str(db.parent),
                   JIYI_EMBEDDER=embedder)
        with log_path.open("ab") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "jiyi", "serve", "--port", str(self.port), "--store", f"sqlite:///{db}"],
                env=env, stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 180
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"jiyi serve exited with {self.process.returncode}; see {log_path}")
            try:
                if httpx.get(self.url + "/health", timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"jiyi serve did not answer /health; see {log_path}")
            time.sleep(0.2)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


# --- measuring -----------------------------------------------------------------------------------------------------


class Recorder:
    """Latencies (ms) and answers per operation, transport errors by type."""

    def __init__(self) -> None:
        self.latency: dict[str, list[float]] = defaultdict(list)
        self.status: dict[str, Counter[int]] = defaultdict(Counter)
        self.errors: Counter[str] = Counter()

    async def send(self, op: str, request: Any) -> None:
        started = time.perf_counter()
        try:
            response = await request
        except httpx.HTTPError as exc:
            self.errors[f"{op}: {type(exc).__name__}"] += 1
            return
        self.latency[op].append((time.perf_counter() - started) * 1000)
        self.status[op][response.status_code] += 1

    def report(self, seconds: float) -> dict[str, Any]:
        answered = sum(sum(c.values()) for c in self.status.values())
        ok = sum(c[200] for c in self.status.values())
        return {
            "seconds": round(seconds, 1),
            "answers": answered,
            "throughput_per_s": round(answered / seconds, 1),
            "ok_per_s": round(ok / seconds, 1),
            "latency_ms": {op: scale.summary(values) for op, values in sorted(self.latency.items())},
            "status": {op: {str(code): n for code, n in sorted(c.items())} for op, c in sorted(self.status.items())},
            "non_2xx": sum(n for c in self.status.values() for code, n in c.items() if code >= 300),
            "transport_errors": dict(self.errors),
        }


class Load:
    """CPU use while a run lasts: the server's cores, other processes' cores, the load average."""

    def __init__(self, server_pid: int) -> None:
        self.server_pid = server_pid
        self.meter = scale.CpuMeter([os.getpid(), server_pid])
        self.server_cpu = scale.process_cpu_s(server_pid)
        self.client_cpu = scale.process_cpu_s(os.getpid())
        self.loadavg = os.getloadavg()[0]

    def report(self) -> dict[str, Any]:
        wall = time.perf_counter() - self.meter.started
        return {"server_cores": round((scale.process_cpu_s(self.server_pid) - self.server_cpu) / wall, 2),
                "client_cores": round((scale.process_cpu_s(os.getpid()) - self.client_cpu) / wall, 2),
                "other_processes_cores": self.meter.foreign_cores(),
                "loadavg_1m_before": round(self.loadavg, 2), "loadavg_1m_after": round(os.getloadavg()[0], 2),
                "cores": os.cpu_count()}


def client_http(url: str, connections: int) -> httpx.AsyncClient:
    limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
    return httpx.AsyncClient(base_url=url, timeout=120, limits=limits)


async def mixed(server: Server, clients: int, seconds: float, users: int, queries: Sequence[str],
                fresh: Sequence[str], seed: int) -> dict[str, Any]:
    recorder = Recorder()
    counter = itertools.count()
    async with client_http(server.url, clients) as http:
        await http.post("/search", json={"query": queries[0], "user_id": "u00", "top_k": TOP_K})  # warm
        load = Load(server.process.pid)
        started = time.perf_counter()
        deadline = started + seconds

        async def client(n: int) -> None:
            rng = random.Random(f"{seed}:{clients}:{n}")
            while time.perf_counter() < deadline:
                op = rng.choices(list(MIX), weights=list(MIX.values()))[0]
                user = f"u{rng.randrange(users):02d}"
                if op == "add":
                    i = next(counter)
                    text = fresh[i % len(fresh)] if i < len(fresh) else f"{fresh[i % len(fresh)]} ({i})"
                    await recorder.send(op, http.post("/memories", json={
                        "messages": [{"role": "user", "content": text}], "user_id": user, "infer": False}))
                elif op == "search":
                    await recorder.send(op, http.post("/search", json={
                        "query": rng.choice(queries), "user_id": user, "top_k": TOP_K}))
                else:
                    await recorder.send(op, http.post("/context", json={"user_id": user, "messages": [
                        {"role": "system", "content": "You are a friendly companion."},
                        {"role": "user", "content": rng.choice(queries)}]}))

        await asyncio.gather(*(client(n) for n in range(clients)))
        elapsed = time.perf_counter() - started
        return {"clients": clients, **recorder.report(elapsed), "machine_load": load.report()}


def huge_text(texts: Sequence[str], n: int) -> str:
    """About HUGE_BYTES of UTF-8 made of corpus sentences, different for each `n`."""
    parts, size = [f"#{n}"], 0
    for text in itertools.cycle(texts[n % len(texts):] or texts):
        parts.append(text)
        size += len(text.encode("utf-8")) + 1
        if size >= HUGE_BYTES:
            return " ".join(parts)
    raise AssertionError("unreachable")


async def fairness(server: Server, seconds: float, queries: Sequence[str], texts: Sequence[str]) -> dict[str, Any]:
    """The searching user's latency alone, then beside a client sending 50 KB texts back to back."""
    async with client_http(server.url, 4) as http:

        async def searcher(recorder: Recorder, until: float) -> None:
            rng = random.Random(7)
            while time.perf_counter() < until:
                await recorder.send("search", http.post("/search", json={
                    "query": rng.choice(queries), "user_id": "u00", "top_k": TOP_K}))

        async def huge_sender(recorder: Recorder, until: float) -> None:
            for n in itertools.count():
                if time.perf_counter() >= until:
                    return
                await recorder.send("huge_add", http.post("/memories", json={
                    "messages": [{"role": "user", "content": huge_text(texts, n)}], "user_id": "u_huge",
                    "infer": False}))

        await searcher(Recorder(), time.perf_counter() + 2)  # warm
        idle, busy = Recorder(), Recorder()
        load = Load(server.process.pid)
        started = time.perf_counter()
        await searcher(idle, started + seconds)
        idle_report, idle_load = idle.report(time.perf_counter() - started), load.report()
        load = Load(server.process.pid)
        started = time.perf_counter()
        until = started + seconds
        await asyncio.gather(searcher(busy, until), huge_sender(busy, until))
        busy_report, busy_load = busy.report(time.perf_counter() - started), load.report()
    idle_p99 = idle_report["latency_ms"]["search"]["p99"]
    busy_p99 = busy_report["latency_ms"]["search"]["p99"]
    return {"huge_text_bytes": len(huge_text(texts, 0).encode("utf-8")), "idle": idle_report,
            "idle_machine_load": idle_load, "busy": busy_report, "busy_machine_load": busy_load,
            "search_p99_ratio": round(busy_p99 / idle_p99, 2), "target_ratio": FAIRNESS_TARGET,
            "meets_target": busy_p99 <= FAIRNESS_TARGET * idle_p99}


# --- report --------------------------------------------------------------------------------------------------------


def markdown(runs: Sequence[dict[str, Any]]) -> str:
    lines = ["| clients | answers/s | add p50 / p99 | search p50 / p99 | context p50 / p99 | non-2xx | "
             "transport errors | server cores | other load |", "|---|---|---|---|---|---|---|---|---|"]
    for run in runs:
        cells = []
        for op in MIX:
            s = run["latency_ms"].get(op, {})
            cells.append(f"{s.get('p50', '-')} / {s.get('p99', '-')}")
        load = run["machine_load"]
        lines.append(f"| {run['clients']} | {run['throughput_per_s']} | {' | '.join(cells)} | {run['non_2xx']} | "
                     f"{sum(run['transport_errors'].values())} | {load['server_cores']} | "
                     f"{load['other_processes_cores']} |")
    return "\n".join(lines)


def write(path: Path, report: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", default="8,64", help="concurrent clients, one run per count")
    parser.add_argument("--seconds", type=float, default=60.0, help="length of each run")
    parser.add_argument("--users", type=int, default=8)
    parser.add_argument("--memories", type=int, default=10_000, help="memories per user")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--huge", action="store_true", help="also run the huge-input fairness mode")
    parser.add_argument("--huge-only", action="store_true", help="only the huge-input fairness mode")
    parser.add_argument("--out", default=str(BENCH_DIR / "results" / "load.json"))
    parser.add_argument("--huge-out", default=str(BENCH_DIR / "results" / "huge-input.json"))
    parser.add_argument("--workdir", default=None, help="where the SQLite file goes (default: a temp dir, removed)")
    parser.add_argument("--note", default="", help="free text stored in the JSON (e.g. how busy the machine was)")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    workdir = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="jiyi-load-"))
    workdir.mkdir(parents=True, exist_ok=True)
    db = workdir / "load.db"
    texts = corpus.memories(args.memories + 20_000, args.seed)
    fresh = texts[args.memories:]
    queries = corpus.queries(300, args.seed)
    meta = {"date": datetime.now(UTC).isoformat(timespec="seconds"), "machine": scale.machine_info(),
            "args": vars(args), "method": METHOD, "mix_percent": MIX}
    server: Server | None = None
    try:
        meta["store"] = build_file(db, args.users, args.memories, args.seed)
        server = Server(db, workdir / "server.log")
        scale.log(f"jiyi serve at {server.url} (pid {server.process.pid})")
        if not args.huge_only:
            runs = []
            for clients in (int(c) for c in args.clients.split(",")):
                scale.log(f"{clients} clients for {args.seconds:g} s")
                runs.append(asyncio.run(mixed(server, clients, args.seconds, args.users, queries, fresh, args.seed)))
                write(Path(args.out), {**meta, "runs": runs})
            print(markdown(runs))
        if args.huge or args.huge_only:
            scale.log(f"huge-input fairness, {args.seconds:g} s idle + {args.seconds:g} s busy")
            result = asyncio.run(fairness(server, args.seconds, queries, texts[:args.memories]))
            write(Path(args.huge_out), {**meta, "fairness": result})
            idle, busy = result["idle"]["latency_ms"]["search"], result["busy"]["latency_ms"]["search"]
            print(f"\nsearch beside 50 KB adds: p50 {idle['p50']} -> {busy['p50']} ms, p99 {idle['p99']} -> "
                  f"{busy['p99']} ms (x{result['search_p99_ratio']}, target <= x{FAIRNESS_TARGET:g}); huge adds: "
                  f"{result['busy']['status'].get('huge_add', {})}")
    finally:
        if server is not None:
            server.stop()
        if not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
