"""WAL checkpoints off the store's lock: a thread of their own, on a connection of their own.

In WAL mode a commit appends to the -wal file, and the connection whose commit takes the log past
`wal_autocheckpoint` pages copies it back into the database file and syncs it — inside that commit, so inside
the store's lock. With the default (1,000 pages) a search's fire-and-forget access-count write paid for one every
few hundred searches, and the searches behind it waited: `record_access` took 0.16 ms at p50 and 20 ms at p99
(72 ms at most) on a 10k-memory store, 0.38 ms at p99 with the checkpoints taken elsewhere.

So the store's connection checkpoints only as a backstop (`BACKSTOP_PAGES`, if this thread fell behind), and this
thread runs a PASSIVE checkpoint — it copies what no reader still needs, never waits for a reader or a writer, never
blocks one — at most every `INTERVAL_SECONDS` while writes come in (it is told of each), and every `IDLE_SECONDS`
otherwise (another process's writes grow the same log). A checkpoint changes no row, so it moves no connection's
`data_version`: the store's caches hold. When the last connection to the file closes, SQLite checkpoints and
removes the log as it always does.

A log is written from its start again (not grown) by the first commit after a checkpoint that copied all of it.
Under steady writes a checkpoint running beside them never copies all of it (commits land while it copies and
syncs), so when a pass finds the log past `FINISH_PAGES` the thread copies what came meanwhile holding the store's
lock: this process's reads and writes wait for those last frames, at most once a second and only under writes of
more than ~16 MiB a second or a log that another process keeps long."""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import threading
import weakref
from contextlib import AbstractContextManager

log = logging.getLogger(__name__)

BACKSTOP_PAGES = 16_000  # ~64 MiB: the store's own connection checkpoints only if this thread fell that far behind
FINISH_PAGES = 4_096  # ~16 MiB: past it, the rest of the log is copied with the store's writes held
INTERVAL_SECONDS = 1.0  # a second of writes a checkpoint: one sync of the file a second at most, off every lock
IDLE_SECONDS = 30.0


class Checkpointer:
    """Keeps one database file's WAL short from a daemon thread; `wrote()` after a commit, `close()` at the end.

    The thread and its connection start with the first write, and end with `close()` or when the Checkpointer is
    collected (the thread holds none of it: a store nobody closed leaves no thread and no open file behind)."""

    def __init__(self, path: str, writes: AbstractContextManager[object], interval: float = INTERVAL_SECONDS) -> None:
        """`writes`: the lock this process's writers hold (held here only to finish a log past FINISH_PAGES)."""
        self._passes = _Passes(path, writes, interval)
        self._thread: threading.Thread | None = None
        self._starting = threading.Lock()
        weakref.finalize(self, self._passes.stop)

    @property
    def checkpoints(self) -> int:
        """PASSIVE checkpoints run so far (tests and curiosity)."""
        return self._passes.count

    def wrote(self) -> None:
        """A commit grew the log: checkpoint within `interval` (an Event.set: nothing here waits)."""
        if self._thread is None:
            with self._starting:
                if self._thread is None:
                    self._thread = threading.Thread(target=self._passes.run, name="jiyi-sqlite-checkpoint",
                                                    daemon=True)
                    self._thread.start()
        self._passes.wrote.set()

    def checkpoint(self) -> int:
        """One PASSIVE checkpoint now, on the caller's thread; the frames the log held (tests)."""
        return self._passes.checkpoint()

    def close(self) -> None:
        self._passes.stop()
        if self._thread is not None:
            self._thread.join(timeout=10)


class _Passes:
    """The thread's side: its connection (opened on first use), the events it waits on, its count."""

    def __init__(self, path: str, writes: AbstractContextManager[object], interval: float) -> None:
        self.path, self.writes, self.interval = path, writes, interval
        self.wrote, self.closing = threading.Event(), threading.Event()
        self.count = 0
        self._db: sqlite3.Connection | None = None

    def stop(self) -> None:
        self.closing.set()
        self.wrote.set()

    def run(self) -> None:
        try:
            while not self.closing.is_set():
                self.wrote.wait(IDLE_SECONDS)
                self.wrote.clear()
                if self.closing.is_set():
                    return
                try:
                    if self.checkpoint() >= FINISH_PAGES:  # not restarted since the last pass: see the module
                        with self.writes:
                            self.checkpoint()
                except sqlite3.Error as exc:  # another process's checkpoint, a full disk: the next pass retries
                    log.debug("WAL checkpoint skipped: %s", exc)
                self.closing.wait(self.interval)  # what is written meanwhile waits for the next pass
        finally:
            if self._db is not None:
                with contextlib.suppress(sqlite3.Error):
                    self._db.close()

    def checkpoint(self) -> int:
        if self._db is None:
            self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        [(_busy, logged, _copied)] = self._db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
        self.count += 1
        return int(logged)
