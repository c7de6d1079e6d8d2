"""Moving over: `jiyi export` from SQLite, `jiyi import` into another store (PostgreSQL, or another SQLite file) —
the real CLI in subprocesses — keeps every id, every history row and every memory's provenance with the messages it
points to."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from jiyi import AsyncMemory, Memory, build_embedder, build_store
from tests import pg
from tests.conftest import STORE_KINDS


def jiyi(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "JIYI_HOME": str(home), "JIYI_EMBEDDER": "hashing"}
    return subprocess.run([sys.executable, "-m", "jiyi", *args], capture_output=True, text=True, env=env, check=True,
                          timeout=120)


@pytest.mark.parametrize("target", STORE_KINDS)
def test_export_from_sqlite_then_import_loses_nothing(tmp_path: Path, target: str) -> None:
    source_url = f"sqlite:///{tmp_path / 'source.db'}"
    with Memory(_async=AsyncMemory(build_store(source_url), build_embedder("hashing"))) as memory:
        memory.add([{"role": "user", "content": "我对花生过敏"}, {"role": "assistant", "content": "记住了"}],
                   user_id="alice")
        memory.add("I moved to Shanghai last spring", user_id="alice", agent_id="helper")
        changed = memory.add("I love hiking", user_id="bob", infer=False)["results"][0]["id"]
        memory.update(changed, "I love hiking and climbing")
        gone = memory.add("a passing remark", user_id="bob", infer=False)["results"][0]["id"]
        memory.delete(gone, reason="the user asked")
        source = memory.store
        before = {r.id: r for r in source.iter_records(None, True)}
        history = {memory_id: [(h.id, h.event, h.old_memory, h.new_memory) for h in source.history(memory_id)]
                   for memory_id in before}
        said = {m.id: m for m in source.get_messages([ref.message_id for r in before.values() for ref in r.provenance])}
    assert len(before) >= 6 and said  # facts, evidence messages, an updated and a deleted memory

    dump = tmp_path / "all.jsonl"
    jiyi("export", "--store", source_url, "--include-deleted", str(dump), home=tmp_path)
    target_url = pg.running().create_database() if target == "postgres" else f"sqlite:///{tmp_path / 'target.db'}"
    report = json.loads(jiyi("import", "--store", target_url, str(dump), home=tmp_path).stdout)
    assert report["imported"] == len(before) and report["error_count"] == 0 and report["messages"] == len(said)

    store = build_store(target_url)
    try:
        after = {r.id: r for r in store.iter_records(None, True)}
        assert after.keys() == before.keys()
        for memory_id, old in before.items():
            new = after[memory_id]
            assert (new.content, new.scope, new.metadata, new.category, new.layer, new.memory_type) == \
                (old.content, old.scope, old.metadata, old.category, old.layer, old.memory_type)
            assert new.provenance == old.provenance and new.created_at == old.created_at
            assert (new.deleted_at is None) == (old.deleted_at is None)
            assert [(h.id, h.event, h.old_memory, h.new_memory) for h in store.history(memory_id)] == \
                history[memory_id]
        moved = {m.id: m for m in store.get_messages(list(said))}
        assert {i: (m.content, m.role, m.scope) for i, m in moved.items()} == \
            {i: (m.content, m.role, m.scope) for i, m in said.items()}
        assert [hit.memory_id for hit in store.keyword_search(before[changed].scope, ["climb"], 3)] == [changed]
    finally:
        store.close()
        if target == "postgres":
            pg.running().drop_database(target_url)
