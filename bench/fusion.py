"""How much each recall path and the fusion contribute, on two data sets with opposite characters.

    python bench/fusion.py --embedder e5 --data eval     # bench/data/embedder_eval.json: MRR@10 per kind
    python bench/fusion.py --embedder e5 --data locomo   # LoCoMo dev split (../shared/data/locomo), cats 1-4: any@10

The hand-written set is paraphrase-heavy with lexical distractors (vectors win); LoCoMo is entity-heavy English chat
(keywords win). A fusion worth keeping must not fall far below the better path on either. LoCoMo is ingested the
quick way here (one memory per turn, "Speaker: text", one scope per conversation); the full harness comes later.
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from jiyi import Memory, build_embedder, build_store
from jiyi.core.fusion import PathHit, fuse
from jiyi.core.retrieval import (
    MIN_VECTOR_RELEVANCE,
    PathResult,
    SearchRequest,
    keyword_relevance,
    recall_by_keyword,
    recall_by_vector,
)
from jiyi.records import MemoryRecord, Scope

ROOT = Path(__file__).resolve().parent
LOCOMO = ROOT.parent.parent / "shared" / "data" / "locomo" / "locomo-dev.json"


class Case:
    def __init__(self, relevant: set[str], kind: str, vector: PathResult, keyword: PathResult,
                 ids: dict[str, str], records: dict[str, MemoryRecord]) -> None:
        self.relevant, self.kind, self.vector, self.keyword = relevant, kind, vector, keyword
        self.ids, self.records = ids, records


def _cases_for(memory: Memory, scope: str, texts: list[tuple[str, str]],
               questions: list[tuple[str, set[str], str]]) -> list[Case]:
    result = memory.add([{"role": "user", "content": text} for _, text in texts], user_id=scope, infer=False)
    ids = {item["id"]: own for item, (own, _) in zip(result["results"], texts, strict=True)}
    records = memory.store.get_many(list(ids))
    cases = []
    for question, relevant, kind in questions:
        request = SearchRequest(question, Scope(scope), 10)
        cases.append(Case(relevant, kind, recall_by_vector(memory.store, memory.embedder, request, 30),
                          recall_by_keyword(memory.store, request, 30), ids, records))
    return cases


def eval_set_cases(memory: Memory) -> list[Case]:
    data = json.loads((ROOT / "data" / "embedder_eval.json").read_text(encoding="utf-8"))
    texts = [(m["id"], m["text"]) for m in data["memories"]]
    questions = [(q["query"], set(q["relevant"]), q["kind"]) for q in data["queries"]]
    return _cases_for(memory, "u", texts, questions)


def _dia_ids(evidence: list[str]) -> set[str]:
    found = set()
    for part in re.split(r"[;\s]+", " ".join(evidence)):
        match = re.match(r"D:?(\d+):0*(\d+)$", part.strip())
        if match:
            found.add(f"D{int(match.group(1))}:{int(match.group(2))}")
    return found


def locomo_cases(memory: Memory) -> list[Case]:
    cases = []
    for conversation in json.loads(LOCOMO.read_text(encoding="utf-8")):
        turns = []
        for key, session in conversation["conversation"].items():
            if re.fullmatch(r"session_\d+", key) and isinstance(session, list):
                for turn in session:
                    caption = f" [shares a photo: {turn['blip_caption']}]" if turn.get("blip_caption") else ""
                    turns.append((turn["dia_id"], f"{turn['speaker']}: {turn['text']}{caption}"))
        questions = [(qa["question"], _dia_ids(qa.get("evidence", [])), str(qa["category"]))
                     for qa in conversation["qa"] if qa["category"] != 5 and _dia_ids(qa.get("evidence", []))]
        cases += _cases_for(memory, conversation["sample_id"], turns, questions)
    return cases


Order = Callable[[Case], list[str]]


def fused(memory: Memory, keyword_weight: float, weighted: bool) -> Order:
    calibration = memory.embedder.calibration

    def order(case: Case) -> list[str]:
        vector = [PathHit(h.memory_id, h.score,
                          max(calibration.relevance(h.score), MIN_VECTOR_RELEVANCE) if weighted else 1.0)
                  for h in case.vector.hits]
        keyword = [PathHit(h.memory_id, h.score,
                           keyword_relevance(case.keyword.terms, case.keyword.idf, case.records[h.memory_id])
                           if weighted else 1.0)
                   for h in case.keyword.hits]
        ranked = fuse({"vector": vector, "keyword": keyword}, {"vector": 1.0, "keyword": keyword_weight})
        return [f.memory_id for f in ranked]

    return order


def strategies(memory: Memory) -> dict[str, Order]:
    return {
        "vector only": lambda c: [h.memory_id for h in c.vector.hits],
        "keyword only": lambda c: [h.memory_id for h in c.keyword.hits],
        "plain RRF": fused(memory, 1.0, weighted=False),
        "relevance-weighted RRF (jiyi)": fused(memory, 1.0, weighted=True),
        "relevance-weighted RRF, keyword x0.5": fused(memory, 0.5, weighted=True),
        "relevance-weighted RRF, keyword x2": fused(memory, 2.0, weighted=True),
    }


def score(cases: list[Case], order: Order, metric: str) -> dict[str, float]:
    per_kind: dict[str, list[float]] = {}
    for case in cases:
        ranked = [case.ids[i] for i in order(case)][:10]
        if metric == "mrr@10":
            value = next((1 / (rank + 1) for rank, own in enumerate(ranked) if own in case.relevant), 0.0)
        else:
            value = float(bool(case.relevant & set(ranked)))
        per_kind.setdefault(case.kind, []).append(value)
        per_kind.setdefault("all", []).append(value)
    return {kind: round(float(np.mean(values)), 3) for kind, values in sorted(per_kind.items())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--embedder", default="e5")
    parser.add_argument("--data", choices=["eval", "locomo"], default="eval")
    args = parser.parse_args()
    memory = Memory(build_store("sqlite://:memory:"), build_embedder(args.embedder))
    cases = eval_set_cases(memory) if args.data == "eval" else locomo_cases(memory)
    metric = "mrr@10" if args.data == "eval" else "any@10"
    results: dict[str, Any] = {name: score(cases, order, metric) for name, order in strategies(memory).items()}
    kinds = list(next(iter(results.values())))
    print(f"{args.data}, embedder {args.embedder}, {metric}, {len(cases)} questions")
    print("| strategy | " + " | ".join(kinds) + " |\n|---|" + "---|" * len(kinds))
    for name, row in results.items():
        print(f"| {name} | " + " | ".join(f"{row[k]:.3f}" for k in kinds) + " |")
    memory.close()


if __name__ == "__main__":
    main()
