"""The SQLite store's WAL checkpoints run on their own thread and connection: a commit never copies the log back
(the lock searches wait on is not held for it), the log stays bounded under steady writes, and a checkpoint drops
none of the store's caches."""

from __future__ import annotations

import gc
import sqlite3
import time
from datetime import UTC, datetime
from pathlib import Path

from jiyi import build_embedder
from jiyi.records import MemoryRecord, Scope
from jiyi.stores.sqlite import SqliteStore, checkpoints
from jiyi.stores.sqlite.checkpoints import Checkpointer


def _store_with(tmp_path: Path, n: int) -> tuple[SqliteStore, list[str]]:
    embedder = build_embedder("hashing")
    store = SqliteStore(tmp_path / "m.db")
    store.bind_embedding(embedder.model_id, embedder.dims)
    records = [MemoryRecord(content=f"note {i} about tea and the sea", scope=Scope("u")) for i in range(n)]
    store.insert(records, embedder.embed_documents([r.content for r in records]), [])
    return store, [r.id for r in records]


def test_the_store_s_own_connection_leaves_checkpoints_to_the_thread(tmp_path: Path) -> None:
    store, _ = _store_with(tmp_path, 3)
    assert store._db.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == checkpoints.BACKSTOP_PAGES
    assert store._checkpointer is not None
    store.close()
    assert SqliteStore(":memory:")._checkpointer is None  # no file, no log


def test_a_write_is_checkpointed_within_the_interval_by_the_thread(tmp_path: Path) -> None:
    store, ids = _store_with(tmp_path, 50)
    checkpointer = store._checkpointer
    assert checkpointer is not None
    before = checkpointer.checkpoints
    store.record_access(ids[:5], datetime.now(UTC))
    deadline = time.monotonic() + checkpoints.INTERVAL_SECONDS * 3 + 2
    while checkpointer.checkpoints == before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert checkpointer.checkpoints > before
    # Everything written is in the database file: a checkpoint from outside has nothing left to copy.
    db = sqlite3.connect(tmp_path / "m.db", isolation_level=None)
    _busy, logged, copied = db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()[0]
    assert logged == copied
    db.close()
    store.close()


def _log_after_steady_writes(directory: Path, finish_pages: int) -> int:
    """The log's high mark (bytes) after 800 commits back to back, the thread passing every 20 ms and finishing a log
    past `finish_pages` under the store's lock."""
    store, ids = _store_with(directory, 400)
    store._checkpointer.close()  # type: ignore[union-attr]
    store._checkpointer = Checkpointer(str(directory / "m.db"), store._lock, interval=0.02)
    original = checkpoints.FINISH_PAGES
    checkpoints.FINISH_PAGES = finish_pages
    try:
        for i in range(800):
            store.record_access(ids[(i * 7) % 400:(i * 7) % 400 + 7], datetime.now(UTC))
        return (directory / "m.db-wal").stat().st_size  # a log is reused from its start, never shrunk: its high mark
    finally:
        checkpoints.FINISH_PAGES = original
        store.close()


def test_steady_writes_keep_the_log_bounded(tmp_path: Path) -> None:
    """Commits back to back: a checkpoint beside them never copies the whole log, so without the finishing pass under
    the store's lock the log grows until the backstop (~10 pages a write: 800 writes, ~27 MiB). FINISH_PAGES lowered
    to see it in a second. How far past it the log gets depends on how many commits land between the thread's passes
    (8.7 MiB on an idle 2-core machine once record_access got faster, 9.2 in a busy CI run): compared with the same
    writes without the finishing pass, not with a fixed size."""
    bounded = _log_after_steady_writes(tmp_path / "finishing", 200)
    unbounded = _log_after_steady_writes(tmp_path / "passive-only", 10**9)
    assert bounded < unbounded / 2, (bounded, unbounded)


def test_a_checkpoint_drops_none_of_the_store_s_caches(tmp_path: Path) -> None:
    """A checkpoint changes no row, so the store's connection does not take it for another process's write."""
    store, ids = _store_with(tmp_path, 20)
    embedder = build_embedder("hashing")
    store.vector_search(Scope("u"), embedder.embed_query("note 3"), 3)
    cached = store._vectors[Scope("u")]
    for _ in range(3):
        store.record_access(ids[:2], datetime.now(UTC))
        store._checkpointer.checkpoint()  # type: ignore[union-attr]
    store.vector_search(Scope("u"), embedder.embed_query("note 4"), 3)
    assert store._vectors[Scope("u")] is cached
    store.close()


def test_the_thread_ends_with_close_or_with_a_store_nobody_closed(tmp_path: Path) -> None:
    for close in (True, False):
        store, _ = _store_with(tmp_path / str(close), 2)  # its writes started the thread
        thread = store._checkpointer._thread  # type: ignore[union-attr]
        assert thread is not None and thread.is_alive()
        if close:
            store.close()
        else:
            del store
            gc.collect()
        thread.join(timeout=5)
        assert not thread.is_alive()
