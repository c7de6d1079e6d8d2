"""bench/categories.py on a tiny set with the hashing embedder: its scores are counted from the items."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))  # bench/ is not a package
import categories


def test_main_and_any_are_counted_per_language_and_category() -> None:
    items = [{"id": "1", "lang": "en", "text": "a", "categories": ["food", "user_preferences"]},
             {"id": "2", "lang": "en", "text": "b", "categories": ["travel"]},
             {"id": "3", "lang": "zh", "text": "c", "categories": ["health", "food"]}]
    predicted = [["food"], ["misc"], ["food", "health"]]
    scored = categories.score(items, predicted)
    assert (scored["en"]["main"], scored["en"]["any"]) == (0.5, 0.5)
    assert (scored["zh"]["main"], scored["zh"]["any"]) == (0.0, 1.0)  # food is one of its categories, not the main
    assert scored["all"]["precision"] == round(3 / 4, 3) and scored["all"]["recall"] == round(3 / 5, 3)
    assert scored["en"]["per_category"]["travel"] == {"n": 1, "main": 0.0, "any": 0.0}
    assert scored["en"]["per_category"]["music"] == {"n": 0, "main": None, "any": None}
    assert categories.confusion(items, predicted) == {"travel": {"misc": 1}}


def test_a_run_reports_three_ways_and_the_cost(tmp_path: Path) -> None:
    items = [{"id": "1", "lang": "en", "text": "User has asthma and takes an inhaler", "categories": ["health"]},
             {"id": "2", "lang": "zh", "text": "用户春节要去三亚度假", "categories": ["travel"]}]
    data, out = tmp_path / "set.json", tmp_path / "out.json"
    data.write_text(json.dumps({"items": items}, ensure_ascii=False), encoding="utf-8")
    categories.main(["--data", str(data), "--embedder", "hashing", "--out", str(out)])
    report = json.loads(out.read_text(encoding="utf-8"))
    assert (report["items"], report["embedder"]) == (2, "hashing:v1-256")
    assert set(report["results"]) == {"words", "similarity", "both"}
    assert report["results"]["words"]["all"]["main"] == 1.0  # both are plain by their words
    assert all(r["ms_per_fact"] >= 0 for r in report["results"].values())


def test_a_set_naming_an_unknown_category_is_refused(tmp_path: Path) -> None:
    data = tmp_path / "bad.json"
    data.write_text(json.dumps({"items": [{"id": "x", "lang": "en", "text": "t", "categories": ["pets"]}]}))
    with pytest.raises(ValueError, match="item x"):
        categories.load_items(data)
