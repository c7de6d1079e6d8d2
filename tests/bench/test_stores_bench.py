"""bench/stores.py (SQLite and PostgreSQL side by side) in a tiny quick run: every number it reports is real."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from tests import pg

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))  # bench/ is not a package
import stores


def test_layout_holds_the_scope_sizes() -> None:
    layout = stores.plan_layout(1_000_000, 10_000, [1000, 10_000, 100_000], seed=0)
    sizes = dict(zip(layout.users, np.bincount(layout.owners).tolist(), strict=True))
    assert sum(sizes.values()) == 1_000_000 and len(layout.users) == 10_000
    assert {size: len(users) for size, users in layout.tiers.items()} == {1000: 200, 10_000: 20, 100_000: 1}
    for size, users in layout.tiers.items():
        assert all(sizes[u] == size for u in users)
    assert max(sizes[u] for u in layout.small_users()) < 1000
    # Interleaved: the big user's memories are spread over the whole load, not one block.
    rows = layout.rows_of(layout.tiers[100_000][0])
    assert rows[0] < 50 and rows[-1] > 999_950


def test_recall_counts_ties_as_found() -> None:
    exact = np.array([0.9, 0.9, 0.5, 0.1], dtype=np.float32)
    assert stores.found_share([0.9], exact, 1) == 1.0
    assert stores.found_share([0.9, 0.5], exact, 2) == 0.5
    assert stores.found_share([0.9, 0.9], exact, 2) == 1.0


def test_queries_are_aimed_near_a_stored_vector() -> None:
    vectors = stores.random_vectors(10, seed=0)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    query = stores.near(vectors[3], np.random.default_rng(0))
    assert float(query @ vectors[3]) == pytest.approx(stores.QUERY_COSINE, abs=1e-5)
    assert int(np.argmax(vectors @ query)) == 3


def test_quick_run_on_both_stores(tmp_path: Path, postgres: pg.TestPostgres) -> None:
    url = postgres.create_database()
    out = tmp_path / "stores.json"
    try:
        stores.main(["--quick", "--memories", "3000", "--users", "60", "--scopes", "200,1000", "--queries", "10",
                     "--add-seconds", "1", "--processes", "1,2", "--insert-sample", "100", "--postgres-url", url,
                     "--workdir", str(tmp_path / "work"), "--out", str(out)])
    finally:
        postgres.drop_database(url)
    report = json.loads(out.read_text(encoding="utf-8"))
    assert set(report["stores"]) == {"sqlite", "postgres"}
    assert report["layout"]["users_per_scope_size"] == {"200": 3, "1000": 1}
    for kind, run in report["stores"].items():
        assert run["load"]["insert"]["rows"] == 3000 and run["load"]["insert"]["rows_per_s"] > 0, kind
        assert run["load"]["insert_after_load"]["rows"] == 100
        for size in ("200", "1000"):
            found = run["search"][size]
            assert found["queries"] == 10 and found["empty_results"] < 10
            assert 0 < found["memory_search_ms"]["p50"] <= found["memory_search_ms"]["p99"]
            assert found["store_vector_search_ms"]["p50"] > 0 and found["store_keyword_search_ms"]["p50"] > 0
            assert found["memory_search_parts_ms"]["vector_search"]["p50"] > 0
            assert found["vector_recall"]["at_10"] == pytest.approx(1.0)  # exact at these sizes, in both stores
            assert found["query_vectors_not_aimed"] == 0  # every search used a vector near one of its user's
        for count in ("1", "2"):
            adds = run["add_http"][count]
            assert adds["processes"] == int(count) and adds["errors"] == 0 and adds["memories_per_s"] > 0
            assert adds["memories"] == adds["calls"] * stores.ADD_BATCH
        for phase in ("load", "search_200", "search_1000", "add_1_processes", "add_2_processes"):
            load = run["load_by_phase"][phase]
            assert load["machine_busy_cores"] >= 0 and load["benchmark_cores"] > 0, (kind, phase)
    assert report["stores"]["postgres"]["load"]["hnsw_build_seconds"] >= 0
    assert report["stores"]["postgres"]["load"]["sizes"]["hnsw_index_mb"] > 0
    assert report["stores"]["postgres"]["search"]["1000"]["vector_path"] == "exact"
