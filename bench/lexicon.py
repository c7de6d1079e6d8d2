"""The concept lexicon (src/jiyi/core/lexicon.json, word_forms.json) on question / memory pairs that share no content
word: does a word of the question meet a word of the memory through it — for pairs where the memory bears on the
question (it should), and for pairs where it does not, mostly hard ones that share a topic (it should not)?

    .venv/bin/python bench/lexicon.py                 # the development split
    .venv/bin/python bench/lexicon.py --split holdout # the held-out split (report apart)

bench/data/concept_pairs.json: 300 pairs per language, written by a helper blind to the code and the lexicon.
A question meets a memory when one of its words (jiyi.text terms) is held by the memory or reaches, through the
lexicon, a word the memory holds (retrieval.keyword_relevance's test).
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from jiyi.core.lexicon import Lexicon, lexicon
from jiyi.core.retrieval import _indexed_words
from jiyi.text import normalize, query_terms
from report import write_report

ROOT = Path(__file__).resolve().parent


def meets(question: str, memory: str, words: Lexicon) -> list[tuple[str, str]]:
    """The (question word, memory word) pairs that meet."""
    terms = query_terms(question)
    held, text = _indexed_words(memory), normalize(memory)
    return [(term, word) for term, met in words.reach(question, terms).items() for word in met
            if Lexicon.holds(word, held, text)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", choices=["dev", "holdout"], default="dev")
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    pairs = [p for p in json.loads((ROOT / "data" / "concept_pairs.json").read_text(encoding="utf-8"))["pairs"]
             if p["split"] == args.split]
    words = lexicon()
    counts: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for pair in pairs:
        met = meets(pair["question"], pair["memory"], words)
        kind = pair.get("kind", "related" if pair["related"] else "negative")
        cell = counts[pair["lang"]][kind]
        cell[0] += bool(met)
        cell[1] += 1
        if args.verbose and bool(met) != pair["related"]:
            verdict = 'MISS' if pair['related'] else 'FALSE'
            print(f"{verdict} [{pair['lang']}] {pair['question']} | {pair['memory']} {met}")
    report: dict[str, Any] = {"benchmark": "lexicon", "split": args.split, "results": {}}
    for lang, kinds in sorted(counts.items()):
        report["results"][lang] = {kind: {"met": met, "pairs": n, "share": round(met / n, 3)}
                                   for kind, (met, n) in sorted(kinds.items())}
        print(lang, {kind: f"{met}/{n} = {met / n:.1%}" for kind, (met, n) in sorted(kinds.items())})
    write_report(args.out or ROOT / "results" / f"lexicon-{args.split}.json", report)


if __name__ == "__main__":
    main()
