"""Signals that may tell "the answer is among /context's candidates" from "nothing stored answers this".

    .venv/bin/python bench/context_signals.py --split dev2 --stores /tmp/ctx-dev2 --out /tmp/signals-dev2.json

For every probe of bench/context.py (answerable questions, small talk, unanswerable questions), on a split's stores:
what /context injects with the default settings, and every candidate it could inject (ReadPath.recall with
min_relevance 0, as bench/context_bar.py collects them) with its relevance, plain cosine, each path's relevance, kind
and text, whether it holds the answer (bench/context.py's judge), and which of the question's words it holds. The
rows are for reading distributions (answerable against unanswerable, per language), never the held-out half.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from context import SimulatedClock, judge
from context_bar import each_user
from jiyi.core import answer_kinds
from jiyi.core.intent import asks_something, asks_to_be_reminded
from jiyi.core.lexicon import Lexicon
from jiyi.core.messages import ChatMessage
from jiyi.core.relevance_bar import cosine, language, scaled
from jiyi.core.retrieval import _indexed_words
from jiyi.memory import AsyncMemory
from jiyi.read_path import RecallRequest
from jiyi.records import Scope
from jiyi.text import normalize, query_terms


def candidate(hit: Any, question: str, terms: list[str], own: Any, verdict: tuple[bool, bool]) -> dict[str, Any]:
    paths = (hit.details or {}).get("paths", {})
    content = hit.record.content
    words, text = _indexed_words(content), normalize(content)
    raw = cosine(hit)
    return {"id": hit.record.id, "memory": content, "category": hit.record.category.value, "role": hit.record.role,
            "relevance": hit.relevance, "score": hit.score, "cosine": None if raw is None else scaled(raw, own),
            "paths": {p: v.get("relevance") for p, v in paths.items()},
            "holds_terms": [t for t in terms if Lexicon.holds(t, words, text)],
            "holds_kind": (answer_kinds.holds(kind, content)
                           if (kind := answer_kinds.asked_kind(question)) else None),
            "answer": verdict[0], "stale": verdict[1]}


async def collect_user(memory: AsyncMemory, clock: SimulatedClock, user: dict[str, Any]) -> list[dict[str, Any]]:
    clock.now = datetime.fromisoformat(user["probes_at"]).astimezone(UTC)
    read = memory.read_path
    asked = [(p["question"], p, p["kind"]) for p in user["probes"]] + [(n["text"], None, n["kind"])
                                                                         for n in user["nothing"]]
    rows = []
    for question, probe, kind in asked:
        context = await memory.context([{"role": "user", "content": question}], user_id=user["user_id"],
                                       user_name=user.get("user_name"), char_name=user.get("char_name"))
        request = RecallRequest([ChatMessage(role="user", content=question)], Scope(user_id=user["user_id"]),
                                min_relevance=0.0)
        hits = (await read.recall(request)).hits
        terms = query_terms(question)
        frequencies, total = read.store.document_frequencies(terms) if terms else ({}, 0)
        own = read.embedder.calibration.for_query(question)
        injected = [m["id"] for m in context["memories"]]
        items = [await memory.get(i) for i in injected]
        rows.append({
            "user": user["user_id"], "language": language(question), "question": question, "kind": kind,
            "answerable": probe is not None, "addressed": await read.addressed(question, hits, user.get("char_name")),
            "reminder": asks_to_be_reminded(question), "asks": asks_something(question),
            "asked_kind": answer_kinds.asked_kind(question), "terms": terms,
            "frequencies": {t: frequencies.get(t, 0) for t in terms}, "memories": total,
            "injected": injected, "stages": context["stages"],
            "injected_answer": [judge(item, probe)[0] for item in items] if probe else [],
            "candidates": [candidate(h, question, terms, own, judge(await memory.get(h.record.id), probe)
                                     if probe else (False, False)) for h in hits]})
    return rows


async def collect(split: str, stores: Path, languages: list[str]) -> list[dict[str, Any]]:
    return await each_user(split, stores, languages, collect_user)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", default="dev", choices=["dev", "dev2", "dev3"], help="never the held-out half")
    parser.add_argument("--stores", type=Path, required=True)
    parser.add_argument("--languages", nargs="*", default=["zh", "en"])
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    rows = asyncio.run(collect(args.split, args.stores, args.languages))
    args.out.write_text(json.dumps(rows, ensure_ascii=False, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
