"""Questions that ask to be reminded ("What was the name of my dog again?", "我之前说的那个软件叫啥来着"), with and
without the lower bar their best memory gets (ReadSettings.reminder_min_relevance; read_path.py), in English and
Chinese: also where the bar itself stands for each language (Calibration.for_query).

    python bench/reminders.py            # e5; writes bench/results/reminders.json

bench/data/reminder_eval.json: 6 users (3 English, 3 Chinese), ~40 memories each, written by a helper blind to the
code after the mechanism was built and never used to tune it. Per user: reminder questions in other words than their
memory, reminder questions no memory answers, and plain paraphrase questions without reminder wording. Every query
goes through `AsyncMemory.context` (as POST /context) with no conversation before it, so the question stage alone
decides. Reported per language and kind: hit = a relevant memory injected (answerable kinds), false injection =
anything injected (unanswered reminders, chit-chat).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
from pathlib import Path
from typing import Any

from jiyi import build_embedder, build_store
from jiyi.memory import AsyncMemory
from jiyi.read_path import ReadSettings
from report import write_report

ROOT = Path(__file__).resolve().parent
DATA = ROOT / "data" / "reminder_eval.json"
KINDS = ["reminder", "plain", "unanswered_reminder", "chit_chat"]
ANSWERABLE = ("reminder", "plain")
SETTINGS = {"lower bar (default)": ReadSettings(refresh_access=False),
            "usual bar only": ReadSettings(refresh_access=False, reminder_min_relevance=1.0)}


async def measure(settings: ReadSettings, data: dict[str, Any], embedder: Any) -> list[dict[str, Any]]:
    memory = AsyncMemory(build_store("sqlite://:memory:"), embedder, read_settings=settings)
    rows = []
    try:
        ids: dict[str, str] = {}
        for user in data["users"]:
            for item in user["memories"]:
                result = await memory.add([{"role": "user", "content": item["text"]}], user_id=user["user_id"],
                                          infer=False)
                ids[result["results"][0]["id"]] = item["id"]
        languages = {u["user_id"]: u["lang"] for u in data["users"]}
        for query in data["queries"]:
            result = await memory.context([{"role": "user", "content": query["question"]}],
                                          user_id=query["user_id"], deadline=10.0)
            injected = [ids[m["id"]] for m in result["memories"]]
            relevant = set(query["relevant"])
            rows.append({"id": query["id"], "lang": languages[query["user_id"]], "kind": query["kind"],
                         "injected": injected, "hit": bool(relevant & set(injected)) if relevant else None,
                         "false_injection": bool(injected) if not relevant else None})
    finally:
        await memory.close()
    return rows


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    table: dict[str, Any] = {}
    for lang in ("en", "zh", "all"):
        for kind in KINDS:
            chosen = [r for r in rows if r["kind"] == kind and lang in ("all", r["lang"])]
            if not chosen:
                continue
            key = "hit" if kind in ANSWERABLE else "false_injection"
            table[f"{lang} {kind}"] = {"n": len(chosen), key: round(statistics.mean(r[key] for r in chosen), 3)}
    return table


async def run(embedder_name: str) -> dict[str, Any]:
    data = json.loads(DATA.read_text(encoding="utf-8"))
    embedder = build_embedder(embedder_name)
    results, rows = {}, {}
    for name, settings in SETTINGS.items():
        rows[name] = await measure(settings, data, embedder)
        results[name] = summarise(rows[name])
    print(f"reminders, embedder {embedder_name}, {len(data['queries'])} questions")
    print("| setting | " + " | ".join(results[next(iter(results))]) + " |")
    print("|---|" + "---|" * len(results[next(iter(results))]))
    for name, table in results.items():
        cells = [f"{v.get('hit', v.get('false_injection')):.2f} (n={v['n']})" for v in table.values()]
        print(f"| {name} | " + " | ".join(cells) + " |")
    print("(hit for reminder / plain questions, false injection for unanswered reminders and chit-chat)")
    return {"embedder": embedder_name, "results": results, "rows": rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--embedder", default="e5")
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "reminders.json")
    args = parser.parse_args()
    report = asyncio.run(run(args.embedder))
    write_report(args.out, report)


if __name__ == "__main__":
    main()
