"""Two stored memories compared with each other: on which range does an embedder put them, and what do the write
path's scarcity (importance) and the lifecycle's consolidation make of it?

    python bench/pairs.py                      # e5 and USE on bench/data/pair_eval.json → bench/results/pairs.json
    python bench/pairs.py --data bench/data/pair_eval_holdout.json --out bench/results/pairs-holdout.json

A pair set holds pairs of one user's memories (extracted facts, raw turns, a fact beside the turn it came from),
labelled by what they are to each other:
- same: one fact in other words — consolidation may fold them, the second is not new;
- conflict: one attribute, another value (moved city, quit a habit) — never folded;
- related: one topic or person, another fact — both kept;
- unrelated: other topics, often in the same style ("用户…" / "The user …").

Reported per embedder and language: cosine p10 / p50 / p90 per label; how well cosine tells "same" from the other
labels (ROC AUC); the range measured here (unrelated = p90 of unrelated cosines, same = p90 of same ones, as
bench/embedders.py measures the query range); and for three ranges — the query range used for every pair (before),
the embedder's declared pair range (Calibration.for_pair), the range measured on this set — the median scarcity per
label (1 − calibrated similarity; new information should be scarce) and the share of each label above the
consolidation bar, by vector alone and with consolidation's word test (core.consolidation.said_by).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from jiyi import build_embedder
from jiyi.core.consolidation import SIMILARITY
from jiyi.embedders.base import Calibration, Embedder
from jiyi.text import analyze_for_index
from report import write_report

ROOT = Path(__file__).resolve().parent
DATA = ROOT / "data" / "pair_eval.json"
LABELS = ("same", "conflict", "related", "unrelated")
LANGUAGES = ("zh", "en")


def load_pairs(path: Path) -> list[dict[str, str]]:
    pairs = json.loads(path.read_text(encoding="utf-8"))["pairs"]
    for pair in pairs:
        if pair["label"] not in LABELS or pair["lang"] not in LANGUAGES:
            raise ValueError(f"{path.name}: pair {pair['id']} has label {pair['label']!r}, lang {pair['lang']!r}")
    return list(pairs)


def pair_cosines(embedder: Embedder, pairs: Sequence[dict[str, str]]) -> np.ndarray:
    first = embedder.embed_documents([p["a"] for p in pairs])
    second = embedder.embed_documents([p["b"] for p in pairs])
    return np.einsum("ij,ij->i", first, second).astype(float)


def roc_auc(positive: np.ndarray, negative: np.ndarray) -> float | None:
    """The chance that a random positive pair has a higher cosine than a random negative one (ties count half)."""
    if not len(positive) or not len(negative):
        return None
    greater = (positive[:, None] > negative[None, :]).mean()
    ties = (positive[:, None] == negative[None, :]).mean()
    return round(float(greater + ties / 2), 3)


def spread(values: np.ndarray) -> dict[str, float]:
    p10, p50, p90 = np.percentile(values, [10, 50, 90]) if len(values) else (np.nan,) * 3
    return {"p10": round(float(p10), 3), "p50": round(float(p50), 3), "p90": round(float(p90), 3), "n": len(values)}


def folded_by_words(first: str, second: str) -> bool:
    """Consolidation's word test: the shorter one's every word is in the other (said_by)."""
    words = [frozenset(analyze_for_index(text).terms.split()) for text in (first, second)]
    return words[0] <= words[1] or words[1] <= words[0]


def under(calibration: Calibration, pairs: Sequence[dict[str, str]], cosines: np.ndarray) -> dict[str, Any]:
    """Scarcity and the consolidation bar per label, on one range."""
    relevance = np.array([calibration.relevance(c) for c in cosines])
    out: dict[str, Any] = {"range": [calibration.unrelated, calibration.same]}
    for label in LABELS:
        chosen = np.array([p["label"] == label for p in pairs])
        if not chosen.any():
            continue
        above = relevance[chosen] > SIMILARITY
        words = np.array([folded_by_words(p["a"], p["b"]) for p, c in zip(pairs, chosen, strict=True) if c])
        out[label] = {"scarcity_p50": round(float(np.median(1 - relevance[chosen])), 3),
                      "above_bar": round(float(above.mean()), 3),
                      "folded": round(float((above & words).mean()), 3)}
    return out


def measured_range(labels: np.ndarray, cosines: np.ndarray) -> Calibration:
    return Calibration(unrelated=round(float(np.percentile(cosines[labels == "unrelated"], 90)), 3),
                       same=round(float(np.percentile(cosines[labels == "same"], 90)), 3))


def bench_embedder(name: str, pairs: Sequence[dict[str, str]]) -> dict[str, Any]:
    embedder = build_embedder(name)
    cosines = pair_cosines(embedder, pairs)
    calibration = embedder.calibration
    result: dict[str, Any] = {"model_id": embedder.model_id}
    for lang in LANGUAGES:
        chosen = [i for i, p in enumerate(pairs) if p["lang"] == lang]
        if not chosen:
            continue
        these = [pairs[i] for i in chosen]
        values = cosines[chosen]
        labels = np.array([p["label"] for p in these])
        by_label = {label: values[labels == label] for label in LABELS}
        measured = measured_range(labels, values)
        result[lang] = {
            "cosine": {label: spread(by_label[label]) for label in LABELS},
            "auc_same_vs": {label: roc_auc(by_label["same"], by_label[label]) for label in LABELS[1:]},
            "measured_range": [measured.unrelated, measured.same],
            "before": under(Calibration(calibration.unrelated, calibration.same), these, values),
            "declared": under(calibration.for_passages(cjk=lang == "zh"), these, values),
            "measured": under(measured, these, values),
        }
    return result


def markdown(results: dict[str, Any]) -> str:
    lines = []
    for name, result in results.items():
        for lang in LANGUAGES:
            if lang not in result:
                continue
            r = result[lang]
            lines.append(f"\n{name} ({result['model_id']}), {lang}: cosine p10 / p50 / p90 per label; "
                         f"measured range {r['measured_range'][0]:.3f} → {r['measured_range'][1]:.3f}")
            lines.append("| | " + " | ".join(LABELS) + " |")
            lines.append("|---|" + "---|" * len(LABELS))
            lines.append("| cosine | " + " | ".join(
                f"{c['p10']:.3f} / {c['p50']:.3f} / {c['p90']:.3f}" for c in r["cosine"].values()) + " |")
            lines.append("| AUC same vs | – | " + " | ".join(
                f"{v:.3f}" if v is not None else "–" for v in r["auc_same_vs"].values()) + " |")
            for key in ("before", "declared", "measured"):
                u = r[key]
                lines.append(f"| {key} {u['range'][0]:.3f} → {u['range'][1]:.3f}: scarcity p50; above bar; folded | "
                             + " | ".join(f"{u[label]['scarcity_p50']:.2f}; {u[label]['above_bar']:.2f}; "
                                          f"{u[label]['folded']:.2f}" if label in u else "–" for label in LABELS)
                             + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--embedders", default="e5,use")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "pairs.json")
    args = parser.parse_args(argv)
    pairs = load_pairs(args.data)
    results = {name: bench_embedder(name, pairs) for name in args.embedders.split(",")}
    print(f"memory pairs ({args.data.name}, {len(pairs)} pairs)")
    print(markdown(results))
    write_report(args.out, {"data": args.data.name, "pairs": len(pairs), "bar": SIMILARITY, "results": results})


if __name__ == "__main__":
    main()
