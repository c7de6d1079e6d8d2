"""A history row is built in one place (records.history_row, and records.revise for a change with its row), so a
field cannot be forgotten in one writer's copy: what each kind of row holds, and a check that no writer builds one
by hand."""

from __future__ import annotations

import asyncio
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from jiyi import AsyncMemory, build_embedder, build_store
from jiyi.records import Event, MemoryRecord, Scope, content_hash, history_row, revise

SRC = Path(__file__).resolve().parents[1] / "src" / "jiyi"
BORN = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
NOW = BORN + timedelta(days=30)


def _record() -> MemoryRecord:
    return MemoryRecord("用户住在杭州", Scope("alice"), actor_id="Alice", role="user", created_at=BORN)


@pytest.mark.parametrize(("event", "old", "new", "created_at", "updated_at", "deleted"), [
    (Event.ADD, None, "用户住在杭州", NOW, None, False),
    (Event.DELETE, "用户住在杭州", None, NOW, NOW, True),
    (Event.RESTORE, None, "用户住在杭州", NOW, NOW, False),
    (Event.PROMOTE, "用户住在杭州", "用户住在杭州", BORN, NOW, False),
    (Event.BOOST, "用户住在杭州", "用户住在杭州", BORN, NOW, False),
    (Event.MOVE, "用户住在杭州", "用户住在杭州", BORN, NOW, False),
    (Event.KEEP, "用户住在杭州", "用户住在杭州", BORN, NOW, False),
    (Event.MERGE, "用户住在杭州", "用户住在杭州", BORN, NOW, False),
])
def test_each_kind_of_row(event: Event, old: str | None, new: str | None, created_at: datetime,
                          updated_at: datetime | None, deleted: bool) -> None:
    """Coming into being, going and coming back are dated by the moment; a change to a living memory keeps mem0's
    columns: created_at is the memory's own, updated_at the change's."""
    record = _record()
    row = history_row(event, record, NOW, reason="why")
    assert (row.memory_id, row.event, row.old_memory, row.new_memory) == (record.id, event, old, new)
    assert (row.created_at, row.updated_at, row.is_deleted) == (created_at, updated_at, deleted)
    assert (row.actor_id, row.role, row.reason) == ("Alice", "user", "why")


def test_who_can_be_said_otherwise() -> None:
    row = history_row(Event.DELETE, _record(), NOW, actor_id=None, role="user", reason="the user asked")
    assert (row.actor_id, row.role) == (None, "user")


def test_a_revision_is_the_changed_record_and_its_row() -> None:
    current = _record()
    updated, row = revise(current, Event.UPDATE, NOW, content="用户搬到了上海", updated_at=NOW)
    assert (updated.content, updated.hash, updated.updated_at, updated.id) == \
        ("用户搬到了上海", content_hash("用户搬到了上海"), NOW, current.id)
    assert (current.content, current.hash) == ("用户住在杭州", content_hash("用户住在杭州"))  # the read copy stays
    assert (row.memory_id, row.old_memory, row.new_memory, row.created_at, row.updated_at) == \
        (current.id, "用户住在杭州", "用户搬到了上海", BORN, NOW)
    promoted, row = revise(current, Event.PROMOTE, NOW, reason="stable", layer=current.layer)
    assert promoted.updated_at is None and row.reason == "stable"  # bookkeeping is not a new version of the text


def test_every_writer_builds_rows_with_the_constructor() -> None:
    """HistoryEvent(...) by hand only where a row is read back (from a store's row, from an export's line)."""
    readers = {"records.py", "stores/rows.py", "transfer.py"}
    built = {str(path.relative_to(SRC)) for path in SRC.rglob("*.py")
             if re.search(r"\bHistoryEvent\(", path.read_text(encoding="utf-8"))}
    assert built <= readers, f"build history rows with jiyi.records.history_row / revise in {sorted(built - readers)}"


def test_the_rows_a_memory_gets_through_the_api(tmp_path: Path) -> None:
    async def scenario() -> list[dict[str, Any]]:
        memory = AsyncMemory(build_store(f"sqlite:///{tmp_path / 'm.db'}"), build_embedder("hashing"))
        try:
            added = await memory.add("I live in Hangzhou", user_id="alice", infer=False)
            memory_id = added["results"][0]["id"]
            await memory.update(memory_id, "I live in Shanghai")
            await memory.promote(memory_id, reason="stable")
            await memory.delete(memory_id, reason="the user asked")
            await memory.restore(memory_id)
            return await memory.history(memory_id)
        finally:
            await memory.close()

    rows = asyncio.run(scenario())
    created = rows[0]["created_at"]
    assert [(r["event"], r["old_memory"], r["new_memory"]) for r in rows] == [
        ("ADD", None, "I live in Hangzhou"), ("UPDATE", "I live in Hangzhou", "I live in Shanghai"),
        ("PROMOTE", "I live in Shanghai", "I live in Shanghai"), ("DELETE", "I live in Shanghai", None),
        ("RESTORE", None, "I live in Shanghai")]
    assert [r["created_at"] == created for r in rows] == [True, True, True, False, False]
    assert [r.get("reason") for r in rows] == [None, None, "stable", "the user asked", "restored by request"]
    assert [r["is_deleted"] for r in rows] == [False, False, False, True, False]
