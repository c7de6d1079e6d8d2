"""mem0's categories, assigned offline: how often jiyi's categoriser (jiyi/core/categories.py) puts a memory where a
person would, per category and language, and what it costs per fact.

    python bench/categories.py        # e5 on bench/data/category_eval.json → bench/results/categories.json
    python bench/categories.py --data other.json --embedder hashing --out /tmp/categories.json

A set holds memories as jiyi stores them (facts, and messages kept as said), each labelled with one to three of mem0's
default categories, the first the main one: {"items": [{"id", "lang", "text", "categories": [...]}]}.

Three ways are measured: words only, the embedder's similarity only, and both (what the write path does). For each,
per language and category (the items whose main category it is):
- main: the categoriser's first category is the item's main one;
- any: its first category is one of the item's;
and over all items the same two, with the precision of every category it gives (the share of them among the item's)
and its recall (the share of the item's it gives). The cost: CPU per fact for the words and the choice (the vector
is made for storage anyway), and the one-off embedding of the taxonomy's prototypes.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from jiyi import build_embedder
from jiyi.categorizing import Categorizer
from jiyi.core.categories import DEFAULT_NAMES, Taxonomy, default_taxonomy
from report import write_report

ROOT = Path(__file__).resolve().parent
DATA = ROOT / "data" / "category_eval.json"
LANGUAGES = ("zh", "en")
MODES = ("words", "similarity", "both")


def load_items(path: Path) -> list[dict[str, Any]]:
    items = json.loads(path.read_text(encoding="utf-8"))["items"]
    for item in items:
        unknown = [c for c in item["categories"] if c not in DEFAULT_NAMES]
        if item["lang"] not in LANGUAGES or not item["categories"] or unknown:
            raise ValueError(f"{path.name}: item {item['id']} has lang {item['lang']!r}, categories "
                             f"{item['categories']!r}")
    return list(items)


def predict(taxonomy: Taxonomy, categorizer: Categorizer, items: Sequence[dict[str, Any]], vectors: np.ndarray,
            mode: str) -> tuple[list[list[str]], float]:
    """Each item's categories, and the CPU milliseconds per fact it took."""
    similarity = categorizer.prototypes(taxonomy).similarity(vectors) if mode != "words" else None
    zeros = np.zeros(len(taxonomy.names), dtype=np.float32)
    started = time.process_time()
    out = []
    for i, item in enumerate(items):
        words = taxonomy.word_scores(item["text"]) if mode != "similarity" else zeros
        if similarity is not None and mode == "both":
            row = categorizer.prototypes(taxonomy).similarity(vectors[i])[0]  # per fact, as the write path does
        else:
            row = similarity[i] if similarity is not None else None
        out.append(taxonomy.choose(words, row))
    return out, (time.process_time() - started) * 1000 / max(len(items), 1)


def score(items: Sequence[dict[str, Any]], predicted: Sequence[list[str]]) -> dict[str, Any]:
    def rates(chosen: list[int]) -> dict[str, Any]:
        main = sum(1 for i in chosen if predicted[i][:1] == items[i]["categories"][:1])
        any_ = sum(1 for i in chosen if predicted[i][:1] and predicted[i][0] in items[i]["categories"])
        return {"n": len(chosen), "main": round(main / len(chosen), 3) if chosen else None,
                "any": round(any_ / len(chosen), 3) if chosen else None}

    report: dict[str, Any] = {}
    for lang in (*LANGUAGES, "all"):
        mine = [i for i, item in enumerate(items) if lang in ("all", item["lang"])]
        given = sum(len(predicted[i]) for i in mine)
        right = sum(len(set(predicted[i]) & set(items[i]["categories"])) for i in mine)
        wanted = sum(len(items[i]["categories"]) for i in mine)
        report[lang] = {
            **rates(mine),
            "precision": round(right / given, 3) if given else None,
            "recall": round(right / wanted, 3) if wanted else None,
            "per_category": {name: rates([i for i in mine if items[i]["categories"][0] == name])
                             for name in DEFAULT_NAMES},
        }
    return report


def confusion(items: Sequence[dict[str, Any]], predicted: Sequence[list[str]]) -> dict[str, dict[str, int]]:
    """Main category -> what was chosen first instead, for the items placed wrong (counts only, no texts)."""
    out: dict[str, dict[str, int]] = {}
    for item, chosen in zip(items, predicted, strict=True):
        first = chosen[0] if chosen else "-"
        if first not in item["categories"]:
            row = out.setdefault(item["categories"][0], {})
            row[first] = row.get(first, 0) + 1
    return out


def run(data: Path, embedder_name: str) -> dict[str, Any]:
    items = load_items(data)
    embedder = build_embedder(embedder_name)
    taxonomy = default_taxonomy()
    categorizer = Categorizer(embedder)
    started = time.perf_counter()
    categorizer.prototypes(taxonomy)
    prototype_seconds = time.perf_counter() - started
    vectors = embedder.embed_documents([item["text"] for item in items])  # as the write path stores them
    results: dict[str, Any] = {}
    for mode in MODES:
        predicted, ms = predict(taxonomy, categorizer, items, vectors, mode)
        results[mode] = {"ms_per_fact": round(ms, 3), **score(items, predicted)}
        if mode == "both":
            results[mode]["confusion"] = confusion(items, predicted)
    return {"data": data.name, "items": len(items), "embedder": embedder.model_id,
            "prototypes": len(taxonomy.prototypes), "prototype_seconds": round(prototype_seconds, 2),
            "results": results}


def print_table(report: dict[str, Any]) -> None:
    both = report["results"]["both"]
    print(f"{report['data']}: {report['items']} items, {report['embedder']}; prototypes: {report['prototypes']} "
          f"in {report['prototype_seconds']} s")
    for mode in MODES:
        r = report["results"][mode]
        print(f"  {mode:10} main {r['all']['main']:.3f} (zh {r['zh']['main']:.3f}, en {r['en']['main']:.3f})  "
              f"any {r['all']['any']:.3f}  precision {r['all']['precision']:.3f}  recall {r['all']['recall']:.3f}  "
              f"{r['ms_per_fact']:.3f} ms/fact")
    print(f"  {'category':22} {'zh main':>8} {'zh any':>7} {'en main':>8} {'en any':>7}")
    for name in DEFAULT_NAMES:
        zh, en = both["zh"]["per_category"][name], both["en"]["per_category"][name]
        print(f"  {name:22} {fmt(zh['main']):>8} {fmt(zh['any']):>7} {fmt(en['main']):>8} {fmt(en['any']):>7}")


def fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--embedder", default="e5")
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "categories.json")
    args = parser.parse_args(argv)
    report = run(args.data, args.embedder)
    print_table(report)
    write_report(args.out, report)


if __name__ == "__main__":
    main()
