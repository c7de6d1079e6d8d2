"""Whether a change to the read path left its results alone: the same random queries searched (core/retrieval's
hybrid_search, in process) on copies of bench/throughput.py's stores by this working tree's code and by another
commit's, and every hit compared — id, score, relevance and explain details, in order.

    .venv/bin/python bench/same_results.py --baseline HEAD~1                # 2k and 10k memories, 500 queries each
    .venv/bin/python bench/same_results.py --baseline 8aedd5e --memories 2000 --queries 100

For a change meant to make a search cheaper, not different (issue 28): bench/throughput.py says how much cheaper,
this says nothing else moved. LoCoMo (bench/locomo.py) says what a change of ranking does; this one needs no model
but the query embedder, and a minute.

How:
- The stores are throughput.py's seeded ones (.cache/throughput/; seeded by the baseline's server when missing).
- The queries: one to sixteen of the driver's words and a few question words, questions, long context queries;
  top_k 5, 10 or 20; explain on every fourth. Seeded, so every run asks the same.
- Their vectors are embedded once here and handed to both sides: the model is not what is compared. `now` is fixed.
- Each side runs in a process of its own with its `src/` first on the path (a temporary worktree for the baseline).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from http_load import WORDS
from throughput import checkout, commit_of, seeded_store

ROOT = Path(__file__).resolve().parent.parent
NOW = "2026-12-01T12:00:00+00:00"
QUESTIONS = ("我老家是哪里的？", "有什么推荐的电影吗？", "最近失眠怎么办", "What has my sister been doing lately?",
             "do I still drink coffee?", "我妈妈的生日是什么时候")
EXTRA_WORDS = "where do I live what did my sister say about 最近 怎么样 我 喜欢 什么 推荐 一个 how was the trip".split()


def queries(n: int) -> list[str]:
    pick = random.Random(11)
    words = [*WORDS, *EXTRA_WORDS]
    kinds = [
        lambda: pick.choice(WORDS),
        lambda: f"{pick.choice(WORDS)} {pick.choice(WORDS)}",
        lambda: " ".join(pick.choice(words) for _ in range(pick.randint(3, 6))),
        lambda: " ".join(pick.choice(words) for _ in range(pick.randint(10, 16))),  # a context query
        lambda: f"{pick.choice(QUESTIONS)} {pick.choice(WORDS)}",
    ]
    return [kinds[i % len(kinds)]() for i in range(n)]


def search_all(store_path: str, queries_path: str, vectors_path: str, out_path: str) -> None:
    """In the child: every query searched with the code first on this process's path."""
    from datetime import datetime

    import numpy as np

    from jiyi import build_embedder, build_store
    from jiyi.core.retrieval import RetrievalSettings, SearchRequest, hybrid_search
    from jiyi.records import Scope

    asked = json.loads(Path(queries_path).read_text(encoding="utf-8"))
    vectors = np.load(vectors_path)
    embedder = build_embedder("e5")  # its calibration; the vectors are given
    store = build_store(f"sqlite:///{store_path}")
    now = datetime.fromisoformat(NOW)
    found = []
    for i, (query, vector) in enumerate(zip(asked, vectors, strict=True)):
        request = SearchRequest(query, Scope("load"), top_k=(5, 10, 20)[i % 3], now=now, explain=i % 4 == 0)
        retrieval = hybrid_search(store, embedder, request, RetrievalSettings(), query_vector=vector)
        found.append([[hit.record.id, hit.score, hit.relevance, json.dumps(hit.details, sort_keys=True, default=str)]
                      for hit in retrieval.hits])
    Path(out_path).write_text(json.dumps(found), encoding="utf-8")


def run_side(src: Path, store: Path, work: Path, name: str) -> list[Any]:
    copy = work / f"{name}.db"
    shutil.copy(store, copy)
    out = work / f"{name}.json"
    env = {**os.environ, "PYTHONPATH": str(src)}
    subprocess.run([sys.executable, __file__, "--child", str(copy), str(work / "queries.json"),
                    str(work / "vectors.npy"), str(out)], check=True, env=env, cwd=ROOT / "bench")
    result: list[Any] = json.loads(out.read_text(encoding="utf-8"))
    return result


def _brief(hits: list[Any]) -> list[tuple[str, float]]:
    return [(hit[0][:8], hit[1]) for hit in hits[:5]]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", metavar="REV", help="the commit to compare this working tree with")
    parser.add_argument("--memories", type=int, nargs="+", default=[2000, 10000])
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--child", nargs=4, metavar=("STORE", "QUERIES", "VECTORS", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        search_all(*args.child)
        return 0
    if not args.baseline:
        parser.error("--baseline REV is required")

    import numpy as np

    from jiyi.embedders import build_embedder

    asked = queries(args.queries)
    differing = 0
    with ExitStack() as stack:
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="jiyi-same-")))
        (work / "queries.json").write_text(json.dumps(asked, ensure_ascii=False), encoding="utf-8")
        np.save(work / "vectors.npy", np.asarray(build_embedder("e5").embed_queries(asked), dtype=np.float32))
        baseline = commit_of(args.baseline)
        baseline_src = stack.enter_context(checkout(args.baseline))
        for n in args.memories:
            store = seeded_store(n, baseline, baseline_src)
            before = run_side(baseline_src, store, work, f"baseline-{n}")
            after = run_side(ROOT / "src", store, work, f"head-{n}")
            changed = [i for i, (old, new) in enumerate(zip(before, after, strict=True)) if old != new]
            differing += len(changed)
            print(f"{n} memories: {len(asked)} queries, {sum(map(len, before))} hits at {baseline}; "
                  f"{len(changed)} queries differ in this working tree", flush=True)
            for i in changed[:5]:
                print(f"  {asked[i]!r}\n    {baseline}: {_brief(before[i])}\n    here: {_brief(after[i])}")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
