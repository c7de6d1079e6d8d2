"""Where each answerable question's answer goes in /context, beside /search's top 5 (issue 29).

    .venv/bin/python bench/context_breakdown.py --split dev --stores /tmp/ctx-stores-dev --out /tmp/breakdown.json

On the stores bench/context.py built (`--stores`: run bench/context.py with the same directory first), each probe
asked as bench/context.py asks it (a fresh conversation, the question alone), and its answer placed in one of:
- injected: /context injected it;
- under the bar: among /context's candidates, not injected, and the question is read as about the user;
- not about the user: among the candidates, but the question is not read as about the user (the higher bar);
- not a candidate, /search misses it too: /search's top 5 does not hold it either;
- not a candidate, lost at <step>: /search's top 5 holds it, and this step of /context's question stage took it
  out of the candidates: the search (top_k 6), the assistant's replies left out (_in_the_users_words), what a newer
  memory says changed (_still_standing: supersession), the cut to top_k.
The candidates are rebuilt here with ReadPath's own steps in the order ReadPath.recall takes them (the question
stage only; the probes have no earlier messages); what was injected is /context's own answer.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from context import SimulatedClock, judge, load
from jiyi import build_embedder, build_store
from jiyi.core.intent import asks_about_the_user, asks_to_be_reminded
from jiyi.core.retrieval import SearchRequest
from jiyi.memory import AsyncMemory
from jiyi.read_path import ReadSettings, RecallRequest
from jiyi.records import Category, Scope, SearchHit

STEPS = ("search", "assistant's replies", "supersession", "cut to top_k")


async def holds_answer(memory: AsyncMemory, ids: list[str], probe: dict[str, Any]) -> bool:
    records = [await memory.get(memory_id) for memory_id in ids]
    return any(judge(record, probe)[0] for record in records)


async def place(memory: AsyncMemory, user_id: str, probe: dict[str, Any], top_k: int = 5) -> str:
    question = " ".join(probe["question"].split())
    read = memory.read_path
    scope = Scope(user_id)
    context = await memory.context([{"role": "user", "content": question}], user_id=user_id)
    if await holds_answer(memory, [m["id"] for m in context["memories"]], probe):
        return "injected"
    searched = (await memory.search(question, user_id=user_id, top_k=top_k))["results"]
    retrieval = await read.search(SearchRequest(question, scope, top_k=top_k + 1), refresh=False)
    found = [h for h in retrieval.hits
             if h.record.category is not Category.MESSAGE or " ".join(h.record.content.split()) != question]
    users = read._in_the_users_words(found, top_k + 1, question)
    standing = read._still_standing(users, question)
    candidates: list[SearchHit] = standing[:top_k]
    if len(candidates) < top_k:
        candidates += read._answered_by_replies(found, candidates, question, RecallRequest([], scope),
                                                {question})[:top_k - len(candidates)]
    if await holds_answer(memory, [h.record.id for h in candidates], probe):
        about = (asks_to_be_reminded(question) or asks_about_the_user(question)
                 or read._speaks_of_what_it_knows(question, candidates))
        return "under the bar" if about else "not about the user"
    if not await holds_answer(memory, [r["id"] for r in searched], probe):
        return "not a candidate, /search misses it too"
    for step, hits in zip(STEPS, (found, users, standing, candidates), strict=True):
        if not await holds_answer(memory, [h.record.id for h in hits], probe):
            return f"not a candidate, lost at: {step}"
    return "not a candidate, lost at: ?"


async def breakdown(language: str, split: str, stores: Path, embedder: Any) -> list[dict[str, Any]]:
    rows = []
    for user in load(language, split):
        path = stores / f"{user['user_id']}.db"
        if not path.exists():
            raise SystemExit(f"{path} is missing: run bench/context.py --split {split} --stores {stores} first")
        clock = SimulatedClock()
        clock.now = datetime.fromisoformat(user["probes_at"]).astimezone(UTC)
        memory = AsyncMemory(build_store(f"sqlite:///{path}"), embedder, clock=clock,
                             read_settings=ReadSettings(refresh_access=False))
        try:
            for probe in user["probes"]:
                rows.append({"id": probe["id"], "language": language, "kind": probe["kind"],
                             "question": probe["question"], "where": await place(memory, user["user_id"], probe)})
        finally:
            await memory.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", default="dev")
    parser.add_argument("--languages", nargs="*", default=["zh", "en"])
    parser.add_argument("--stores", type=Path, required=True)
    parser.add_argument("--embedder", default="e5")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    embedder = build_embedder(args.embedder)
    report: dict[str, Any] = {"benchmark": "context_breakdown", "split": args.split, "results": {}, "rows": []}
    for language in args.languages:
        rows = asyncio.run(breakdown(language, args.split, args.stores, embedder))
        counts = Counter(row["where"] for row in rows)
        report["results"][language] = {"answerable": len(rows), **dict(sorted(counts.items()))}
        report["rows"] += rows
        print(f"{language} ({args.split}), {len(rows)} answerable:")
        for where, count in sorted(counts.items(), key=lambda item: -item[1]):
            print(f"    {count:3}  {where}")
    if args.out:
        args.out.write_text(json.dumps(report, ensure_ascii=False, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
