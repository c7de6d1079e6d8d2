"""bench/pairs.py on a tiny set with the hashing embedder: what it reports is computed from the pairs."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))  # bench/ is not a package
import pairs


def test_auc_counts_pairs_ranked_right_and_ties_as_half() -> None:
    assert pairs.roc_auc(np.array([0.9, 0.8]), np.array([0.1, 0.2])) == 1.0
    assert pairs.roc_auc(np.array([0.1]), np.array([0.9])) == 0.0
    assert pairs.roc_auc(np.array([0.5]), np.array([0.5])) == 0.5
    assert pairs.roc_auc(np.array([]), np.array([0.5])) is None


def test_a_run_reports_every_label_and_language(tmp_path: Path) -> None:
    rows = []
    for lang, same, other in [("en", ("User likes green tea", "User likes green tea"), ("User has a cat", "User runs")),
                              ("zh", ("用户喜欢喝绿茶", "用户喜欢喝绿茶"), ("用户养了一只猫", "用户在学吉他"))]:
        for n, label in enumerate(pairs.LABELS):
            first, second = same if label == "same" else other
            rows.append({"id": f"{lang}-{n}", "lang": lang, "label": label, "a": first, "b": second})
    data, out = tmp_path / "pairs.json", tmp_path / "out.json"
    data.write_text(json.dumps({"pairs": rows}), encoding="utf-8")
    pairs.main(["--embedders", "hashing", "--data", str(data), "--out", str(out)])
    report = json.loads(out.read_text(encoding="utf-8"))["results"]["hashing"]
    for lang in pairs.LANGUAGES:
        result = report[lang]
        assert result["cosine"]["same"]["p50"] == pytest.approx(1.0, abs=1e-3)  # the same text twice
        assert result["auc_same_vs"]["unrelated"] == 1.0
        assert result["measured"]["same"]["scarcity_p50"] == 0.0
        assert result["measured"]["same"]["folded"] == 1.0  # above the bar, and every word in the other
        assert result["measured"]["unrelated"]["above_bar"] == 0.0


def test_a_pair_with_an_unknown_label_is_refused(tmp_path: Path) -> None:
    data = tmp_path / "pairs.json"
    data.write_text(json.dumps({"pairs": [{"id": "x", "lang": "en", "label": "similar", "a": "a", "b": "b"}]}))
    with pytest.raises(ValueError, match="similar"):
        pairs.load_pairs(data)
