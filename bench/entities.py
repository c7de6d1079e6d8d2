"""Who is who (issue 32): how well jiyi's offline rules find the entities and relations of a user's life, per
language, on a labelled set of conversations (bench/data/entity_eval.json, the development half).

    python bench/entities.py                       # → bench/results/entities-dev.json
    python bench/entities.py --data other.json --out /tmp/entities.json

Each user's turns go through core/entities.extract_change one by one, as the write path sends them, with the graph
kept between turns. Then, per language:
- entities: precision (the share of the entities found that a label names: one of the found entity's name or aliases
  is the labelled entity's name or one of its aliases, case-folded) and recall (the share of labelled entities found);
- relations: (source, relation, target) against the labelled ones, whenever stated; symmetric relations
  (friend_of, lives_with, ...) without regard to direction, girlfriend_of / boyfriend_of / partner_of as one and
  fiance_of / fiancee_of as one (the set's own scoring suggestion);
- closed: of the labelled relations that end and were found, the share found ended.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent / "src"))

from jiyi.core.entities import SYMMETRIC, extract_change  # noqa: E402
from jiyi.stores.entities import USER, Graph  # noqa: E402
from report import write_report  # noqa: E402

DATA = ROOT / "data" / "entity_eval.json"
SAME = {"boyfriend_of": "partner_of", "girlfriend_of": "partner_of", "fiancee_of": "fiance_of"}

Triple = tuple[str, str, str]


def normal(source: str, relation: str, target: str) -> Triple:
    relation = SAME.get(relation, relation)
    if relation in SYMMETRIC and target < source:
        source, target = target, source
    return source, relation, target


def run_user(user: dict[str, Any]) -> tuple[Graph, float]:
    graph = Graph()
    said: list[str] = []
    seconds = 0.0
    for turn in user["turns"]:
        when = datetime.fromisoformat(turn["date"]).replace(tzinfo=UTC)
        started = time.perf_counter()
        extract_change(turn["user"], graph, said, when, [f"turn-{turn['index']}"])
        seconds += time.perf_counter() - started
        said.append(turn["user"])
    return graph, seconds


def label_of(user: dict[str, Any]) -> dict[str, str]:
    forms: dict[str, str] = {}
    for entity in user["entities"]:
        for form in [entity["name"], *entity["aliases"]]:
            forms.setdefault(form.casefold(), entity["id"])
    return forms


def score_user(user: dict[str, Any], graph: Graph) -> dict[str, Any]:
    forms = label_of(user)
    found: dict[str, str | None] = {USER: "user"}
    for entity in graph.entities.values():
        found[entity.id] = next((forms[f.casefold()] for f in entity.surface_forms() if f.casefold() in forms), None)
    gold = {normal(r["source"], r["relation"], r["target"]): r for r in user["relations"]}
    predicted: dict[Triple, bool] = {}  # triple -> ended
    unmatched: list[str] = []
    names = graph.names()
    for relation in graph.relations:
        source, target = found.get(relation.source), found.get(relation.target)
        if source is None or target is None:
            unmatched.append(relation.describe(names))
            continue
        triple = normal(source, relation.relation, target)
        predicted[triple] = predicted.get(triple, False) or relation.invalid_at is not None
    right = [t for t in predicted if t in gold]
    return {
        "entities_found": len(graph.entities),
        "entities_right": sum(1 for v in found.values() if v not in (None, "user")),
        "entities_labelled": len(user["entities"]),
        "entities_recalled": len({v for v in found.values() if v not in (None, "user")}),
        "relations_found": len(predicted) + len(unmatched),
        "relations_right": len(right),
        "relations_labelled": len(gold),
        "ending_labelled_found": sum(1 for t in right if gold[t]["invalid_turn"] is not None),
        "ending_found_ended": sum(1 for t in right if gold[t]["invalid_turn"] is not None and predicted[t]),
        "wrong": sorted([" ".join(t) for t in predicted if t not in gold] + unmatched),
        "missed": sorted(" ".join(t) for t in gold if t not in predicted),
    }


def ratio(a: int, b: int) -> float:
    return round(a / b, 3) if b else 0.0


def summarise(rows: Iterable[dict[str, Any]]) -> dict[str, Any]:
    rows = list(rows)

    def total(key: str) -> int:
        return sum(r[key] for r in rows)

    return {
        "users": len(rows),
        "entity_precision": ratio(total("entities_right"), total("entities_found")),
        "entity_recall": ratio(total("entities_recalled"), total("entities_labelled")),
        "relation_precision": ratio(total("relations_right"), total("relations_found")),
        "relation_recall": ratio(total("relations_right"), total("relations_labelled")),
        "relations": {"found": total("relations_found"), "right": total("relations_right"),
                      "labelled": total("relations_labelled")},
        "closed": ratio(total("ending_found_ended"), total("ending_labelled_found")),
    }


def evaluate(users: list[dict[str, Any]]) -> dict[str, Any]:
    per_user: dict[str, dict[str, Any]] = {}
    seconds = 0.0
    turns = 0
    for user in users:
        graph, spent = run_user(user)
        seconds += spent
        turns += len(user["turns"])
        per_user[user["id"]] = {"language": user["language"], **score_user(user, graph)}
    languages = sorted({u["language"] for u in users})
    return {
        "offline": {lang: summarise(r for r in per_user.values() if r["language"] == lang) for lang in languages},
        "ms_per_turn": round(1000 * seconds / max(turns, 1), 3),
        "users": per_user,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "entities-dev.json")
    args = parser.parse_args(argv)
    data = json.loads(args.data.read_text(encoding="utf-8"))
    report: dict[str, Any] = {"data": str(args.data.relative_to(ROOT.parent)) if args.data.is_relative_to(ROOT.parent)
                              else str(args.data), **evaluate(data["users"])}
    write_report(args.out, report)
    print(json.dumps(report["offline"], indent=1), f"\n{report['ms_per_turn']} ms a turn")
    return 0


if __name__ == "__main__":
    sys.exit(main())
