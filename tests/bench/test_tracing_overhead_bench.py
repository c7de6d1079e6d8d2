"""bench/tracing_overhead.py on a tiny store: each mode runs in its own process, absent really without
opentelemetry (the child asserts what it can import and whether spans would record), and the report says it all."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))  # bench/ is not a package
import tracing_overhead


def test_every_mode_is_measured_in_its_own_process(tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    tracing_overhead.main(["--memories", "20", "--searches", "5", "--rounds", "1", "--out", str(out)])
    report = json.loads(out.read_text(encoding="utf-8"))
    assert (report["memories"], report["embedder"]) == (20, "hashing")
    assert set(report["modes"]) == {"absent", "unconfigured", "recording"}
    assert report["modes"]["absent"]["vs_absent"] == 1.0
    assert all(len(mode["search_us_rounds"]) == 1 and mode["search_us_median"] > 0 and mode["span_ns"] > 0
               for mode in report["modes"].values())
