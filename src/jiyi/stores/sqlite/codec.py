"""Rows ↔ records in SQLite (the mapping itself is jiyi.stores.rows). Datetimes are stored as fixed-width UTC ISO
strings, so string order is time order; JSON as text."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime
from typing import Any

from jiyi.records import HistoryEvent, MemoryRecord, StoredMessage, TurnRecord
from jiyi.stores import rows
from jiyi.stores.rows import MEMORY_COLUMNS, TURN_COLUMNS

__all__ = ["MEMORY_COLUMNS", "TURN_COLUMNS", "format_datetime", "parse_datetime"]


def format_datetime(value: datetime | None) -> str | None:
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f+00:00")


def parse_datetime(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


_EMPTY_JSON: dict[str, type[list[Any]] | type[dict[str, Any]]] = {"[]": list, "{}": dict}


def parse_json(text: str) -> Any:
    """json.loads, with the empty lists and objects most of a memory's JSON columns hold read without the parser
    (five columns a row, some 50 rows a search)."""
    empty = _EMPTY_JSON.get(text)
    return empty() if empty is not None else json.loads(text)


SQLITE = rows.Dialect(time_out=format_datetime, time_in=parse_datetime, json_out=rows.dumps, json_in=parse_json,
                      jsonb_out=rows.dumps)


def memory_to_row(record: MemoryRecord) -> tuple[Any, ...]:
    return rows.memory_values(record, SQLITE)


def row_to_memory(row: sqlite3.Row) -> MemoryRecord:
    # As a dict: sqlite3.Row finds a column by name with a linear search, 13 us for a record's 28 (a search reads some
    # 50 rows); the dict costs 4.
    return rows.memory_from_row(dict(zip(row.keys(), row, strict=True)), SQLITE)


def values_to_memory(values: tuple[Any, ...]) -> MemoryRecord:
    """A memory from a plain row of MEMORY_COLUMNS, in their order."""
    return rows.memory_from_row(dict(zip(MEMORY_COLUMNS, values, strict=True)), SQLITE)


def history_to_row(event: HistoryEvent) -> tuple[Any, ...]:
    return rows.history_values(event, SQLITE)


def row_to_history(row: sqlite3.Row) -> HistoryEvent:
    return rows.history_from_row(row, SQLITE)


def message_to_row(message: StoredMessage) -> tuple[Any, ...]:
    return rows.message_values(message, SQLITE)


def row_to_message(row: sqlite3.Row) -> StoredMessage:
    return rows.message_from_row(row, SQLITE)


def turn_to_row(turn: TurnRecord) -> tuple[Any, ...]:
    return rows.turn_values(turn, SQLITE)


def row_to_turn(row: sqlite3.Row) -> TurnRecord:
    return rows.turn_from_row(row, SQLITE)
