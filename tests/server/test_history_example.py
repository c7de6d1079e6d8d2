"""mem0's history example (Desmond / sister / Jesica / dog) replayed over HTTP and read back from the history table.

With infer=false each turn's fact is given directly; the update is an explicit PUT. The table must hold mem0's rows:
ADD "Name is Desmond"; ADD "Has a sister"; UPDATE (same memory) "Has a sister" -> "Has a sister named Jesica";
ADD "Jesica has a dog".
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from rest_helpers import HISTORY_COLUMNS, add, history, ok

from jiyi import AsyncMemory, build_embedder, build_store

MEM0_HISTORY_SCHEMA = [
    ("id", "TEXT", 1), ("memory_id", "TEXT", 0), ("old_memory", "TEXT", 0), ("new_memory", "TEXT", 0),
    ("event", "TEXT", 0), ("created_at", "DATETIME", 0), ("updated_at", "DATETIME", 0),
    ("is_deleted", "INTEGER", 0), ("actor_id", "TEXT", 0), ("role", "TEXT", 0),
]
EXPECTED_EVENTS = [
    ("desmond", "ADD", None, "Name is Desmond"),
    ("sister", "ADD", None, "Has a sister"),
    ("sister", "UPDATE", "Has a sister", "Has a sister named Jesica"),
    ("dog", "ADD", None, "Jesica has a dog"),
]


@dataclass
class Replay:
    db_path: Path
    client: httpx.Client
    ids: dict[str, str]


@pytest.fixture
def replay(make_server: Callable[..., Any], tmp_path: Path) -> Iterator[Replay]:
    db_path = tmp_path / "h.db"
    server = make_server(AsyncMemory(build_store(f"sqlite:///{db_path}"), build_embedder("hashing")))
    with httpx.Client(base_url=server.url, timeout=30) as client:
        ids = {
            "desmond": add(client, "Name is Desmond", user_id="desmond")["id"],
            "sister": add(client, "Has a sister", user_id="desmond")["id"],
        }
        ok(client.put(f"/memories/{ids['sister']}", json={"text": "Has a sister named Jesica"}))
        ids["dog"] = add(client, "Jesica has a dog", user_id="desmond")["id"]
        yield Replay(db_path, client, ids)


def table_rows(db_path: Path) -> list[sqlite3.Row]:
    with sqlite3.connect(db_path) as db:
        db.row_factory = sqlite3.Row
        return db.execute(f"SELECT {', '.join(HISTORY_COLUMNS)} FROM history ORDER BY rowid").fetchall()


def test_history_table_has_exactly_mem0_columns(replay: Replay) -> None:
    with sqlite3.connect(replay.db_path) as db:
        info = db.execute("PRAGMA table_info(history)").fetchall()
    assert [(name, kind, pk) for _cid, name, kind, _notnull, _default, pk in info] == MEM0_HISTORY_SCHEMA


def test_history_table_holds_add_add_update_add(replay: Replay) -> None:
    rows = table_rows(replay.db_path)
    expected = [(replay.ids[key], event, old, new) for key, event, old, new in EXPECTED_EVENTS]
    assert [(r["memory_id"], r["event"], r["old_memory"], r["new_memory"]) for r in rows] == expected
    assert [r["is_deleted"] for r in rows] == [0, 0, 0, 0]
    assert [r["role"] for r in rows] == ["user"] * 4
    assert len({r["id"] for r in rows}) == 4
    assert rows[2]["updated_at"] is not None


def test_update_row_keeps_the_memory_id_and_the_table_agrees_with_http(replay: Replay) -> None:
    sister = replay.ids["sister"]
    over_http = history(replay.client, sister)
    assert [(r["event"], r["old_memory"], r["new_memory"]) for r in over_http] == [
        ("ADD", None, "Has a sister"), ("UPDATE", "Has a sister", "Has a sister named Jesica")]
    in_table = [r for r in table_rows(replay.db_path) if r["memory_id"] == sister]
    assert [r["id"] for r in in_table] == [r["id"] for r in over_http]
    assert all(r["memory_id"] == sister for r in over_http)


@pytest.mark.parametrize("key", ["desmond", "dog"])
def test_unchanged_memories_have_a_single_add_row(replay: Replay, key: str) -> None:
    rows = history(replay.client, replay.ids[key])
    assert [(r["event"], r["old_memory"]) for r in rows] == [("ADD", None)]
    assert list(rows[0]) == HISTORY_COLUMNS


def test_current_memories_after_the_replay(replay: Replay) -> None:
    current = {item["memory"] for item in ok(replay.client.get("/memories", params={"user_id": "desmond"}))["results"]}
    assert current == {"Name is Desmond", "Has a sister named Jesica", "Jesica has a dog"}
