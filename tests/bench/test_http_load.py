"""bench/http_load.py against a real `jiyi serve` process (hashing embedder: a start takes seconds, not a model
load): it starts and stops the server, seeds it, loads it, and every number it reports is real. Also the summary
arithmetic of bench/mem0_side_by_side.py, which has no test of its own that runs (it needs a mem0 venv)."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))  # bench/ is not a package
import http_load
import mem0_side_by_side


def test_memory_texts_are_the_ones_every_earlier_run_seeded() -> None:
    # Pinned: the side-by-side runs before this module (load_rest.py) seeded exactly these texts.
    assert http_load.memory_text(0) == "第0条：我生日和mother的事情 0 about 旅行 and 北京"
    assert http_load.memory_text(1999) == "第1999条：我狗和姐姐的事情 1999 about 咖啡 and sister"
    assert len({http_load.memory_text(i) for i in range(200)}) == 200


def test_quantile_takes_the_value_at_rank_q_n() -> None:
    values = [float(v) for v in range(100, 0, -1)]
    assert http_load.quantile(values, 0.5) == 51.0
    assert http_load.quantile(values, 0.99) == 100.0
    assert http_load.quantile([], 0.5) is None


def jiyi_serve(home: Path) -> http_load.ServerProcess:
    port = http_load.free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("JIYI_")}
    env.update(JIYI_LOG_LEVEL="warning", JIYI_MAINTENANCE_INTERVAL="0")
    return http_load.ServerProcess(
        [sys.executable, "-m", "jiyi", "serve", "--home", str(home), "--port", str(port), "--embedder", "hashing"],
        port, env=env, name="jiyi", startup_timeout=60)


def test_seed_and_load_a_real_jiyi_serve(tmp_path: Path) -> None:
    with jiyi_serve(tmp_path / "home") as server:
        assert server.url == f"http://127.0.0.1:{server.port}"
        assert server.rss_mb() > 10
        seeded = asyncio.run(http_load.seed(server.url, 20))
        assert seeded["seeded"] == 20

        found = httpx.post(f"{server.url}/search", json={"query": "事情", "user_id": "load", "top_k": 50}).json()
        texts = {hit["memory"] for hit in found["results"]}
        assert texts and texts <= {http_load.memory_text(i) for i in range(20)}

        cpu_before = server.cpu_seconds()
        result: dict[str, Any] = asyncio.run(http_load.run_load(server.url, clients=2, seconds=2, search_share=0.8,
                                                                server=server))
        assert server.cpu_seconds() > cpu_before
    assert server.process is not None and server.process.poll() is not None  # stopped on leaving the block
    assert not server.log_dir.exists()  # a clean exit leaves no log behind

    assert result["clients"] == 2 and result["seconds"] >= 2
    assert result["errors"] == {"search": 0, "add": 0} and result["timeouts"] == 0
    assert result["search_n"] > 0 and result["add_n"] > 0  # client 0's first draw is an add at a share of 0.8
    assert result["req_per_s"] == pytest.approx((result["search_n"] + result["add_n"]) / result["seconds"], rel=0.05)
    assert 0 < result["search_p50"] <= result["search_p99"]
    assert result["server_cpu_s"] > 0
    assert result["cpu_ms_per_request"] == pytest.approx(
        result["server_cpu_s"] * 1000 / (result["search_n"] + result["add_n"]), rel=0.05)
    assert len(result["load"]) == 2


def test_a_server_that_dies_at_start_is_reported_with_its_log() -> None:
    port = http_load.free_port()
    server = http_load.ServerProcess([sys.executable, "-c", "print('cannot start: no model'); raise SystemExit(3)"],
                                     port, name="broken")
    with pytest.raises(RuntimeError, match=r"(?s)broken exited with 3.*cannot start: no model"):
        server.start()
    assert server.log_path.exists()  # kept for reading
    shutil.rmtree(server.log_dir)


class _Healthy(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


def test_an_answer_from_another_process_on_the_port_is_not_taken_for_ours() -> None:
    # Someone else's server took the port first; ours (here a process that never listens) must not be declared up.
    other = ThreadingHTTPServer(("127.0.0.1", 0), _Healthy)
    threading.Thread(target=other.serve_forever, daemon=True).start()
    try:
        port = other.server_address[1]
        assert httpx.get(f"http://127.0.0.1:{port}/health").status_code == 200
        impostor = http_load.ServerProcess([sys.executable, "-c", "import time; time.sleep(60)"], port,
                                           name="impostor", startup_timeout=1)
        with pytest.raises(RuntimeError, match="did not answer"):
            impostor.start()
        assert impostor.process is not None and impostor.process.poll() is not None
        shutil.rmtree(impostor.log_dir)
    finally:
        other.shutdown()
        other.server_close()


def test_the_summary_takes_medians_per_server_and_the_ratio_of_req_per_s() -> None:
    def round_(server: str, clients: int, req_per_s: float, p50: float, cpu: float) -> dict[str, Any]:
        r = {"server": server, "clients": clients, "req_per_s": req_per_s, "search_p50": p50, "search_p99": 2 * p50,
             "cpu_ms_per_request": cpu, "errors": {"search": 0, "add": 0}, "timeouts": 0}
        if server == "mem0":
            r["cpu_ms_per_request_with_embedder"] = cpu + 50
        return r

    rounds = [round_("jiyi", 8, 40, 100, 30), round_("mem0", 8, 20, 300, 10), round_("jiyi", 8, 44, 110, 32),
              round_("mem0", 8, 18, 320, 12)]
    [row] = mem0_side_by_side.summarize(rounds, [8])
    assert row["jiyi"]["req_per_s"] == 42.0 and row["mem0"]["req_per_s"] == 19.0
    assert row["ratio"] == round(42 / 19, 2)
    assert row["jiyi"]["search_p99"] == 210.0 and row["mem0"]["cpu_ms_per_request_with_embedder"] == 61.0
    assert "| 8 | 42.0 | 19.0 | 2.21× |" in mem0_side_by_side.markdown([row])
