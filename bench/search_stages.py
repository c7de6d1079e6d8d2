"""What a search costs outside the model, in process (issue 28): core/retrieval's hybrid_search on a copy of one of
bench/throughput.py's seeded stores, its query vectors embedded beforehand, each search followed by the
record_access the read path makes. Prints, per code tree: wall and thread-CPU p50 of hybrid_search (and the CPU's
mean), and each stage's p50 and mean (Retrieval.timings_ms), over the searches after a warm-up.

    .venv/bin/python bench/search_stages.py                                   # this tree's src/
    .venv/bin/python bench/search_stages.py --src /tmp/base/src src           # another tree's code, then this one's
    .venv/bin/python bench/search_stages.py --store .cache/throughput/seed-f0c704f-10000.db --searches 600 --rounds 3

The queries are two of the driver's words (bench/http_load.py WORDS), seeded: every side asks the same. Each side
runs in a process of its own with its src/ first on the path, on a fresh copy of the store (the original is never
written); sides alternate round by round, so a busy machine weighs on both alike.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from http_load import WORDS

ROOT = Path(__file__).resolve().parent.parent
WARM_UP = 100


def search_all(store_path: str, vectors_path: str, queries_path: str) -> None:
    """In the child: every query searched with the code first on this process's path; one JSON line."""
    from datetime import UTC, datetime

    import numpy as np

    import jiyi
    from jiyi import build_embedder, build_store
    from jiyi.core.retrieval import RetrievalSettings, SearchRequest, hybrid_search
    from jiyi.records import Scope

    asked = json.loads(Path(queries_path).read_text(encoding="utf-8"))
    vectors = np.load(vectors_path)
    embedder = build_embedder("e5")  # its calibration; the vectors are given
    store = build_store(f"sqlite:///{store_path}")
    settings = RetrievalSettings()
    wall: list[float] = []
    cpu: list[float] = []
    stages: dict[str, list[float]] = {}
    for i, (query, vector) in enumerate(zip(asked, vectors, strict=True)):
        began, began_cpu = time.perf_counter(), time.thread_time()
        retrieval = hybrid_search(store, embedder, SearchRequest(query, Scope("load"), top_k=10), settings,
                                  query_vector=vector)
        elapsed, spent = time.perf_counter() - began, time.thread_time() - began_cpu
        store.record_access([hit.record.id for hit in retrieval.hits], datetime.now(UTC))
        if i >= WARM_UP:
            wall.append(elapsed * 1000)
            cpu.append(spent * 1000)
            for stage, ms in retrieval.timings_ms.items():
                stages.setdefault(stage, []).append(ms)
    print(json.dumps({"code": str(Path(jiyi.__file__).parent.parent), "searches": len(wall),
                      "wall_p50_ms": round(statistics.median(wall), 3), "cpu_p50_ms": round(statistics.median(cpu), 3),
                      "cpu_mean_ms": round(statistics.fmean(cpu), 3),
                      "stages_p50_ms": {k: round(statistics.median(v), 3) for k, v in stages.items() if any(v)},
                      # A stage that runs for some searches only (the graph path: a query naming an entity) shows in
                      # its mean, not in its median.
                      "stages_mean_ms": {k: round(statistics.fmean(v), 3) for k, v in stages.items() if any(v)}}))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--src", nargs="+", default=[str(ROOT / "src")], help="code trees to run (their src/)")
    parser.add_argument("--store", type=Path, help="a seeded store (default: the newest 10k one in .cache/throughput)")
    parser.add_argument("--searches", type=int, default=600, help="searches measured, after 100 of warm-up")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        search_all(*args.child)
        return 0
    store = args.store or max((ROOT / ".cache" / "throughput").glob("seed-*-10000.db"), key=os.path.getmtime,
                              default=None)
    if store is None:
        parser.error("no seeded store: run bench/throughput.py --memories 10000 once, or give --store")

    import numpy as np

    from jiyi.embedders import build_embedder

    pick = random.Random(28)
    asked = [f"{pick.choice(WORDS)} {pick.choice(WORDS)}" for _ in range(args.searches + WARM_UP)]
    with tempfile.TemporaryDirectory(prefix="jiyi-stages-") as tmp:
        work = Path(tmp)
        (work / "queries.json").write_text(json.dumps(asked, ensure_ascii=False), encoding="utf-8")
        np.save(work / "vectors.npy", np.asarray(build_embedder("e5").embed_queries(asked), dtype=np.float32))
        for _ in range(args.rounds):
            for src in args.src:
                copy = work / "store.db"
                for leftover in work.glob("store.db*"):
                    leftover.unlink()
                shutil.copy(store, copy)
                subprocess.run([sys.executable, __file__, "--child", str(copy), str(work / "vectors.npy"),
                                str(work / "queries.json")], check=True, cwd=ROOT / "bench",
                               env={**os.environ, "PYTHONPATH": str(Path(src).resolve())})
    return 0


if __name__ == "__main__":
    sys.exit(main())
