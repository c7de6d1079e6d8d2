"""Concurrent writers (issue 19): do users writing at the same time wait for each other? And do racing writes for one
user stay consistent?

    .venv/bin/python bench/writers.py --embedder hashing       # 64 writers, 40 adds each, one every 2 s: ~3 min
    .venv/bin/python bench/writers.py --writers 8 --adds 10    # e5: 64 writers at this pace saturate 2 cores

What is measured, and how (also written into the JSON under "method"):

* Server: `python -m jiyi serve` on a free port of 127.0.0.1 (bench/load.py's Server) on a fresh SQLite file, with
  --embedder (e5 by default; "hashing" costs next to no CPU, so the figures show waiting on locks rather than on the
  cores: on 2 cores e5 serves ~10 adds/s, and 64 writers at one add every 2 s ask for 32) and the default write path
  (infer=True, offline extraction: facts decided against the user's memories under the user's decision lock, and
  the message kept as evidence).
* A writer is one user sending chat turns (`POST /memories`, one user message each, distinct texts from
  bench/corpus.py) at a chat pace: one every --interval seconds (default 2 s), each sent at its scheduled time
  whatever the answer time of the one before (an open loop, so a slow answer does not slow the writer down). A real
  person takes longer; this keeps the machine busy without saturating 2 cores with the e5 embedder.
* Single writer: one user alone, --adds turns. Then --writers users at once, each --adds turns, their schedules
  offset evenly within one interval. Per user: p50/p99 of its adds' latency; the target is that no user's p99 is
  more than 2x the single writer's p99.
* Identical racing adds: --same clients send the same sentence for one user at the same moment ("我对花生过敏");
  stored facts are counted afterwards (the target: one).
* CPU use per phase: the server's cores, other processes' cores, the load average (bench/load.py's Load).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

import corpus  # noqa: E402
import load  # noqa: E402
import scale  # noqa: E402

TARGET_RATIO = 2.0
METHOD = __doc__.split("What is measured, and how (also written into the JSON under \"method\"):")[1].strip()


async def writer(http: httpx.AsyncClient, user: str, texts: Sequence[str], interval: float, offset: float,
                 latencies: list[float], statuses: dict[int, int]) -> None:
    started = time.perf_counter() + offset

    async def one(text: str) -> None:
        sent = time.perf_counter()
        response = await http.post("/memories", json={"messages": [{"role": "user", "content": text}],
                                                      "user_id": user})
        latencies.append((time.perf_counter() - sent) * 1000)
        statuses[response.status_code] = statuses.get(response.status_code, 0) + 1

    pending = []
    for i, text in enumerate(texts):
        await asyncio.sleep(max(0.0, started + i * interval - time.perf_counter()))
        pending.append(asyncio.create_task(one(text)))
    await asyncio.gather(*pending)


async def writers_phase(url: str, users: int, adds: int, interval: float, texts: Sequence[str],
                        prefix: str) -> dict[str, Any]:
    latencies: dict[str, list[float]] = {f"{prefix}{u:02d}": [] for u in range(users)}
    statuses: dict[int, int] = {}
    async with load.client_http(url, max(users * 2, 8)) as http:
        await asyncio.gather(*(
            writer(http, user, texts[u * adds:(u + 1) * adds], interval, interval * u / users, latencies[user],
                   statuses)
            for u, user in enumerate(latencies)))
    per_user = {user: scale.summary(values) for user, values in latencies.items()}
    return {"users": users, "adds_per_user": adds, "interval_s": interval, "statuses": statuses,
            "per_user_ms": per_user, "all_ms": scale.summary([v for vs in latencies.values() for v in vs])}


async def identical_adds(url: str, clients: int) -> dict[str, Any]:
    async with load.client_http(url, clients) as http:
        body = {"messages": [{"role": "user", "content": "我对花生过敏"}], "user_id": "same"}
        answers = await asyncio.gather(*(http.post("/memories", json=body) for _ in range(clients)))
        listed = (await http.get("/memories", params={"user_id": "same", "limit": 1000})).json()["results"]
    return {"clients": clients, "statuses": sorted({a.status_code for a in answers}),
            "facts_stored": [m["memory"] for m in listed]}


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--writers", type=int, default=64)
    parser.add_argument("--adds", type=int, default=40, help="turns per writer")
    parser.add_argument("--interval", type=float, default=2.0, help="seconds between one writer's turns")
    parser.add_argument("--same", type=int, default=20, help="clients sending the same sentence at once")
    parser.add_argument("--embedder", default="e5", help='the server\'s embedder: "e5" or "hashing"')
    parser.add_argument("--out", default=str(BENCH_DIR / "results" / "writers.json"))
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    texts = corpus.memories((args.writers + 1) * args.adds, seed=11)
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "writers.db"
        server = load.Server(db, Path(tmp) / "server.log", args.embedder)
        try:
            scale.log(f"single writer: {args.adds} turns, one every {args.interval:g} s")
            meter = load.Load(server.process.pid)
            single = asyncio.run(writers_phase(server.url, 1, args.adds, args.interval, texts[-args.adds:], "solo"))
            single["load"] = meter.report()
            scale.log(f"{args.writers} writers at once, {args.adds} turns each")
            meter = load.Load(server.process.pid)
            many = asyncio.run(writers_phase(server.url, args.writers, args.adds, args.interval, texts, "w"))
            many["load"] = meter.report()
            scale.log(f"{args.same} identical adds at once")
            same = asyncio.run(identical_adds(server.url, args.same))
        finally:
            server.stop()
    single_p99 = single["all_ms"]["p99"]
    worst = max(many["per_user_ms"].items(), key=lambda item: item[1]["p99"])
    ratio = round(worst[1]["p99"] / single_p99, 2)
    report = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"), "machine": scale.machine_info(),
        "python": platform.python_version(), "args": vars(args), "method": METHOD,
        "single_writer": single, "writers": many, "identical_adds": same,
        "summary": {"single_p99_ms": single_p99, "worst_user": worst[0], "worst_user_p99_ms": worst[1]["p99"],
                    "worst_ratio": ratio, "target_ratio": TARGET_RATIO, "met": ratio <= TARGET_RATIO,
                    "identical_adds_facts": len(same["facts_stored"])},
    }
    Path(args.out).write_text(json.dumps(report, ensure_ascii=False, indent=1) + "\n")
    print(json.dumps(report["summary"], ensure_ascii=False, indent=1))
    print(f"written: {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
