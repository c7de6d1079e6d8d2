"""The throughput table of docs/benchmarks.md is bench/results/throughput.json's: each row's medians, as
bench/throughput.py computes them, so the figures cannot drift from the file they come from."""

from __future__ import annotations

import json
import re
import statistics
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
ROW = re.compile(r"^\s*\| ([\d,]+) \| (\d+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+)× "
                 r"\| (\d+) \((\d+)\) \| (\d+) \((\d+)\) \|$")


def _median(report: dict[str, Any], server: str, memories: int, clients: int, field: str) -> float:
    return statistics.median(r[field] for r in report["rounds"]
                             if r["server"] == server and r["memories"] == memories and r["clients"] == clients)


def test_the_readme_throughput_table_is_the_results_file() -> None:
    report = json.loads((ROOT / "bench" / "results" / "throughput.json").read_text(encoding="utf-8"))
    rows = [m.groups() for line in (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8").splitlines()
            if (m := ROW.match(line))]
    assert len(rows) == 4
    for memories, clients, *figures in rows:
        n, c = int(memories.replace(",", "")), int(clients)
        head = {f: _median(report, "head", n, c, f) for f in ("req_per_s", "cpu_ms_per_search", "cpu_ms_outside_model")}
        base = {f: _median(report, "baseline", n, c, f) for f in head}
        assert figures == [f"{head['req_per_s']:.1f}", f"{base['req_per_s']:.1f}",
                           f"{head['req_per_s'] / base['req_per_s']:.1f}",
                           f"{head['cpu_ms_per_search']:.0f}", f"{base['cpu_ms_per_search']:.0f}",
                           f"{head['cpu_ms_outside_model']:.0f}", f"{base['cpu_ms_outside_model']:.0f}"]
    assert report["servers"]["baseline"] == "91f4024"
