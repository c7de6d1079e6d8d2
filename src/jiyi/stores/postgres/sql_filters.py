"""Translate a parsed filter tree (jiyi.filters) into a PostgreSQL WHERE clause over `memories m` joined with
`memory_access a` (see codec.MEMORY_FROM), values passed as named parameters.

`jiyi.filters.matches` is the reference: Python's comparisons, so True equals 1, a number never equals a string,
a missing key or a JSON null is absent, and ordering compares numbers with numbers and strings with strings (by code
point: COLLATE "C"). Every condition here is two-valued (never NULL), so NOT needs no special care.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from jiyi.filters import DATETIME_KEYS, ELEMENT_COLUMNS, Condition, Node
from jiyi.stores.postgres.codec import jsonb, utc

_TEXT = {"user_id", "agent_id", "run_id", "actor_id", "role", "hash", "memory_type", "layer", "category", "source"}
_NUMBER = {"importance", "strength", "confidence", "access_count"}
_BOOL = {"verified"}
_JSON = {"tags"}
# Columns that are never NULL need no presence test.
_NOT_NULL = {"hash", "memory_type", "layer", "category", "source", "importance", "strength", "confidence",
             "access_count", "verified", "tags", "created_at"}
_SYMBOLS = {"gt": ">", "gte": ">=", "lt": "<", "lte": "<="}
_EQUALITY = {"eq", "ne", "in", "nin"}


class Params(dict[str, Any]):
    """A query's values by name: add() returns the placeholder to write where the value goes."""

    def add(self, value: Any) -> str:
        name = f"p{len(self)}"
        self[name] = value
        return f"%({name})s"


def _column(name: str) -> str:
    if name == "access_count":
        return "coalesce(a.access_count, 0)"
    if name == "last_accessed_at":
        return "a.last_accessed_at"
    return f"m.{name}"


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _json_equals(p: Params, x: str, value: Any) -> str:
    """`x` (a jsonb expression whose value is present) == value, as Python compares them."""
    if value is None:
        return "false"
    if isinstance(value, bool):
        return (f"(CASE jsonb_typeof({x}) WHEN 'boolean' THEN {x} = {p.add(jsonb(value))} "
                f"WHEN 'number' THEN ({x})::numeric = {p.add(int(value))} ELSE false END)")
    if _is_number(value):
        number = p.add(value)
        return (f"(CASE jsonb_typeof({x}) WHEN 'number' THEN ({x})::numeric = {number} "
                f"WHEN 'boolean' THEN (CASE WHEN ({x})::boolean THEN 1 ELSE 0 END) = {number} ELSE false END)")
    return f"({x} = {p.add(jsonb(value))})"


def _json_condition(p: Params, x: str, op: str, value: Any, always_present: bool, array: bool = False) -> str:
    """`array`: `x` always holds a JSON array (the tags column)."""
    present = "true" if always_present else f"({x} IS NOT NULL AND jsonb_typeof({x}) <> 'null')"
    if op == "exists":
        return present
    if op in _EQUALITY:
        values = value if op in ("in", "nin") else (value,)
        equal = " OR ".join(_json_equals(p, x, v) for v in values) or "false"
        if op in ("eq", "in"):
            return f"({present} AND ({equal}))"
        return f"(NOT {present} OR NOT ({equal}))"
    if op == "contains":
        if isinstance(value, str):
            element = f"{x} @> {p.add(jsonb([value]))}"  # an element equal to the string (the tags GIN index)
            if array:
                # Bare, so that the GIN index on tags can answer it: wrapped in a CASE it could not, and a search
                # for a tag read the whole scope (100k memories: 260 ms, against 0.2; bench/pg_vectors.py).
                return element
        else:
            element = (f"EXISTS (SELECT 1 FROM jsonb_array_elements({x}) AS e(v) "
                       f"WHERE {_json_equals(p, 'e.v', value)})")
        return (f"(CASE jsonb_typeof({x}) WHEN 'array' THEN {element} "
                f"WHEN 'string' THEN strpos({x} #>> '{{}}', {p.add(str(value))}) > 0 ELSE false END)")
    if op == "icontains":
        needle = p.add(str(value).lower())
        return (f"(CASE jsonb_typeof({x}) WHEN 'array' THEN EXISTS (SELECT 1 FROM jsonb_array_elements({x}) AS e(v) "
                f"WHERE jsonb_typeof(e.v) = 'string' AND lower(e.v #>> '{{}}') = {needle}) "
                f"WHEN 'string' THEN strpos(lower({x} #>> '{{}}'), {needle}) > 0 ELSE false END)")
    symbol = _SYMBOLS[op]
    if _is_number(value):
        return (f"(CASE WHEN jsonb_typeof({x}) = 'number' THEN ({x})::numeric {symbol} {p.add(value)} "
                "ELSE false END)")
    if isinstance(value, str):
        return (f"(CASE WHEN jsonb_typeof({x}) = 'string' THEN ({x} #>> '{{}}') COLLATE \"C\" {symbol} "
                f"{p.add(value)} ELSE false END)")
    return "false"


def _column_equals(p: Params, name: str, expr: str, value: Any) -> str | None:
    """expr == value for a present column value, or None when no value of the column's type equals it."""
    if name in _TEXT:
        return f"{expr} = {p.add(value)}" if isinstance(value, str) else None
    if name in _NUMBER:
        if isinstance(value, int | float):
            return f"{expr} = {p.add(int(value) if isinstance(value, bool) else value)}"
        return None
    if name in _BOOL:
        if isinstance(value, bool):
            return f"{expr} = {p.add(value)}"
        return f"{expr}::int = {p.add(value)}" if _is_number(value) else None
    if name in DATETIME_KEYS:
        return f"{expr} = {p.add(utc(value))}" if isinstance(value, datetime) else None
    raise AssertionError(f"no SQL type for column {name!r}")


def _column_condition(p: Params, name: str, op: str, value: Any) -> str:
    expr = _column(name)
    nullable = name not in _NOT_NULL

    def when_present(test: str) -> str:
        return f"({expr} IS NOT NULL AND {test})" if nullable else test

    if op == "exists":
        return f"({expr} IS NOT NULL)" if nullable else "true"
    if op in _EQUALITY:
        values = value if op in ("in", "nin") else (value,)
        if name in _TEXT and len(values) > 1 and all(isinstance(v, str) for v in values):
            equal = f"{expr} = ANY({p.add(list(values))})"  # category IN (...) keeps using its index
        else:
            equal = " OR ".join(c for c in (_column_equals(p, name, expr, v) for v in values) if c) or "false"
        if op in ("eq", "in"):
            return when_present(f"({equal})")
        return f"({expr} IS NULL OR NOT ({equal}))" if nullable else f"(NOT ({equal}))"
    if op in ("contains", "icontains"):
        if name not in _TEXT:
            return "false"  # nothing is contained in a number, a flag or a time
        if op == "contains":
            return when_present(f"strpos({expr}, {p.add(str(value))}) > 0")
        return when_present(f"strpos(lower({expr}), {p.add(str(value).lower())}) > 0")
    symbol = _SYMBOLS[op]
    if name in DATETIME_KEYS and isinstance(value, datetime):
        return when_present(f"{expr} {symbol} {p.add(utc(value))}")
    if name in _NUMBER and _is_number(value):
        return when_present(f"{expr} {symbol} {p.add(value)}")
    if name in _TEXT and isinstance(value, str):
        return when_present(f"{expr} COLLATE \"C\" {symbol} {p.add(value)}")
    return "false"


def _elements_condition(p: Params, column: str, op: str, value: Any) -> str:
    """A condition on a list column's elements (mem0's categories; filters._eval_elements): each element test is a
    bare `@>`, which the column's GIN index answers."""
    expr = _column(column)
    if op == "exists":
        return f"({expr} <> '[]'::jsonb)"
    if op == "icontains":
        return (f"EXISTS (SELECT 1 FROM jsonb_array_elements({expr}) AS e(v) WHERE jsonb_typeof(e.v) = 'string' "
                f"AND lower(e.v #>> '{{}}') = {p.add(str(value).lower())})")
    if op not in ("eq", "ne", "contains", "in", "nin"):
        return "false"
    values = [v for v in (value if op in ("in", "nin") else (value,)) if isinstance(v, str | int | float)]
    if not values:
        return "true" if op in ("ne", "nin") else "false"
    held = "(" + " OR ".join(f"{expr} @> {p.add(jsonb([v]))}" for v in values) + ")"
    return f"(NOT {held})" if op in ("ne", "nin") else held


def _condition(p: Params, cond: Condition) -> str:
    if cond.column in ELEMENT_COLUMNS:
        return _elements_condition(p, cond.column, cond.op, cond.value)
    if cond.column is None:
        return _json_condition(p, f"(m.metadata -> {p.add(cond.meta_key)})", cond.op, cond.value, False)
    if cond.column in _JSON:
        return _json_condition(p, _column(cond.column), cond.op, cond.value, True, array=True)
    return _column_condition(p, cond.column, cond.op, cond.value)


def to_sql(node: Node | None, params: Params) -> str:
    """A boolean SQL expression for `node`; its values go into `params`."""
    if node is None:
        return "true"
    if isinstance(node, Condition):
        return _condition(params, node)
    parts = [to_sql(item, params) for item in node.items]
    if node.kind == "AND":
        return "(" + " AND ".join(parts) + ")"
    if node.kind == "OR":
        return "(" + " OR ".join(parts) + ")"
    return "(NOT (" + " OR ".join(parts) + "))"
