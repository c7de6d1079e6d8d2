"""Fact extraction and memory decisions on the hand-labelled set (bench/data/extraction_eval.json).

Extraction: every turn's user message (and the assistant reply, which must never be a source) goes to the extractor;
a predicted fact matches an expected one when it contains all of its `keys`, one to one per turn. Precision, recall
and F1 per language, and the false-positive rate on turns that hold no fact.

Decisions: each dialogue is replayed turn by turn through `Memory.add()` on an empty SQLite store; for each expected
fact that was extracted, the event the write path took on it is compared with the label ("UPDATE|DELETE" accepts
either).

    python bench/extraction.py                      # offline extractor (no LLM)
    python bench/extraction.py --data bench/data/extraction_eval_holdout.json   # the held-out set (never tune on it)
    python bench/extraction.py --llm openai:gpt-4o-mini --llm-base-url https://... --llm-api-key ...
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
DATA = HERE / "data" / "extraction_eval.json"
RESULTS = HERE / "results" / "extraction.json"


def matches(predicted: str, keys: list[str]) -> bool:
    text = predicted.lower()
    return all(key.lower() in text for key in keys)


def match_one_to_one(predicted: list[str], expected: list[dict[str, Any]]) -> list[tuple[int, int]]:
    """Pairs (expected index, predicted index); expected facts with fewer candidates are matched first."""
    options = {e: [p for p, text in enumerate(predicted) if matches(text, fact["keys"])]
               for e, fact in enumerate(expected)}
    used: set[int] = set()
    pairs = []
    for e in sorted(options, key=lambda i: len(options[i])):
        free = [p for p in options[e] if p not in used]
        if free:
            used.add(free[0])
            pairs.append((e, free[0]))
    return pairs


def _messages(turn: dict[str, Any]) -> list[dict[str, str]]:
    messages = [{"role": "user", "content": turn["user"]}]
    if turn.get("assistant"):
        messages.append({"role": "assistant", "content": turn["assistant"]})
    return messages


def evaluate(memory: Any, dialogues: list[dict[str, Any]], verbose: bool) -> dict[str, Any]:
    """One store for the whole run; dialogues are kept apart by user_id."""
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    decision_counts: dict[str, Counter[str]] = defaultdict(Counter)
    confusion: Counter[str] = Counter()
    misses: list[str] = []
    latencies: list[float] = []
    for d_index, dialogue in enumerate(dialogues):
        lang = dialogue["lang"]
        user = f"u{d_index}"
        for turn in dialogue["turns"]:
            started = time.perf_counter()
            memory.add(_messages(turn), user_id=user)
            latencies.append(time.perf_counter() - started)
            results = memory.last_event["results"]
            predicted = [r["memory"] for r in results if r["event"] in ("ADD", "UPDATE")]
            # A NONE or DELETE also shows the extractor found the fact; their text is the memory acted on.
            predicted_all = [r["memory"] for r in results]
            expected = turn["facts"]
            pairs = match_one_to_one(predicted_all, expected)
            for key in (lang, "all"):
                counts[key]["expected"] += len(expected)
                counts[key]["predicted"] += len([r for r in results if r["event"] != "BOOST"])
                counts[key]["matched"] += len(pairs)
                if not expected:
                    counts[key]["empty_turns"] += 1
                    counts[key]["empty_turns_with_facts"] += bool(predicted)
            for e, p in pairs:
                want = turn["events"][e].split("|")
                got = results[p]["event"]
                for key in (lang, "all"):
                    decision_counts[key]["judged"] += 1
                    decision_counts[key]["correct"] += got in want
                confusion[f"{turn['events'][e]}→{got}"] += 1
            if verbose and (len(pairs) < len(expected) or len(predicted_all) > len(pairs)):
                misses.append(f"{dialogue['id']}: {turn['user']!r}\n    expected {[f['text'] for f in expected]}"
                              f"\n    got {[(r['event'], r['memory']) for r in results]}")
    report: dict[str, Any] = {}
    for key, c in sorted(counts.items()):
        precision = c["matched"] / c["predicted"] if c["predicted"] else 1.0
        recall = c["matched"] / c["expected"] if c["expected"] else 1.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        d = decision_counts[key]
        report[key] = {
            "precision": round(precision, 3), "recall": round(recall, 3), "f1": round(f1, 3),
            "expected_facts": c["expected"], "predicted_facts": c["predicted"], "matched": c["matched"],
            "chit_chat_false_positive_rate": round(c["empty_turns_with_facts"] / c["empty_turns"], 3)
            if c["empty_turns"] else None,
            "decision_accuracy": round(d["correct"] / d["judged"], 3) if d["judged"] else None,
            "decisions_judged": d["judged"],
        }
    latencies.sort()
    report["decision_confusion"] = dict(sorted(confusion.items()))
    report["add_ms_p50"] = round(latencies[len(latencies) // 2] * 1000, 1)
    if verbose:
        print("\n".join(misses))
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--llm", help='LLM spec, e.g. "openai:gpt-4o-mini"; default: offline extraction')
    parser.add_argument("--llm-base-url")
    parser.add_argument("--llm-api-key")
    parser.add_argument("--embedder", default="e5")
    parser.add_argument("--verbose", action="store_true", help="print every turn whose facts differ from the labels")
    parser.add_argument("--no-save", action="store_true")
    parser.add_argument("--data", type=Path, default=DATA, help="a labelled set in the same format, e.g. "
                        "bench/data/extraction_eval_holdout.json (held out: measure on it, never tune on it)")
    parser.add_argument("--out", type=Path, default=None, help="where the report goes (default: results/"
                        "extraction.json, or extraction-<set>.json for another set)")
    args = parser.parse_args()

    sys.path.insert(0, str(HERE.parent / "src"))
    from jiyi import Memory, build_embedder, build_store
    from jiyi.llms import build_llm

    dialogues = json.loads(args.data.read_text(encoding="utf-8"))["dialogues"]
    out = args.out or (RESULTS if args.data == DATA else RESULTS.with_name(f"extraction-{args.data.stem}.json"))
    embedder = build_embedder(args.embedder)
    llm = build_llm(args.llm, base_url=args.llm_base_url, api_key=args.llm_api_key) if args.llm else None
    workdir = Path(tempfile.mkdtemp(prefix="jiyi-extraction-"))
    store = build_store(f"sqlite:///{workdir / 'eval.db'}")

    class Recording(Memory):
        """Memory that keeps the last add()'s full event (NONE included), which add() itself does not return."""

        last_event: dict[str, Any]

        def add(self, messages: Any, **kwargs: Any) -> dict[str, Any]:
            out = super().add(messages, **kwargs)
            self.last_event = self.get_event(out["event_id"])
            return out

    with Recording(store, embedder, llm=llm) as memory:
        report = evaluate(memory, dialogues, args.verbose)
    report["data"] = args.data.name
    report["extractor"] = args.llm or "offline"
    report["embedder"] = args.embedder
    report["turns"] = sum(len(d["turns"]) for d in dialogues)
    report["machine"] = {"python": platform.python_version(), "platform": platform.platform()}
    for key in ("zh", "en", "all"):
        r = report[key]
        print(f"{key:>3}: precision {r['precision']:.3f}  recall {r['recall']:.3f}  F1 {r['f1']:.3f}  "
              f"chit-chat FP {r['chit_chat_false_positive_rate']}  decisions {r['decision_accuracy']} "
              f"({r['decisions_judged']})")
    print("decisions:", report["decision_confusion"])
    print(f"add() p50 {report['add_ms_p50']} ms over {report['turns']} turns")
    if not args.no_save:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(report, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
