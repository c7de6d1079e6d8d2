"""Shared fixtures. Every store fixture is parametrized over all stores; the server fixture is a real uvicorn
server on 127.0.0.1. Accidental network calls fail: sockets may only connect to loopback."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from jiyi import AsyncMemory, Memory, build_embedder, build_store
from jiyi.embedders.base import Embedder
from jiyi.server import create_app
from jiyi.stores.base import MemoryStore
from jiyi.testing.fake_openai import FakeOpenAI
from tests import pg

_real_connect = socket.socket.connect


def _loopback_only(self: socket.socket, address: Any) -> Any:
    host = address[0] if isinstance(address, tuple) else address
    if isinstance(host, str) and not (host.startswith("127.") or host in ("localhost", "::1") or host.startswith("/")):
        raise RuntimeError(f"test tried to reach the network: {address!r}")
    return _real_connect(self, address)


@pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook: without xdist (or with -n 0) it is never called
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """`--dist loadfile`, with the SillyTavern package kept on one worker (tests/scheduling.py)."""
    if config.getvalue("dist") != "loadfile":
        return None  # another --dist given on the command line: xdist's own
    from tests.scheduling import ModulesAndSharedPackages

    return ModulesAndSharedPackages(config, log)


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(socket.socket, "connect", _loopback_only)


STORE_KINDS = ["sqlite", "postgres"]


@pytest.fixture(scope="session")
def postgres() -> Iterator[pg.TestPostgres]:
    """The session's PostgreSQL (tests/pg.py), started by the first test that needs it, stopped at the end."""
    yield pg.running()
    pg.stop()


def make_store(kind: str, tmp_path: Path) -> MemoryStore:
    """A new, empty store of this kind; a PostgreSQL one is a database of its own on the session's server."""
    if kind == "sqlite":
        return build_store(f"sqlite:///{tmp_path / 'memory.db'}")
    if kind == "postgres":
        return build_store(pg.running().create_database())
    raise AssertionError(kind)


@pytest.fixture(params=STORE_KINDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MemoryStore]:
    if request.param == "postgres":
        request.getfixturevalue("postgres")  # so that the session stops the server at its end
    s = make_store(request.param, tmp_path)
    yield s
    s.close()
    if request.param == "postgres":
        pg.running().drop_database(s.url)


@pytest.fixture
def embedder() -> Embedder:
    return build_embedder("hashing")


@pytest.fixture
def memory(store: MemoryStore, embedder: Embedder) -> Iterator[Memory]:
    m = Memory(store, embedder)
    yield m
    m._loop.stop()


@pytest.fixture
def amemory(store: MemoryStore, embedder: Embedder) -> AsyncMemory:
    return AsyncMemory(store, embedder)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class RunningServer:
    def __init__(self, app: Any) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning", lifespan="on")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> RunningServer:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


@pytest.fixture
def make_server(tmp_path: Path) -> Iterator[Callable[..., RunningServer]]:
    """Start a real uvicorn server around a fresh Memory; stopped at the end of the test."""
    started: list[RunningServer] = []

    def start(memory: AsyncMemory | None = None, **app_options: Any) -> RunningServer:
        memory = memory or AsyncMemory(build_store(f"sqlite:///{tmp_path / f'server{len(started)}.db'}"),
                                       build_embedder("hashing"))
        server = RunningServer(create_app(memory, **app_options)).__enter__()
        started.append(server)
        return server

    yield start
    for server in started:
        server.__exit__()


@pytest.fixture
def server(make_server: Callable[..., RunningServer]) -> RunningServer:
    return make_server()


@pytest.fixture
def client(server: RunningServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=30) as c:
        yield c


@pytest.fixture(scope="session")
def fake_openai_server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as fake:
        yield fake


@pytest.fixture
def fake(fake_openai_server: FakeOpenAI) -> FakeOpenAI:
    """jiyi's fake OpenAI-compatible server (chat and /rerank) on 127.0.0.1, its script and log cleared."""
    fake_openai_server.reset()
    return fake_openai_server
