"""What each query-enhancement stage adds, on a hand-written Chinese companion-chat set.

    python bench/zh_retrieval.py                 # e5, all users; writes bench/results/zh_retrieval.json
    python bench/zh_retrieval.py --users dev     # u1-u4 only (the half the relevance gate was calibrated on)

bench/data/zh_retrieval_eval.json: 8 users, 255 memories, 140 queries (direct, paraphrase, recommendation,
weak_context, weak_oblique, none), each with its recent conversation and the rewrite a good LLM would write (written by
a helper blind to jiyi's retrieval code). Every query goes through `AsyncMemory.context` — the same call as
POST /context — with the chain cut at each stage:

    question            the last user message only
    + context           then the recent conversation + "User question: …"
    + rewrite           then an LLM rewrite (a scripted LLM answering with the set's rewrite: the real code path,
                        an ideal rewriter; a hosted LLM's rewrites would be somewhat worse)

bench/data/zh_reminder_unanswered.json adds 32 questions asking to be reminded of something no memory holds ("我之前跟
你说我看中的是哪款车来着？"; written by a helper blind to the code; half near a stored memory of the same topic), asked
with no conversation before them: the price of bringing a reminder question's best memory from a lower bar
(read_path.py). Reported apart, as "unanswered reminders": any injection, and an injection other than the memory of
the same topic.

And, for comparison, "top-5, no gate": the question's five best memories injected whatever their relevance (what a
client calling /search and injecting the results gets). Per kind: hit = at least one relevant memory injected,
recall = share of the relevant memories injected, precision = share of injected memories that are relevant;
for "none" queries, the false-injection rate (anything injected at all).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

from jiyi import build_embedder, build_store
from jiyi.llms.scripted import ScriptedLLM
from jiyi.memory import AsyncMemory
from jiyi.read_path import ReadSettings
from report import write_report

ROOT = Path(__file__).resolve().parent
DATA = ROOT / "data" / "zh_retrieval_eval.json"
REMINDERS = ROOT / "data" / "zh_reminder_unanswered.json"
UNANSWERED = "unanswered reminders"
DEV_USERS = {"u1", "u2", "u3", "u4"}
KINDS = ["direct", "paraphrase", "recommendation", "weak_context", "weak_oblique", "none"]
STRATEGIES: dict[str, dict[str, Any]] = {
    "question": {"context_messages": 0, "rewrite": False},
    "+ context": {"rewrite": False},
    "+ rewrite": {"rewrite": True},
    "top-5, no gate": {"context_messages": 0, "rewrite": False, "min_relevance": 0.0},
}


def rewriter(rewrites: dict[str, str]) -> Callable[[Any], str]:
    """The labelled rewrite of each question; a question the set has none for (the unanswered reminders) is "rewritten"
    as itself, as a model with nothing to add would."""
    def answer(messages: Any) -> str:
        question = json.loads(messages[-1]["content"])["user_question"]
        return rewrites.get(question, question)

    return answer


async def load(memory: AsyncMemory, data: dict[str, Any], users: set[str]) -> dict[str, str]:
    """Store every memory verbatim; returns jiyi id -> the set's id."""
    ids = {}
    for user in data["users"]:
        if user["user_id"] not in users:
            continue
        for item in user["memories"]:
            result = await memory.add([{"role": "user", "content": item["text"]}], user_id=user["user_id"],
                                      infer=False, timestamp=item["created_at"])
            ids[result["results"][0]["id"]] = item["id"]
    return ids


async def evaluate(memory: AsyncMemory, data: dict[str, Any], users: set[str], ids: dict[str, str]) -> dict[str, Any]:
    names = {u["user_id"]: (u.get("user_name"), u.get("char_name")) for u in data["users"]}
    rows: dict[str, list[dict[str, Any]]] = {name: [] for name in STRATEGIES}
    reminders = json.loads(REMINDERS.read_text(encoding="utf-8"))["queries"]
    unanswered = [{**q, "kind": UNANSWERED, "context": [], "relevant": []} for q in reminders]
    for query in [*data["queries"], *unanswered]:
        if query["user_id"] not in users:
            continue
        messages = [{"role": "system", "content": "你是一个温暖的陪伴型助手。"}, *query["context"],
                    {"role": "user", "content": query["question"]}]
        user_name, char_name = names[query["user_id"]]
        relevant = set(query["relevant"])
        for name, options in STRATEGIES.items():
            result = await memory.context(messages, user_id=query["user_id"], user_name=user_name,
                                          char_name=char_name, deadline=10.0, **options)
            injected = [ids[m["id"]] for m in result["memories"]]
            found = relevant & set(injected)
            decided = next((s["stage"] for s in result["stages"] if s["outcome"] == "hit"), None)
            rows[name].append({"id": query["id"], "kind": query["kind"], "injected": injected,
                               "hit": bool(found) if relevant else not injected,
                               "recall": len(found) / len(relevant) if relevant else None,
                               "precision": len(found) / len(injected) if injected and relevant else None,
                               "off_topic": bool(set(injected) - {query.get("near")}),
                               "stage": decided, "degraded": result["degraded"],
                               "elapsed_ms": result["elapsed_ms"]})
    return rows


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    table: dict[str, Any] = {}
    for kind in [*KINDS, "all but none", UNANSWERED]:
        chosen = [r for r in rows if (r["kind"] == kind if kind != "all but none" else r["kind"] in KINDS[:-1])]
        if not chosen:
            continue
        if kind in ("none", UNANSWERED):
            table[kind] = {"n": len(chosen), "false_injection": round(1 - statistics.mean(r["hit"] for r in chosen), 3)}
            if kind == UNANSWERED:
                table[kind]["off_topic_injection"] = round(statistics.mean(r["off_topic"] for r in chosen), 3)
            continue
        precisions = [r["precision"] for r in chosen if r["precision"] is not None]
        table[kind] = {
            "n": len(chosen),
            "hit": round(statistics.mean(r["hit"] for r in chosen), 3),
            "recall": round(statistics.mean(r["recall"] for r in chosen), 3),
            "precision": round(statistics.mean(precisions), 3) if precisions else None,
            "empty": round(statistics.mean(not r["injected"] for r in chosen), 3),
        }
    stages: dict[str, int] = {}
    for r in (r for r in rows if r["kind"] in KINDS):
        stages[r["stage"] or "nothing"] = stages.get(r["stage"] or "nothing", 0) + 1
    latencies = sorted(r["elapsed_ms"] for r in rows)
    table["decided_by"] = stages
    table["latency_ms"] = {"p50": latencies[len(latencies) // 2], "max": latencies[-1]}
    return table


def print_table(results: dict[str, dict[str, Any]]) -> None:
    print("| strategy | " + " | ".join(KINDS[:-1]) + " | all but none | none: false injections | "
          "unanswered reminders: any / off-topic injection |")
    print("|---|" + "---|" * (len(KINDS) + 2))
    for name, table in results.items():
        cells = [f"{table[k]['hit']:.2f} / {table[k]['recall']:.2f}" if k in table else "-"
                 for k in [*KINDS[:-1], "all but none"]]
        reminders = table[UNANSWERED]
        print(f"| {name} | " + " | ".join(cells) + f" | {table['none']['false_injection']:.2f} | "
              f"{reminders['false_injection']:.2f} / {reminders['off_topic_injection']:.2f} |")
    print("(cells: hit / recall of relevant memories in the injected block)")
    for name, table in results.items():
        print(f"{name}: decided by {table['decided_by']}, precision (all but none) "
              f"{table['all but none']['precision']}, latency {table['latency_ms']}")


async def run(args: argparse.Namespace) -> dict[str, Any]:
    data = json.loads(DATA.read_text(encoding="utf-8"))
    every = {u["user_id"] for u in data["users"]}
    users = {"dev": DEV_USERS, "test": every - DEV_USERS, "all": every}[args.users]
    rewrites = {q["question"]: q["rewrite"] for q in data["queries"]}
    memory = AsyncMemory(build_store("sqlite://:memory:"), build_embedder(args.embedder),
                         llm=ScriptedLLM(responder=rewriter(rewrites)),
                         read_settings=ReadSettings(refresh_access=False))
    try:
        ids = await load(memory, data, users)
        rows = await evaluate(memory, data, users, ids)
    finally:
        await memory.close()
    results = {name: summarise(strategy_rows) for name, strategy_rows in rows.items()}
    print(f"zh retrieval eval, users {args.users} ({len(users)}), embedder {args.embedder}, "
          f"{len(rows['question'])} queries")
    print_table(results)
    return {"users": args.users, "embedder": args.embedder, "results": results, "rows": rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--embedder", default="e5")
    parser.add_argument("--users", choices=["dev", "test", "all"], default="all")
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "zh_retrieval.json")
    args = parser.parse_args()
    report = asyncio.run(run(args))
    write_report(args.out, report)


if __name__ == "__main__":
    main()
