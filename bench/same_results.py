"""Whether a change to the read path left its results alone: the same random queries searched (core/retrieval's
hybrid_search, in process) on copies of bench/throughput.py's stores by this working tree's code and by another
commit's, and every hit compared — id, score, relevance and explain details, in order.

    .venv/bin/python bench/same_results.py --baseline HEAD~1                # 2k and 10k memories, 500 queries each
    .venv/bin/python bench/same_results.py --baseline 8aedd5e --memories 2000 --queries 100
    .venv/bin/python bench/same_results.py --baseline HEAD~1 --stores /tmp/ctx/*.db    # stores of real conversations

For a change meant to make a search cheaper, not different (issue 28): bench/throughput.py says how much cheaper,
this says nothing else moved. LoCoMo (bench/locomo.py) says what a change of ranking does; this one needs no model
but the query embedder, and a minute.

How:
- The stores are throughput.py's seeded ones (.cache/throughput/; seeded by the baseline's server when missing).
- The queries: one to sixteen of the driver's words and a few question words, questions, long context queries;
  top_k 5, 10 or 20; explain on every fourth. Seeded, so every run asks the same.
- Their vectors are embedded once here and handed to both sides: the model is not what is compared. `now` is fixed.
- Each side runs in a process of its own with its `src/` first on the path (a temporary worktree for the baseline).
- `--stores`: any store files instead, such as bench/context.py's per-user ones (`--stores DIR`: facts, kept messages
  and replies, episodes, entity graphs, which the seeded stores have none of), each searched in every user's scope it
  holds with queries made of that user's memories (some of their words, a whole memory, one of QUESTIONS), and the
  hits of each search counted as reviewed (record_access) before the next, as the read path does.
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
from collections.abc import Sequence
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
    """In the child: every query searched with the code first on this process's path. The queries file: the user of
    each search and its query, and whether to count each search's hits as reviewed."""
    from datetime import datetime

    import numpy as np

    from jiyi import build_embedder, build_store
    from jiyi.core.retrieval import RetrievalSettings, SearchRequest, hybrid_search
    from jiyi.records import Scope

    plan = json.loads(Path(queries_path).read_text(encoding="utf-8"))
    vectors = np.load(vectors_path)
    embedder = build_embedder("e5")  # its calibration; the vectors are given
    store = build_store(f"sqlite:///{store_path}")
    now = datetime.fromisoformat(NOW)
    found = []
    for i, ((user_id, query), vector) in enumerate(zip(plan["searches"], vectors, strict=True)):
        request = SearchRequest(query, Scope(user_id), top_k=(5, 10, 20)[i % 3], now=now, explain=i % 4 == 0)
        retrieval = hybrid_search(store, embedder, request, RetrievalSettings(), query_vector=vector)
        found.append([[hit.record.id, hit.score, hit.relevance, json.dumps(hit.details, sort_keys=True, default=str)]
                      for hit in retrieval.hits])
        if plan["refresh"]:
            store.record_access([hit.record.id for hit in retrieval.hits], now)
    Path(out_path).write_text(json.dumps(found), encoding="utf-8")


def store_queries(path: Path, per_user: int) -> list[list[str]]:
    """[user, query] for every user of a store file: some words of one of their memories, a whole memory, or one of
    QUESTIONS with a word of theirs (seeded by the file's name)."""
    import sqlite3

    from jiyi.text import query_terms

    pick = random.Random(path.name)
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        rows = db.execute("SELECT user_id, content FROM memories WHERE deleted_at IS NULL AND user_id IS NOT NULL "
                          "ORDER BY rowid").fetchall()
    finally:
        db.close()
    texts: dict[str, list[str]] = {}
    for user_id, content in rows:
        texts.setdefault(user_id, []).append(content)
    searches = []
    for user_id, contents in texts.items():
        for i in range(per_user):
            text = pick.choice(contents)
            words = query_terms(text) or [text]
            kind = i % 4
            query = (text if kind == 0 else f"{pick.choice(QUESTIONS)} {pick.choice(words)}" if kind == 1
                     else " ".join(pick.sample(words, min(len(words), pick.randint(1, 4)))))
            searches.append([user_id, query])
    return searches


def run_side(src: Path, store: Path, work: Path, name: str, queries: str = "queries.json",
             vectors: str = "vectors.npy") -> list[Any]:
    copy = work / f"{name}.db"
    shutil.copy(store, copy)
    out = work / f"{name}.json"
    env = {**os.environ, "PYTHONPATH": str(src)}
    subprocess.run([sys.executable, __file__, "--child", str(copy), str(work / queries), str(work / vectors),
                    str(out)], check=True, env=env, cwd=ROOT / "bench")
    result: list[Any] = json.loads(out.read_text(encoding="utf-8"))
    return result


def _brief(hits: list[Any]) -> list[tuple[str, float]]:
    return [(hit[0][:8], hit[1]) for hit in hits[:5]]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", metavar="REV", help="the commit to compare this working tree with")
    parser.add_argument("--memories", type=int, nargs="+", default=[2000, 10000])
    parser.add_argument("--queries", type=int, default=500, help="per store size; with --stores, per user")
    parser.add_argument("--stores", type=Path, nargs="+", help="store files to search instead of the seeded ones")
    parser.add_argument("--child", nargs=4, metavar=("STORE", "QUERIES", "VECTORS", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        search_all(*args.child)
        return 0
    if not args.baseline:
        parser.error("--baseline REV is required")

    import numpy as np

    from jiyi.embedders import build_embedder

    embedder = build_embedder("e5")
    asked = queries(args.queries)
    differing = 0
    with ExitStack() as stack:
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="jiyi-same-")))
        baseline = commit_of(args.baseline)
        baseline_src = stack.enter_context(checkout(args.baseline))
        if args.stores:
            for i, path in enumerate(args.stores):
                plan = store_queries(path, args.queries)
                (work / f"plan-{i}.json").write_text(json.dumps({"searches": plan, "refresh": True},
                                                                ensure_ascii=False), encoding="utf-8")
                np.save(work / f"vectors-{i}.npy",
                        np.asarray(embedder.embed_queries([query for _, query in plan]), dtype=np.float32))
                before = run_side(baseline_src, path, work, f"baseline-{i}", f"plan-{i}.json", f"vectors-{i}.npy")
                after = run_side(ROOT / "src", path, work, f"head-{i}", f"plan-{i}.json", f"vectors-{i}.npy")
                differing += report(path.name, plan, before, after, baseline)
            return 1 if differing else 0
        (work / "queries.json").write_text(json.dumps({"searches": [["load", query] for query in asked],
                                                       "refresh": False}, ensure_ascii=False), encoding="utf-8")
        np.save(work / "vectors.npy", np.asarray(embedder.embed_queries(asked), dtype=np.float32))
        for n in args.memories:
            store = seeded_store(n, baseline, baseline_src)
            before = run_side(baseline_src, store, work, f"baseline-{n}")
            after = run_side(ROOT / "src", store, work, f"head-{n}")
            differing += report(f"{n} memories", asked, before, after, baseline)
    return 1 if differing else 0


def report(label: str, queries: Sequence[Any], before: list[Any], after: list[Any], baseline: str) -> int:
    """Print how many of the queries' hits differ between the two sides (and the first few); returns that count."""
    changed = [i for i, (old, new) in enumerate(zip(before, after, strict=True)) if old != new]
    print(f"{label}: {len(queries)} queries, {sum(map(len, before))} hits at {baseline}; "
          f"{len(changed)} queries differ in this working tree", flush=True)
    for i in changed[:5]:
        print(f"  {queries[i]!r}\n    {baseline}: {_brief(before[i])}\n    here: {_brief(after[i])}")
    return len(changed)


if __name__ == "__main__":
    sys.exit(main())
