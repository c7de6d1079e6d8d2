"""How fast the web console's pages answer for one big scope (100,000 memories by default), over HTTP.

    .venv/bin/python bench/console.py                                   # SQLite, 100k, built once in bench/.cache/
    .venv/bin/python bench/console.py --store postgresql://…/db         # PostgreSQL (an empty database is filled)
    .venv/bin/python bench/console.py --memories 10000 --out bench/results/console-10k.json

The store holds N memories of user "alice" (half with the agent "helper", a third in one of five runs, 1 in 97 core,
1 in 11 an evidence message; importance, recalls and times vary) and 5,000 of user "bob". They are inserted straight
into the store with random unit vectors of the hashing embedder's size (no model). A real uvicorn server
(jiyi.server.create_app) on 127.0.0.1 answers; an admin signs in once, and each page is fetched `--runs` times after
one warm-up, one keep-alive client: wall time per request (p50, max), and the CPU time this process (server and
client) spent on it, which other processes on a shared machine disturb less than the wall time; for a PostgreSQL on
this machine, also the CPU time its processes spent (10 ms ticks). The CPU cores busy right after the run are
recorded too. The store's own URL is not written (it may hold a password).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import numpy as np
import uvicorn

from jiyi import AsyncMemory, build_embedder, build_store
from jiyi.records import Category, Event, Layer, MemoryRecord, MemoryType, Scope, history_row
from jiyi.server import create_app

HERE = Path(__file__).parent
ADMIN_KEY = "bench-console-admin-key"
PAGES = {
    "overview (counts, retention now/7/30 days, queue)": "/ui/users/alice",
    "overview of one agent": "/ui/users/alice?agent_id=helper",
    "users": "/ui/users",
    "memories, newest first": "/ui/users/alice/memories",
    "memories, sorted by importance": "/ui/users/alice/memories?sort=importance&dir=desc",
}


def fill(memory: AsyncMemory, size: int) -> None:
    rng = np.random.default_rng(17)
    start = datetime.now(UTC) - timedelta(days=90)
    layers, kinds = list(Layer), [MemoryType.FACT, MemoryType.PREFERENCE, MemoryType.EPISODIC]
    dims, step = memory.embedder.dims, 90 * 86400 / max(size, 1)

    def insert(records: list[MemoryRecord]) -> None:
        vectors = rng.normal(size=(len(records), dims)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        memory.store.insert(records, vectors, [history_row(Event.ADD, r, r.created_at) for r in records])

    for chunk in range(0, size, 2000):
        insert([MemoryRecord(
            f"memory {i}: 用户喜欢喝咖啡 and lives in Vancouver",
            Scope("alice", "helper" if i % 2 else None, f"run-{i % 5}" if i % 3 == 0 else None),
            category=Category.CORE if i % 97 == 0 else Category.MESSAGE if i % 11 == 0 else Category.FACT,
            layer=layers[i % 3], memory_type=kinds[i % 3], importance=round(float(rng.uniform(0.1, 2.5)), 2),
            access_count=int(rng.integers(0, 20)), created_at=start + timedelta(seconds=step * i),
            last_accessed_at=start + timedelta(seconds=step * i + 86400) if i % 4 == 0 else None)
            for i in range(chunk, min(chunk + 2000, size))])
    insert([MemoryRecord(f"bob {i}", Scope("bob"), created_at=start) for i in range(5000)])


def busy_cores(seconds: float = 1.0) -> float:
    def ticks() -> tuple[int, int]:
        fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        return sum(fields), fields[3] + fields[4]

    total0, idle0 = ticks()
    time.sleep(seconds)
    total1, idle1 = ticks()
    return round((os.cpu_count() or 1) * (1 - (idle1 - idle0) / max(total1 - total0, 1)), 2)


def database_cpu(url: str) -> Callable[[], float] | None:
    """For a PostgreSQL on this machine: the CPU milliseconds its processes have used so far (the work a request
    does there is not this process's). None when the server is elsewhere or will not say where its files are."""
    if not url.startswith("postgres"):
        return None
    try:
        import psycopg

        with psycopg.connect(url) as conn:
            row = conn.execute("SHOW data_directory").fetchone()
        postmaster = int((Path(str(row[0])) / "postmaster.pid").read_text().split()[0]) if row else 0
    except Exception:  # not ours to read: no number rather than a wrong one
        return None
    tick = 1000 / os.sysconf("SC_CLK_TCK")

    def used() -> float:
        total = 0
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == postmaster:  # its parent: a backend, the checkpointer, autovacuum
                total += int(fields[11]) + int(fields[12])
        return total * tick

    return used


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store", help="a store URL (default: a SQLite file in bench/.cache/)")
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--out", type=Path, help="where to write the JSON (default: print only)")
    parser.add_argument("--note", default="", help="a line kept in the JSON (which code was measured)")
    args = parser.parse_args()
    url = args.store or f"sqlite:///{HERE / '.cache' / f'console-{args.memories}.db'}"
    memory = AsyncMemory(build_store(url), build_embedder("hashing"))
    have = memory.store.count(Scope("alice"))
    if sum(have.values()) != args.memories:
        if sum(have.values()):
            sys.exit(f"{url} holds {sum(have.values())} memories of alice, not {args.memories}: use an empty store")
        started = time.perf_counter()
        fill(memory, args.memories)
        print(f"filled {args.memories:,} memories in {time.perf_counter() - started:.0f} s", file=sys.stderr)

    app = create_app(memory, admin_api_key=ADMIN_KEY, run_worker=False)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    port = server.servers[0].sockets[0].getsockname()[1]
    report: dict[str, object] = {}
    in_database = database_cpu(url)
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=120) as client:
        token = client.get("/ui/login").text.split('"X-CSRF-Token": "')[1].split('"')[0]
        signed_in = client.post("/ui/login", json={"key": ADMIN_KEY}, headers={"X-CSRF-Token": token})
        assert signed_in.status_code == 303 and "jiyi_console" in client.cookies, signed_in.text
        for name, path in PAGES.items():
            assert client.get(path).status_code == 200, path  # warm: SQL compiled, templates loaded
            wall, cpu, db_cpu = [], [], []
            for _ in range(args.runs):
                db_before = in_database() if in_database else 0.0
                started, used = time.perf_counter(), time.process_time()
                response = client.get(path)
                wall.append((time.perf_counter() - started) * 1000)
                cpu.append((time.process_time() - used) * 1000)
                db_cpu.append(in_database() - db_before if in_database else 0.0)
                assert response.status_code == 200, (path, response.status_code)
            entry = {"path": path, "wall_p50_ms": round(statistics.median(wall), 1),
                     "wall_max_ms": round(max(wall), 1), "cpu_p50_ms": round(statistics.median(cpu), 1)}
            if in_database:
                entry["database_cpu_p50_ms"] = round(statistics.median(db_cpu), 1)
            report[name] = entry
            print(f"{name:50s} wall p50 {statistics.median(wall):7.1f} ms, max {max(wall):7.1f};  cpu p50 "
                  f"{statistics.median(cpu):7.1f} ms" + (f" + {statistics.median(db_cpu):.0f} in the database"
                                                         if in_database else ""), file=sys.stderr)
    server.should_exit = True
    thread.join(10)
    result = {"store": url.split("://", 1)[0], "memories": args.memories, "runs": args.runs, "note": args.note,
              "at": datetime.now(UTC).isoformat(timespec="seconds"), "machine": platform.platform(),
              "cpus": os.cpu_count(), "busy_cores_after": busy_cores(), "pages": report}
    if args.out:
        args.out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
