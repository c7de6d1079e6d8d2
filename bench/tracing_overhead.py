"""What tracing costs a search: opentelemetry absent, present but unconfigured (no tracer provider: the usual case,
since FastAPI and the MCP SDK install opentelemetry-api), and recording (the SDK, spans dropped by the exporter).

    python bench/tracing_overhead.py [--memories 500] [--searches 300] [--rounds 5] [--embedder hashing]

Each mode runs in a process of its own (absent: imports of opentelemetry fail, as where it was never installed), the
modes taking turns for `--rounds` rounds, on one SQLite store made first. Reported per mode: the median of the rounds'
median search latency through the sync Memory, its ratio to "absent", and what one `tracing.span()` costs around an
empty block. The hashing embedder keeps a search short (~1 ms), so the overhead shows at its largest; e5 adds
~10 ms of model time to every search.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
MODES = ("absent", "unconfigured", "recording")
TOPICS = ["爬山", "游泳", "咖啡", "猫", "日语", "hiking", "coffee", "piano", "Lisbon", "marathon"]
QUERIES = ["我喜欢做什么运动", "我养了什么宠物", "what do I drink in the morning", "where does my sister live",
           "我在学什么语言", "do I play an instrument"]
HIDE = '''
import importlib.abc, sys
class Hidden(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "opentelemetry" or name.startswith("opentelemetry."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, Hidden())
'''


def make_store(path: Path, memories: int, embedder: str) -> None:
    from jiyi import Memory, build_embedder, build_store

    memory = Memory(build_store(f"sqlite:///{path}"), build_embedder(embedder))
    try:
        for start in range(0, memories, 50):
            batch = [{"role": "user", "content": f"第{i}条：我最近常常想起{TOPICS[i % len(TOPICS)]}，also {i}"}
                     for i in range(start, min(start + 50, memories))]
            memory.add(batch, user_id="bench", infer=False)
    finally:
        memory.close()


def child(mode: str, store: Path, searches: int, embedder: str) -> dict[str, Any]:
    """One round of one mode, in this process."""
    from jiyi import Memory, build_embedder, build_store, tracing

    if mode == "recording":
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

        class Dropped(SpanExporter):
            def export(self, spans: Any) -> SpanExportResult:
                return SpanExportResult.SUCCESS

        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(Dropped()))
        tracing.set_tracer_provider(provider)
    assert tracing.available == (mode != "absent") and tracing.enabled() == (mode == "recording")
    memory = Memory(build_store(f"sqlite:///{store}"), build_embedder(embedder))
    try:
        for query in QUERIES * 3:  # warm: the lexicon, the vector cache, the embedder
            memory.search(query, user_id="bench")
        took = []
        for i in range(searches):
            started = time.perf_counter()
            memory.search(QUERIES[i % len(QUERIES)], user_id="bench")
            took.append(time.perf_counter() - started)
    finally:
        memory.close()
    calls = 100_000
    started = time.perf_counter()
    for _ in range(calls):
        with tracing.span("bench") as span:
            span.is_recording()
    span_ns = (time.perf_counter() - started) / calls * 1e9
    return {"search_us": statistics.median(took) * 1e6, "span_ns": span_ns}


def run_child(mode: str, store: Path, searches: int, embedder: str, site: Path) -> dict[str, Any]:
    path = f"{site}:{ROOT / 'src'}" if mode == "absent" else str(ROOT / "src")
    done = subprocess.run([sys.executable, __file__, "--child", mode, "--store", str(store), "--searches",
                           str(searches), "--embedder", embedder], capture_output=True, text=True, check=False,
                          env={"PYTHONPATH": path, "PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1"})
    if done.returncode != 0:
        raise RuntimeError(f"the {mode} round failed:\n{done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return result


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=500)
    parser.add_argument("--searches", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--embedder", default="hashing")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--child", choices=MODES, help=argparse.SUPPRESS)
    parser.add_argument("--store", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, args.store, args.searches, args.embedder)))
        return {}
    with tempfile.TemporaryDirectory() as folder:
        store, site = Path(folder) / "bench.db", Path(folder) / "site"
        site.mkdir()
        (site / "sitecustomize.py").write_text(HIDE, encoding="utf-8")
        make_store(store, args.memories, args.embedder)
        rounds: dict[str, list[dict[str, Any]]] = {mode: [] for mode in MODES}
        for _ in range(args.rounds):
            for mode in MODES:  # the modes take turns: a machine that gets busier slows them all alike
                rounds[mode].append(run_child(mode, store, args.searches, args.embedder, site))
    absent = statistics.median(r["search_us"] for r in rounds["absent"])
    report = {"memories": args.memories, "searches": args.searches, "rounds": args.rounds, "embedder": args.embedder,
              "modes": {mode: {"search_us_median": round(statistics.median(r["search_us"] for r in results), 1),
                               "search_us_rounds": [round(r["search_us"], 1) for r in results],
                               "vs_absent": round(statistics.median(r["search_us"] for r in results) / absent, 3),
                               "span_ns": round(statistics.median(r["span_ns"] for r in results), 1)}
                        for mode, results in rounds.items()}}
    text = json.dumps(report, indent=2, ensure_ascii=False)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    return report


if __name__ == "__main__":
    main()
