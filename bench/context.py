"""What a chat gets: POST /context's injected memories for questions, changed facts and small talk, per language.

    .venv/bin/python bench/context.py                      # the development halves, zh and en
    .venv/bin/python bench/context.py --split holdout      # the held-out halves (report them apart, at the end)
    .venv/bin/python bench/context.py --split dev2         # a second development half, written blind later
    .venv/bin/python bench/context.py --split dev3         # a third, written blind later still (8 + 8 users)
    .venv/bin/python bench/context.py --verbose            # every probe's injected memories

bench/data/context_eval_{zh,en}.json and *_holdout.json: companion conversations over days (12 + 12 users per
language), written by helpers blind to the code, with questions a stored fact answers (direct, yes/no, advice,
after a change, about someone else, vague), small talk and questions nothing answers. Each user's turns go in as a
chat client sends them (each user message with the assistant's reply, one add with infer=true, the default offline
write path, at the session's time); the probes are asked at `probes_at`, each as a fresh conversation, through
AsyncMemory.context (what POST /context runs) with the default settings.

    .venv/bin/python bench/locomo.py --infer false --store /tmp/locomo.db     # once: a LoCoMo store (mem0 ingestion)
    .venv/bin/python bench/context.py --locomo /tmp/locomo.db                # /context on LoCoMo's questions

Judged per injected memory, from what it is and where it came from:
- holds the answer: its provenance cites an answer turn, or its text holds one of the answer's keywords;
- stale: it cites a turn that stated the superseded value, or holds one of its keywords, and holds no answer.
Reported: the answer injected (in the top 5 = what /context injects), at rank 1, a stale value injected (on the
after-change probes), something injected for small talk / unanswerable questions (and whether that was the
assistant's own earlier words), and /search's top 3 and top 5 for the same probes, beside.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
from collections import defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from jiyi import build_embedder, build_store
from jiyi.memory import AsyncMemory, Memory
from jiyi.read_path import ReadSettings
from report import write_report

ROOT = Path(__file__).resolve().parent
DATA = ROOT / "data"
RESULTS = ROOT / "results"
TURN_GAP = timedelta(minutes=2)  # between one pair of turns and the next within a session


class SimulatedClock:
    """The present as the conversations have it: set to each turn's time while ingesting, to probes_at after."""

    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


SPLIT_SUFFIX = {"dev": "", "holdout": "_holdout", "dev2": "_dev2", "dev3": "_dev3"}


def load(language: str, split: str) -> list[dict[str, Any]]:
    suffix = SPLIT_SUFFIX[split]
    return json.loads((DATA / f"context_eval_{language}{suffix}.json").read_text(encoding="utf-8"))["users"]


def pairs(turns: Sequence[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The turns as a chat client saves them: each user message with the assistant's reply that follows it."""
    saved: list[list[dict[str, Any]]] = []
    for turn in turns:
        message = {"role": turn["role"], "content": turn["content"], "id": turn["id"]}
        if turn["role"] == "user" or not saved:
            saved.append([message])
        else:
            saved[-1].append(message)
    return saved


async def ingest(memory: AsyncMemory, clock: SimulatedClock, user: dict[str, Any]) -> None:
    for session in user["sessions"]:
        start = datetime.fromisoformat(session["at"]).astimezone(UTC)
        for index, messages in enumerate(pairs(session["turns"])):
            clock.now = start + index * TURN_GAP
            await memory.add(messages, user_id=user["user_id"], timestamp=int(clock.now.timestamp()))
    await memory.settle()


def judge(item: dict[str, Any], probe: dict[str, Any]) -> tuple[bool, bool]:
    """(holds the current answer, holds only the superseded value) for one memory."""
    cited = {ref.get("external_id") for ref in item.get("provenance", [])}
    text = item["memory"].casefold()
    answer = bool(cited & set(probe["answer_turns"])) or any(k.casefold() in text for k in probe["answer_keywords"])
    stale = bool(cited & set(probe.get("stale_turns", []))) or any(
        k.casefold() in text for k in probe.get("stale_keywords", []))
    return answer, stale and not answer


async def details(memory: AsyncMemory, ids: Sequence[str]) -> list[dict[str, Any]]:
    return [await memory.get(memory_id) for memory_id in ids]


async def measure_user(memory: AsyncMemory, clock: SimulatedClock, user: dict[str, Any],
                       language: str, ingested: bool = False, names: bool = True) -> list[dict[str, Any]]:
    if not ingested:
        await ingest(memory, clock, user)
    clock.now = datetime.fromisoformat(user["probes_at"]).astimezone(UTC)
    rows = []
    # As SillyTavern sends them: who the user and the character are (--no-names: as a client that says neither).
    user_name, char_name = (user.get("user_name"), user.get("char_name")) if names else (None, None)
    for probe in user["probes"]:
        context = await memory.context([{"role": "user", "content": probe["question"]}], user_id=user["user_id"],
                                       user_name=user_name, char_name=char_name)
        injected = await details(memory, [m["id"] for m in context["memories"]])
        searched = (await memory.search(probe["question"], user_id=user["user_id"], top_k=5))["results"]
        verdicts = [judge(item, probe) for item in injected]
        found = [judge(item, probe)[0] for item in searched]
        rows.append({
            "id": probe["id"], "language": language, "kind": probe["kind"], "question": probe["question"],
            "answer_rank": next((i + 1 for i, (answer, _) in enumerate(verdicts) if answer), None),
            "stale_injected": any(stale for _, stale in verdicts),
            "search_rank": next((i + 1 for i, answer in enumerate(found) if answer), None),
            "injected": [{"memory": item["memory"], "category": item["category"], "role": item.get("role")}
                         for item in injected],
            "who_is_who": context.get("who_is_who"),
            "answer_in_who_is_who": any(k.casefold() in (context.get("who_is_who") or "").casefold()
                                        for k in probe["answer_keywords"]),
        })
    for item in user["nothing"]:
        context = await memory.context([{"role": "user", "content": item["text"]}], user_id=user["user_id"],
                                       user_name=user_name, char_name=char_name)
        injected = await details(memory, [m["id"] for m in context["memories"]])
        rows.append({"id": item["id"], "language": language, "kind": item["kind"], "question": item["text"],
                     "injected": [{"memory": i["memory"], "category": i["category"], "role": i.get("role")}
                                  for i in injected], "who_is_who": context.get("who_is_who")})
    return rows


def share(values: Sequence[bool]) -> float | None:
    return round(statistics.mean(values), 3) if values else None


def summarise(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    answerable = [r for r in rows if "answer_rank" in r]
    nothing = [r for r in rows if "answer_rank" not in r]
    changed = [r for r in answerable if r["kind"] == "after_change"]
    summary: dict[str, Any] = {
        "answerable": len(answerable),
        "answer_injected": share([r["answer_rank"] is not None for r in answerable]),
        "answer_at_rank_1": share([r["answer_rank"] == 1 for r in answerable]),
        "search_top3": share([r["search_rank"] is not None and r["search_rank"] <= 3 for r in answerable]),
        "search_top5": share([r["search_rank"] is not None for r in answerable]),
        "after_change": len(changed),
        "stale_injected": sum(r["stale_injected"] for r in changed),
        "stale_injected_any_probe": sum(r["stale_injected"] for r in answerable),
        "nothing": len(nothing),
        "something_injected": share([bool(r["injected"]) for r in nothing]),
        "assistant_words_injected": share([any(i["role"] == "assistant" for i in r["injected"]) for r in nothing]),
        # /context's "who is who" line (core/who_is_who.py) is not a memory: counted apart, and with the memories.
        "who_is_who_answerable": share([bool(r.get("who_is_who")) for r in answerable]),
        "answer_injected_or_in_line": share([r["answer_rank"] is not None or r.get("answer_in_who_is_who", False)
                                             for r in answerable]),
        "who_is_who_nothing": share([bool(r.get("who_is_who")) for r in nothing]),
        "anything_injected": share([bool(r["injected"] or r.get("who_is_who")) for r in nothing]),
    }
    by_kind: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_kind[row["kind"]].append(row)
    summary["by_kind"] = {
        kind: ({"n": len(group), "answer_injected": share([r["answer_rank"] is not None for r in group]),
                "answer_at_rank_1": share([r["answer_rank"] == 1 for r in group])}
               if "answer_rank" in group[0] else
               {"n": len(group), "something_injected": share([bool(r["injected"]) for r in group])})
        for kind, group in sorted(by_kind.items())}
    return summary


async def run_language(language: str, split: str, embedder: Any, stores: Path | None,
                       names: bool = True) -> list[dict[str, Any]]:
    """Each user in a store of its own: a temporary one, or with `stores`, a file kept there and reused when it
    exists (delete it after changing the write path)."""
    rows: list[dict[str, Any]] = []
    for user in load(language, split):
        clock = SimulatedClock()
        with tempfile.TemporaryDirectory() as folder:
            path = (stores or Path(folder)) / f"{user['user_id']}.db"
            ingested = path.exists()
            memory = AsyncMemory(build_store(f"sqlite:///{path}"), embedder, clock=clock,
                                 read_settings=ReadSettings(refresh_access=False))
            try:
                rows += await measure_user(memory, clock, user, language, ingested, names)
            finally:
                await memory.close()
    return rows


def print_summary(name: str, summary: dict[str, Any]) -> None:
    print(f"{name}: answer injected {summary['answer_injected']:.1%} (rank 1 {summary['answer_at_rank_1']:.1%}) of "
          f"{summary['answerable']}; /search top 3 {summary['search_top3']:.1%}, top 5 {summary['search_top5']:.1%}; "
          f"stale injected {summary['stale_injected']} of {summary['after_change']} after a change "
          f"({summary['stale_injected_any_probe']} over all probes); small talk / unanswerable: something injected "
          f"{summary['something_injected']:.1%} of {summary['nothing']} (assistant's words "
          f"{summary['assistant_words_injected']:.1%}); who-is-who line: {summary['who_is_who_answerable']:.1%} of "
          f"answerable (the answer injected, in a memory or the line: {summary['answer_injected_or_in_line']:.1%}), "
          f"{summary['who_is_who_nothing']:.1%} of small talk / unanswerable (memory or line: "
          f"{summary['anything_injected']:.1%})")
    for kind, values in summary["by_kind"].items():
        print(f"    {kind:13} {json.dumps(values)}")


def locomo_context(store: Path, embedder: Any) -> dict[str, Any]:
    """/context on LoCoMo's dev split (categories 1-4, questions with evidence), each question asked of both speakers'
    users and their injected memories merged by score (as bench/locomo.py merges searches): the share of questions
    whose evidence is injected, that get nothing, and, of those whose evidence /search's top 5 holds, the share
    /context injects it for."""
    import locomo

    memory = Memory(_async=AsyncMemory(build_store(f"sqlite:///{store}"), embedder,
                                       read_settings=ReadSettings(refresh_access=False)))
    rows = []
    try:
        for conversation in locomo.load_conversations():
            for question in conversation.questions:
                if not question.evidence or question.category == 5:
                    continue
                injected = []
                for user in conversation.user_ids("mem0"):
                    answer = memory.context([{"role": "user", "content": question.question}], user_id=user)
                    for item in answer["memories"]:
                        injected.append(locomo.retrieved_from({**memory.get(item["id"]), "score": item["score"]}))
                merged = locomo.merge_results([injected], 5)
                searched, _ = locomo.retrieve(memory, conversation, question.question, 5)
                wanted = set(question.evidence)
                rows.append({"category": question.category, "nothing": not merged,
                             "injected": bool(wanted & {d for r in merged for d in r.dia_ids}),
                             "search_top5": bool(wanted & {d for r in searched for d in r.dia_ids})})
    finally:
        memory.close()
    held = [r for r in rows if r["search_top5"]]
    return {"questions": len(rows), "evidence_injected": share([r["injected"] for r in rows]),
            "nothing_injected": share([r["nothing"] for r in rows]),
            "search_top5_holds_evidence": share([r["search_top5"] for r in rows]),
            "injected_where_search_top5_holds_it": share([r["injected"] for r in held])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", choices=sorted(SPLIT_SUFFIX), default="dev")
    parser.add_argument("--languages", nargs="*", default=["zh", "en"], help="none: only --locomo")
    parser.add_argument("--embedder", default="e5")
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--stores", type=Path, help="keep each user's store here, and reuse it when present")
    parser.add_argument("--locomo", type=Path, metavar="STORE",
                        help="also /context on LoCoMo's dev split, on a store bench/locomo.py made (mem0 ingestion)")
    parser.add_argument("--no-names", dest="names", action="store_false",
                        help="send /context no user_name / char_name (a client that knows neither)")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    embedder = build_embedder(args.embedder)
    report: dict[str, Any] = {"benchmark": "context", "split": args.split, "embedder": args.embedder,
                              "names": args.names, "results": {}}
    all_rows = []
    for language in args.languages:
        if args.stores:
            args.stores.mkdir(parents=True, exist_ok=True)
        rows = asyncio.run(run_language(language, args.split, embedder, args.stores, args.names))
        all_rows += rows
        report["results"][language] = summarise(rows)
        print_summary(f"{language} ({args.split})", report["results"][language])
        if args.verbose:
            for row in rows:
                mark = ("✓" if row["answer_rank"] else "✗") if "answer_rank" in row else ("·" if not row["injected"]
                                                                                          else "!")
                stale = " STALE" if row.get("stale_injected") else ""
                print(f"  {mark}{stale} [{row['kind']}] {row['question']}  (search rank {row.get('search_rank')})")
                for item in row["injected"]:
                    print(f"        - ({item['category']}/{item['role']}) {item['memory'][:110]}")
    if args.locomo:
        report["results"]["locomo"] = result = locomo_context(args.locomo, embedder)
        print(f"LoCoMo dev (/context): evidence injected {result['evidence_injected']:.1%} of {result['questions']} "
              f"questions, nothing injected {result['nothing_injected']:.1%}; /search top 5 holds the evidence for "
              f"{result['search_top5_holds_evidence']:.1%}, of which /context injects it for "
              f"{result['injected_where_search_top5_holds_it']:.1%}")
    report["rows"] = all_rows
    out = args.out or RESULTS / f"context-{args.split}.json"
    write_report(out, report)


if __name__ == "__main__":
    main()
