"""bench/pg_vectors.py (PostgreSQL's vector search on vectors shaped like e5's) in a tiny run: every number it
reports is real, the model's samples are unit vectors, and the sweeps and build comparison run end to end."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from jiyi.stores.postgres.store import HNSW_BUILD
from tests import pg

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))  # bench/ is not a package
import pg_vectors


def test_the_model_samples_unit_vectors_near_what_it_was_fitted_to() -> None:
    rng = np.random.default_rng(0)
    centres = rng.standard_normal((4, 16))
    fitted = pg_vectors._unit(np.repeat(centres, 50, axis=0) + 0.1 * rng.standard_normal((200, 16)))
    model = pg_vectors.MixtureOfPPCA(fitted, clusters=4, rank=3, seed=0)
    sample = model.sample(500, seed=1)
    assert sample.shape == (500, 16) and np.allclose(np.linalg.norm(sample, axis=1), 1.0, atol=1e-5)
    # Every sample lies in one of the four clusters: close to some fitted vector, as held-out ones would.
    assert float(np.min(np.max(sample @ fitted.T, axis=1))) > 0.9
    stats = pg_vectors.vector_statistics(sample, fitted[:20], fitted, seed=0)
    assert stats["n"] == 500 and 0.9 < stats["nearest_neighbour_cosine"]["p50"] <= 1.0


def test_real_texts_mix_languages_and_sources() -> None:
    passages, queries, sources = pg_vectors.real_texts()
    assert len(passages) > 5000 and len(queries) > 500 and not set(passages) & set(queries)
    assert sum(1 for t in passages if pg_vectors.re.search(r"[\u4e00-\u9fff]", t)) > 1000
    assert sources["bench/corpus.py memories"] == pg_vectors.CORPUS_PASSAGES


def test_quick_run_with_sweep_and_builds(tmp_path: Path, postgres: pg.TestPostgres,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pg_vectors, "SWEEP_HNSW_FROM", 1000)  # the index path tried at this run's largest scope
    monkeypatch.setattr(pg_vectors, "SWEEP_HNSW", [{"candidates": 60, "ef_search": 40}])
    monkeypatch.setattr(pg_vectors, "SWEEP_QUERIES", 10)
    monkeypatch.setattr(pg_vectors, "INSERT_SAMPLE", 50)
    url = postgres.create_database()
    out = tmp_path / "pg_vectors.json"
    try:
        pg_vectors.main(["--quick", "--memories", "3000", "--users", "60", "--scopes", "200,1000", "--queries", "10",
                         "--real-texts", "300", "--sweep", "--builds", "8:32", "--postgres-url", url,
                         "--out", str(out)])
        again = pg_vectors.main(["--quick", "--memories", "3000", "--users", "60", "--scopes", "200,1000",
                                 "--queries", "10", "--real-texts", "300", "--postgres-url", url,
                                 "--out", str(tmp_path / "again.json")])
    finally:
        postgres.drop_database(url)
    report = json.loads(out.read_text(encoding="utf-8"))
    assert "commit" in report and report["load"]["insert"]["rows"] == 3000
    vectors = report["vectors"]
    assert vectors["held_out_passages"] == 60 and vectors["model"]["clusters"] >= 2
    for side in ("real_held_out", "model_sample"):
        assert 0 < vectors[side]["pairwise_cosine"]["p50"] < vectors[side]["nearest_neighbour_cosine"]["p50"] <= 1
    assert 0 < vectors["hnsw_difficulty"]["model"]["recall_at_10_ef_40"] <= 1
    for size in ("200", "1000"):
        found = report["scopes"][size]
        assert found["path"] == "exact" and found["vector_search"]["recall_at_10"] == pytest.approx(1.0)
        assert 0 < found["memory_search"]["ms"]["p50"] <= found["memory_search"]["ms"]["p99"]
        assert found["memory_search"]["parts_ms"]["vector_search"]["p50"] > 0
    assert {(row["fraction"], row["path"]) for row in report["crossover"]} >= {(0.1, "exact"), (0.1, "hnsw")}
    paths = [(row["scope"], row["path"]) for row in report["sweep"]]
    assert paths == [(200, "exact"), (1000, "exact"), (1000, "hnsw")]
    [build] = report["builds"]
    assert build["m"] == 8 and build["build_seconds"] >= 0 and build["insert_with_index"]["rows"] == 50
    assert [row["path"] for row in build["sweep"]] == ["exact", "hnsw"]
    m, ef_construction = HNSW_BUILD
    assert f"WITH (m='{m}', ef_construction='{ef_construction}')" in report["index"]["definition"]
    # The second run found the store as the first left it: loaded once, its own index built again.
    assert "load" not in again and again["scopes"]["1000"]["vector_search"]["recall_at_10"] == pytest.approx(1.0)
