"""Chats between named speakers: is a question that names one of them answered by that speaker's own words, and what
does it cost where the answer is someone else's words? With and without `retrieval.other_speaker_weight`
(core/speakers.py).

    python bench/speakers.py             # e5; writes bench/results/speakers.json

bench/data/speaker_eval.json: 8 conversations (4 English, 4 Chinese; friends, colleagues, a family group, a user and
a role-play character), 45–70 turns over 4–6 sessions each, written by a helper who did not see the code, after the
mechanism was built; never used to tune it. Question kinds:
- names_one: names one speaker, answered by that speaker's words ("What did Dana cook for the party?");
- names_one_other_says: names one speaker, answered only by another's words ("What did Ben recommend to Dana?");
- addressed: addressed to a speaker by name, about something else ("Seraphina, what's my sister called?");
- no_name, names_two.

Each conversation is stored as one user's chat two ways: as a plain client sends it (role "user", "Name: text"), and
with each message's `name` (role "user", the text alone), as SillyTavern's extension sends it. Every turn is one add
(infer=False), a minute apart within its session, the session's date as the timestamp. Reported per kind: the share of
questions with an evidence turn at rank 1, in the top 5, in the top 10 (`search`, top_k 10).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from jiyi import build_embedder, build_store
from jiyi.core.retrieval import RetrievalSettings
from jiyi.memory import AsyncMemory
from jiyi.read_path import ReadSettings
from report import write_report

ROOT = Path(__file__).resolve().parent
DATA = ROOT / "data" / "speaker_eval.json"
KINDS = ["names_one", "names_one_other_says", "addressed", "no_name", "names_two"]
WEIGHTS = {"speakers' weight (default)": RetrievalSettings().other_speaker_weight, "off": 1.0}
SENDERS = ("prefix", "name")
TOP_K = 10


def message(sender: str, speaker: str, text: str) -> dict[str, str]:
    if sender == "prefix":
        return {"role": "user", "content": f"{speaker}: {text}"}
    return {"role": "user", "name": speaker, "content": text}


async def measure(weight: float, sender: str, data: dict[str, Any], embedder: Any) -> list[dict[str, Any]]:
    settings = ReadSettings(refresh_access=False, retrieval=RetrievalSettings(other_speaker_weight=weight))
    memory = AsyncMemory(build_store("sqlite://:memory:"), embedder, read_settings=settings)
    rows = []
    try:
        for conversation in data["conversations"]:
            user = conversation["id"]
            turn_of: dict[str, int] = {}  # memory id -> turn index
            index = 0
            for session in conversation["sessions"]:
                start = datetime.fromisoformat(session["date"])
                for minute, turn in enumerate(session["turns"]):
                    result = await memory.add([message(sender, turn["speaker"], turn["text"])], user_id=user,
                                              infer=False, timestamp=start + timedelta(minutes=minute))
                    turn_of[result["results"][0]["id"]] = index
                    index += 1
            for question in conversation["questions"]:
                found = await memory.search(question["question"], user_id=user, top_k=TOP_K)
                ranked = [turn_of[item["id"]] for item in found["results"]]
                evidence = set(question["evidence"])
                rank = next((i + 1 for i, turn in enumerate(ranked) if turn in evidence), None)
                rows.append({"conversation": user, "lang": conversation["lang"], "kind": question["kind"],
                             "question": question["question"], "rank": rank})
    finally:
        await memory.close()
    return rows


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    table: dict[str, Any] = {}
    for kind in [*KINDS, "all"]:
        chosen = [r for r in rows if kind in ("all", r["kind"])]
        if chosen:
            table[kind] = {"n": len(chosen), **{f"hit@{k}": round(statistics.mean(
                r["rank"] is not None and r["rank"] <= k for r in chosen), 3) for k in (1, 5, 10)}}
    return table


async def run(embedder_name: str, path: Path = DATA) -> dict[str, Any]:
    data = json.loads(path.read_text(encoding="utf-8"))
    embedder = build_embedder(embedder_name)
    results: dict[str, Any] = {}
    rows: dict[str, Any] = {}
    for sender in SENDERS:
        for name, weight in WEIGHTS.items():
            key = f"{sender}, {name}"
            rows[key] = await measure(weight, sender, data, embedder)
            results[key] = {lang: summarise([r for r in rows[key] if lang in ("all", r["lang"])])
                            for lang in ("en", "zh", "all")}
    questions = sum(len(c["questions"]) for c in data["conversations"])
    conversations = len(data["conversations"])
    print(f"named speakers ({path.name}), embedder {embedder_name}, {conversations} conversations, "
          f"{questions} questions")
    print("| sent as, weight | language | " + " | ".join(KINDS) + " | all |")
    print("|---|---|" + "---|" * (len(KINDS) + 1))
    for key, by_language in results.items():
        for lang, table in by_language.items():
            cells = [f"{table[k]['hit@1']:.2f} / {table[k]['hit@5']:.2f} / {table[k]['hit@10']:.2f} (n={table[k]['n']})"
                     if k in table else "–" for k in [*KINDS, "all"]]
            print(f"| {key} | {lang} | " + " | ".join(cells) + " |")
    print("(cells: evidence at rank 1 / in the top 5 / in the top 10)")
    return {"data": path.name, "embedder": embedder_name, "top_k": TOP_K, "results": results, "rows": rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--embedder", default="e5")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "speakers.json")
    args = parser.parse_args()
    report = asyncio.run(run(args.embedder, args.data))
    write_report(args.out, report)


if __name__ == "__main__":
    main()
