"""The `jiyi` command, run as a real subprocess the way a user runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.conftest import free_port


def run(home: Path, *args: str, check: bool = True, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    environment = {**os.environ, "JIYI_HOME": str(home), "JIYI_EMBEDDER": "hashing", **(env or {})}
    return subprocess.run([sys.executable, "-m", "jiyi", *args], capture_output=True, text=True, env=environment,
                          check=check, timeout=120)


def test_add_search_list_history(tmp_path: Path) -> None:
    added = json.loads(run(tmp_path, "add", "-u", "alice", "我对海鲜过敏", "I live in Shanghai").stdout)
    assert [r["event"] for r in added["results"]] == ["ADD", "ADD"]
    assert (tmp_path / "memory.db").is_file()  # data under JIYI_HOME by default
    found = json.loads(run(tmp_path, "search", "-u", "alice", "海鲜", "-k", "1").stdout)
    assert [r["memory"] for r in found["results"]] == ["我对海鲜过敏"]
    listed = json.loads(run(tmp_path, "list", "-u", "alice").stdout)
    assert {r["memory"] for r in listed["results"]} == {"我对海鲜过敏", "I live in Shanghai"}
    history = json.loads(run(tmp_path, "history", added["results"][0]["id"]).stdout)
    assert [h["event"] for h in history] == ["ADD"]


def test_errors_are_messages_not_tracebacks(tmp_path: Path) -> None:
    result = run(tmp_path, "search", "query-without-scope", check=False)
    assert result.returncode == 2
    assert "at least one of user_id" in result.stderr and "Traceback" not in result.stderr
    result = run(tmp_path, "history", "no-such-id", check=False)
    assert result.returncode == 2 and "not found" in result.stderr


def test_export_import_round_trip_with_progress(tmp_path: Path) -> None:
    source, target = tmp_path / "a", tmp_path / "b"
    run(source, "add", "-u", "alice", *(f"fact {i} about tea" for i in range(300)))
    run(source, "add", "-u", "bob", "bob's only fact")
    dump = tmp_path / "alice.jsonl"
    run(source, "export", "-u", "alice", str(dump))
    lines = dump.read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[0])["kind"] == "jiyi-export"
    assert sum(json.loads(line)["kind"] == "memory" for line in lines) == 300
    imported = run(target, "import", str(dump))
    assert json.loads(imported.stdout)["imported"] == 300
    assert "import" in imported.stderr  # the progress bar
    again = json.loads(run(target, "import", str(dump)).stdout)
    assert again["imported"] == 0 and again["skipped_existing"] == 300
    found = json.loads(run(target, "search", "-u", "alice", "fact 7 about tea", "-k", "1").stdout)
    assert found["results"][0]["memory"] == "fact 7 about tea"
    assert json.loads(run(target, "list", "-u", "bob").stdout)["results"] == []


def test_import_reports_bad_lines_and_keeps_good_ones(tmp_path: Path) -> None:
    dump = tmp_path / "mixed.jsonl"
    good = {"kind": "memory", "id": "m1", "content": "good line", "user_id": "u"}
    dump.write_text("\n".join([json.dumps(good), "{not json", json.dumps({"kind": "memory", "content": "no id"})]),
                    encoding="utf-8")
    result = run(tmp_path, "import", str(dump), "-q", check=False)
    report = json.loads(result.stdout)
    assert result.returncode == 1 and report["imported"] == 1 and report["error_count"] == 2
    assert "line 2" in report["errors"][0]


def test_config_file_and_mem0_config(tmp_path: Path) -> None:
    config = tmp_path / "mem0.json"
    config.write_text(json.dumps({"history_db_path": str(tmp_path / "from-config.db"),
                                  "embedder": {"provider": "jiyi", "config": {"model": "hashing"}}}))
    run(tmp_path, "--help", check=False)
    run(tmp_path, "add", "--config", str(config), "-u", "u", "configured", env={"JIYI_EMBEDDER": ""})
    assert (tmp_path / "from-config.db").is_file()


@pytest.mark.timeout(60)
def test_serve_starts_a_server(tmp_path: Path) -> None:
    port = free_port()
    environment = {**os.environ, "JIYI_HOME": str(tmp_path), "JIYI_EMBEDDER": "hashing"}
    proc = subprocess.Popen([sys.executable, "-m", "jiyi", "serve", "--port", str(port)], env=environment,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                health = httpx.get(f"http://127.0.0.1:{port}/health", timeout=1)
                break
            except httpx.TransportError:
                assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
                assert time.monotonic() < deadline
                time.sleep(0.1)
        assert health.json()["status"] == "ok"
        added = httpx.post(f"http://127.0.0.1:{port}/memories", timeout=10,
                           json={"messages": [{"role": "user", "content": "hello from curl"}], "user_id": "u",
                                 "infer": False})
        assert added.status_code == 200
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_maintain(tmp_path: Path) -> None:
    run(tmp_path, "add", "-u", "alice", "I like green tea", "I like green tea a lot", "I like green tea!")
    run(tmp_path, "add", "-u", "bob", "I have a dog")
    stats = json.loads(run(tmp_path, "maintain").stdout)
    assert stats["users"] == 2 and stats["processed"] == 4 and stats["merged"] == 2
    assert json.loads(run(tmp_path, "maintain", "--user-id", "alice").stdout)["processed"] == 1


def wait_for_health(proc: subprocess.Popen[str], port: int) -> None:
    deadline = time.monotonic() + 30
    while True:
        try:
            httpx.get(f"http://127.0.0.1:{port}/health", timeout=1)
            return
        except httpx.TransportError:
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert time.monotonic() < deadline
            time.sleep(0.1)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.10", "jiyi.example.com"])
def test_serve_refuses_an_open_address_without_keys(tmp_path: Path, host: str) -> None:
    refused = run(tmp_path, "serve", "--host", host, "--port", str(free_port()), check=False)
    assert refused.returncode == 2
    assert all(words in refused.stderr for words in ("refusing to serve", "--insecure", "JIYI_API_KEYS"))


@pytest.mark.parametrize("how", [["--insecure"], ["env:JIYI_INSECURE=1"], ["env:JIYI_ADMIN_API_KEY=s3cret"],
                                 ["env:JIYI_API_KEYS={\"k1\": \"alice\"}"], ["issued"]])
def test_serve_on_an_open_address_with_keys_or_insecure(tmp_path: Path, how: list[str]) -> None:
    if how == ["issued"]:  # a key issued with `jiyi keys create` closes the server as well as one in the environment
        run(tmp_path, "keys", "create", "--user", "alice")
        how = []
    port = free_port()
    flags = [h for h in how if not h.startswith("env:")]
    extra = dict(h[4:].split("=", 1) for h in how if h.startswith("env:"))
    environment = {**os.environ, "JIYI_HOME": str(tmp_path), "JIYI_EMBEDDER": "hashing", **extra}
    proc = subprocess.Popen([sys.executable, "-m", "jiyi", "serve", "--host", "0.0.0.0", "--port", str(port),
                             *flags], env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for_health(proc, port)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
