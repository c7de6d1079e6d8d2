"""`python -m jiyi` as a user runs it: a subprocess, and a real server on 127.0.0.1 (its output kept in files, so a
test can read its logs)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from tests.conftest import free_port

SRC = str(Path(__file__).resolve().parents[2] / "src")


def environment(home: Path, env: dict[str, str] | None = None) -> dict[str, str]:
    # PYTHONPATH: the checkout's jiyi, also when a test runs the command from another working directory.
    path = os.pathsep.join(p for p in (SRC, os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path, "JIYI_HOME": str(home), "JIYI_EMBEDDER": "hashing", **(env or {})}


def jiyi(home: Path, *args: str, env: dict[str, str] | None = None, cwd: Path | None = None,
         timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "jiyi", *args], capture_output=True, text=True,
                          env=environment(home, env), cwd=cwd, timeout=timeout, check=False)


@dataclass
class Server:
    url: str
    port: int
    process: subprocess.Popen[bytes]
    log: Path

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")


@contextmanager
def serving(home: Path, *args: str, env: dict[str, str] | None = None, cwd: Path | None = None,
            port: int | None = None) -> Iterator[Server]:
    """`jiyi serve` on a free port until the block ends; its standard output and error go to one file."""
    port = port or free_port()
    log = home.parent / f"serve-{port}.log"
    with log.open("wb") as out:
        process = subprocess.Popen([sys.executable, "-m", "jiyi", "serve", "--port", str(port), *args],
                                   env=environment(home, env), cwd=cwd, stdout=out, stderr=subprocess.STDOUT)
    server = Server(f"http://127.0.0.1:{port}", port, process, log)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(f"{server.url}/health", timeout=1)
                break
            except httpx.TransportError:
                assert process.poll() is None, server.output()
                assert time.monotonic() < deadline, server.output()
                time.sleep(0.1)
        yield server
    finally:
        process.terminate()
        process.wait(timeout=20)
