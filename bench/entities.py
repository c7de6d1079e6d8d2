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
  fiance_of / fiancee_of as one (the set's own scoring suggestion), either way round too (one couple);
- closed: of the labelled relations that end and were found, the share found ended.

With --retrieval, each user's turns are also added to a Memory (offline extraction, a SQLite store in a temporary
directory, the e5 embedder unless --embedder says otherwise) and each labelled question searched with and without
the graph path (retrieval.hybrid_search, RetrievalSettings.graph_limit 0 for "without"): per question kind and
language, the share of questions with an evidence turn among the top k (any@k) and with all of them (all@k), for k
3, 5 and 10, and the graph path's own time (p50 / p99 ms).

With --latency N, the graph path alone (retrieval.recall_by_graph) on one user with N memories, 300 entities each
mentioned by N/300 of them and 300 relations, in a SQLite file (and PostgreSQL with --pg URL): p50 / p99 ms over 300
questions naming one entity each. Nothing is labelled there; it is the cost a search pays for the graph.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent / "src"))

from jiyi import Memory, build_embedder, build_store  # noqa: E402
from jiyi.core.entities import SYMMETRIC, extract_change  # noqa: E402
from jiyi.core.retrieval import RetrievalSettings, SearchRequest, hybrid_search  # noqa: E402
from jiyi.embedders.base import Embedder  # noqa: E402
from jiyi.records import Scope  # noqa: E402
from jiyi.stores.entities import USER, Graph  # noqa: E402
from report import write_report  # noqa: E402

DATA = ROOT / "data" / "entity_eval.json"
SAME = {"boyfriend_of": "partner_of", "girlfriend_of": "partner_of", "fiancee_of": "fiance_of"}

Triple = tuple[str, str, str]


def normal(source: str, relation: str, target: str) -> Triple:
    relation = SAME.get(relation, relation)
    # girlfriend_of, boyfriend_of and partner_of as one (fiancée and fiancé too) say the same couple either way round:
    # "Grace fiancee_of Minsoo" is "Minsoo fiance_of Grace"
    if (relation in SYMMETRIC or relation in SAME.values()) and target < source:
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


TOP = 10
# A user of the set has 8-20 turns, so nearly every evidence turn is among any 10 memories: the shorter cuts are the
# ones that tell the two ways apart.
CUTS = (3, 5, TOP)
WITHOUT_GRAPH = RetrievalSettings(graph_limit=0)
WITH_GRAPH = RetrievalSettings()


def evidence_turns(memory: Memory, hits: list[Any]) -> list[int]:
    return [int(h.record.metadata["turn"]) for h in hits if "turn" in h.record.metadata]


def search_user(user: dict[str, Any], embedder: Embedder, folder: Path) -> list[dict[str, Any]]:
    """Add the user's turns to a fresh Memory, then search each question both ways."""
    store = build_store(f"sqlite:///{folder / (user['id'] + '.db')}")
    memory = Memory(store, embedder)
    try:
        for turn in user["turns"]:
            when = datetime.fromisoformat(turn["date"]).replace(tzinfo=UTC)
            memory.add([{"role": "user", "content": turn["user"]}, {"role": "assistant", "content": turn["assistant"]}],
                       user_id=user["id"], metadata={"turn": turn["index"]}, timestamp=int(when.timestamp()))
        memory.settle()
        rows = []
        for question in user["questions"]:
            request = SearchRequest(question["question"], Scope(user_id=user["id"]), top_k=TOP)
            row: dict[str, Any] = {"kind": question["kind"], "language": user["language"]}
            for name, settings in (("without", WITHOUT_GRAPH), ("with", WITH_GRAPH)):
                found = hybrid_search(store, embedder, request, settings)
                wanted = set(question["evidence_turns"])
                row[name] = {}
                for k in CUTS:
                    turns = set(evidence_turns(memory, found.hits[:k]))
                    row[name][f"any@{k}"], row[name][f"all@{k}"] = bool(turns & wanted), wanted <= turns
                if name == "with":
                    row["graph_ms"] = found.timings_ms["graph_ms"]
                    row["graph_hits"] = found.paths.get("graph", 0)
            rows.append(row)
        return rows
    finally:
        memory.close()


def summarise_questions(rows: list[dict[str, Any]]) -> dict[str, Any]:
    def share(subset: list[dict[str, Any]], way: str, key: str) -> float:
        return ratio(sum(1 for r in subset if r[way][key]), len(subset))

    groups: dict[str, list[dict[str, Any]]] = {"all": rows}
    for row in rows:
        groups.setdefault(row["kind"], []).append(row)
        groups.setdefault(row["language"], []).append(row)
    out: dict[str, Any] = {}
    for name, subset in groups.items():
        out[name] = {"questions": len(subset), **{f"{way}_{key}@{k}": share(subset, way, f"{key}@{k}")
                                                  for k in CUTS for way in ("without", "with")
                                                  for key in ("any", "all")}}
    times = sorted(r["graph_ms"] for r in rows)
    out["graph_ms"] = {"p50": round(statistics.median(times), 3),
                       "p99": round(times[min(len(times) - 1, int(0.99 * len(times)))], 3)}
    return out


def graph_latency(url: str, memories: int, embedder: Embedder) -> dict[str, float]:
    from jiyi.core.retrieval import recall_by_graph
    from jiyi.records import Event, HistoryEvent, MemoryRecord
    from jiyi.stores.entities import GraphChange, GraphEntity, GraphRelation

    store = build_store(url)
    try:
        store.bind_embedding(embedder.model_id, embedder.dims)
        people = [GraphEntity("person", f"Person{i}", [f"Person{i}", f"nick{i}"]) for i in range(300)]
        ids: list[str] = []
        for start in range(0, memories, 1000):
            records = [MemoryRecord(content=f"Person{i % 300} said thing {i}", scope=Scope(user_id="load"))
                       for i in range(start, min(start + 1000, memories))]
            store.insert(records, embedder.embed_documents([r.content for r in records]),
                         [HistoryEvent(r.id, Event.ADD, None, r.content) for r in records])
            ids += [r.id for r in records]
        relations = [GraphRelation(p.id, "friend_of", "user", [ids[i]]) for i, p in enumerate(people)]
        mentions = [(people[i % 300].id, memory_id) for i, memory_id in enumerate(ids)]
        store.save_graph("load", GraphChange(people, relations, mentions), datetime.now(UTC))
        settings = RetrievalSettings()
        times = []
        for i in range(300):
            request = SearchRequest(f"how is Person{(i * 7) % 300} doing these days?", Scope(user_id="load"))
            started = time.perf_counter()
            found = recall_by_graph(store, request, settings)
            times.append((time.perf_counter() - started) * 1000)
            assert found.hits, "the graph path found nothing"
        times.sort()
        return {"memories": memories, "p50_ms": round(statistics.median(times), 3),
                "p99_ms": round(times[int(0.99 * len(times))], 3)}
    finally:
        store.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "entities-dev.json")
    parser.add_argument("--retrieval", action="store_true", help="also search the questions with and without the graph")
    parser.add_argument("--embedder", default="e5")
    parser.add_argument("--latency", type=int, default=0, help="time the graph path on one user with this many "
                                                                 "memories")
    parser.add_argument("--pg", help="with --latency: also on this (empty) PostgreSQL database")
    args = parser.parse_args(argv)
    if args.latency:
        hashing = build_embedder("hashing")
        with tempfile.TemporaryDirectory() as folder:
            timed = {"sqlite": graph_latency(f"sqlite:///{folder}/load.db", args.latency, hashing)}
        if args.pg:
            timed["postgres"] = graph_latency(args.pg, args.latency, hashing)
        print(json.dumps(timed, indent=1))
        return 0
    data = json.loads(args.data.read_text(encoding="utf-8"))
    report: dict[str, Any] = {"data": str(args.data.relative_to(ROOT.parent)) if args.data.is_relative_to(ROOT.parent)
                              else str(args.data), **evaluate(data["users"])}
    if args.retrieval:
        embedder = build_embedder(args.embedder)
        with tempfile.TemporaryDirectory() as folder:
            rows = [row for user in data["users"] for row in search_user(user, embedder, Path(folder))]
        report["retrieval"] = {"embedder": embedder.model_id, **summarise_questions(rows)}
    write_report(args.out, report)
    print(json.dumps({k: report[k] for k in ("offline", "retrieval") if k in report}, indent=1),
          f"\n{report['ms_per_turn']} ms a turn")
    return 0


if __name__ == "__main__":
    sys.exit(main())
