"""mem0's filter grammar, parsed once into a small tree that every store translates.

    {"key": value}                         equality ("*" means: the key is present)
    {"key": {"eq|ne|gt|gte|lt|lte|in|nin|contains|icontains": v}}
    {"AND": [...]}, {"OR": [...]}, {"NOT": [...]}   (NOT: none of the listed conditions holds)
    {"metadata": {"key": value or {op: v}, ...}}   mem0's platform form: the same as {"metadata.key": ...} for each key

mem0's own fields (user_id, agent_id, run_id, actor_id, role, hash, created_at, updated_at, expiration_date,
categories) filter those fields; `categories` is a list, and its conditions are about its elements, as mem0's are:
{"categories": {"in": ["food", "travel"]}} holds for a memory in either, "food" or {"contains": "food"} for one in
food, {"nin": [...]} for one in none of them, "*" for one with any. jiyi's record fields are named with a "jiyi."
prefix ("jiyi.layer", "jiyi.importance"), so that a caller's metadata key such as "category" is never shadowed; every
other key ("metadata.x" to be explicit) filters the caller's metadata. user_id / agent_id / run_id at the top level
become the search scope.
`matches` is the reference semantics; the SQL translations are tested against it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from jiyi.errors import InvalidInput
from jiyi.records import Category, MemoryRecord, Scope

OPERATORS = frozenset({"eq", "ne", "gt", "gte", "lt", "lte", "in", "nin", "contains", "icontains"})
SCOPE_KEYS = ("user_id", "agent_id", "run_id")
MEM0_COLUMNS = frozenset({
    "user_id", "agent_id", "run_id", "actor_id", "role", "hash", "created_at", "updated_at", "expiration_date",
    "categories",
})
# List columns whose conditions are about their elements (mem0's categories), not the list as one value.
ELEMENT_COLUMNS = frozenset({"categories"})
JIYI_COLUMNS = frozenset({
    "memory_type", "layer", "category", "source", "importance", "strength", "access_count", "confidence",
    "verified", "last_accessed_at", "event_time", "tags",
})
JIYI_PREFIX = "jiyi."
METADATA_PREFIX = "metadata."
NESTED_METADATA = "metadata"
SQL_INT_RANGE = (-(2**63), 2**63 - 1)
DATETIME_KEYS = frozenset({"created_at", "updated_at", "last_accessed_at", "event_time", "expiration_date"})
_LOGIC = {"AND": "AND", "OR": "OR", "NOT": "NOT", "$AND": "AND", "$OR": "OR", "$NOT": "NOT"}


@dataclass(frozen=True, slots=True)
class Condition:
    key: str  # as the caller wrote it
    op: str  # one of OPERATORS or "exists"
    value: Any
    column: str | None = None  # the record field it names, or
    meta_key: str | None = None  # the metadata key


def resolve_key(key: str) -> tuple[str | None, str | None]:
    """(column, metadata key) a filter key refers to."""
    if key in MEM0_COLUMNS:
        return key, None
    if key.startswith(JIYI_PREFIX):
        name = key[len(JIYI_PREFIX):]
        if name in JIYI_COLUMNS or name in MEM0_COLUMNS:
            return name, None
        raise InvalidInput(f"unknown jiyi field {key!r}; known: {sorted(JIYI_PREFIX + c for c in JIYI_COLUMNS)}")
    if key.startswith(METADATA_PREFIX) and len(key) > len(METADATA_PREFIX):
        return None, key[len(METADATA_PREFIX):]
    return None, key


def _check_operand(key: str, value: Any) -> None:
    if isinstance(value, int) and not isinstance(value, bool) and not SQL_INT_RANGE[0] <= value <= SQL_INT_RANGE[1]:
        raise InvalidInput(f"filter on {key!r}: integer {value} is out of the 64-bit range")
    if isinstance(value, float) and not math.isfinite(value):
        raise InvalidInput(f"filter on {key!r}: numbers must be finite")


@dataclass(frozen=True, slots=True)
class Logic:
    kind: str  # AND | OR | NOT
    items: tuple[Node, ...]


Node = Condition | Logic


def parse_datetime(value: Any, field: str) -> datetime:
    if isinstance(value, datetime):
        parsed = value
    elif isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError as exc:
            raise InvalidInput(f"filter on {field}: {value!r} is not an ISO date or datetime") from exc
    elif isinstance(value, int | float) and not isinstance(value, bool):
        try:
            parsed = datetime.fromtimestamp(value, UTC)
        except (OverflowError, OSError, ValueError) as exc:
            raise InvalidInput(f"filter on {field}: {value!r} is not a valid Unix time") from exc
    else:
        raise InvalidInput(f"filter on {field}: expected an ISO date or datetime, got {value!r}")
    parsed = parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    try:
        return parsed.astimezone(UTC)
    except OverflowError as exc:
        raise InvalidInput(f"filter on {field}: {value!r} is out of the supported date range") from exc


def _condition(key: str, op: str, value: Any) -> Condition:
    column, meta_key = resolve_key(key)
    if op not in OPERATORS:
        raise InvalidInput(f"filter on {key!r}: unknown operator {op!r}; use one of {sorted(OPERATORS)}")
    if op in ("in", "nin") and not isinstance(value, list | tuple):
        raise InvalidInput(f"filter on {key!r}: operator {op!r} needs a list of values")
    if op in ("gt", "gte", "lt", "lte") and (isinstance(value, bool) or not isinstance(value, int | float | str)):
        raise InvalidInput(f"filter on {key!r}: operator {op!r} needs a number or a date")
    if op == "icontains" and not isinstance(value, str):
        raise InvalidInput(f"filter on {key!r}: operator 'icontains' needs a string")
    for operand in value if op in ("in", "nin") else (value,):
        _check_operand(key, operand)
    if column in DATETIME_KEYS:
        if op in ("in", "nin"):
            value = tuple(parse_datetime(v, key) for v in value)
        elif op not in ("contains", "icontains"):
            value = parse_datetime(value, key)
    elif op in ("in", "nin"):
        value = tuple(value)
    return Condition(key, op, value, column, meta_key)



# Every memory but the messages an infer=True add keeps as searchable evidence (category "message"): what a listing
# shows unless asked for them.
NOT_MESSAGES: Node = Logic("NOT", (_condition("jiyi.category", "eq", Category.MESSAGE.value),))


def mentions_category(filters: Any) -> bool:
    """Whether a filter tree names the category anywhere (then it decides which categories are listed)."""
    if isinstance(filters, dict):
        return any(key == "jiyi.category" or mentions_category(value) for key, value in filters.items())
    if isinstance(filters, list):
        return any(mentions_category(item) for item in filters)
    return False


def listing_filter(filters: dict[str, Any] | None, include_messages: bool) -> Node | None:
    """A listing's filter: the messages kept as evidence only on request or when the filter names the category."""
    where = parse_filters(filters)
    if include_messages or mentions_category(filters):
        return where
    return Logic("AND", (where, NOT_MESSAGES)) if where is not None else NOT_MESSAGES

def _names_keys(condition: dict[Any, Any]) -> bool:
    """Whether {"metadata": {...}} is mem0's nested form (metadata keys inside) rather than operators on a metadata
    key that is itself called "metadata"; a mix of the two is refused, not guessed."""
    operators = [name for name in condition if str(name).lower() in OPERATORS]
    if operators and len(operators) < len(condition):
        raise InvalidInput(f"filter on 'metadata' mixes operators ({', '.join(map(str, operators))}) with metadata "
                           'keys; write {"metadata": {"key": {"op": value}}}')
    return not operators


def _parse_node(data: Any, where: str) -> list[Node]:
    if not isinstance(data, dict):
        raise InvalidInput(f"{where}: a filter must be an object, got {type(data).__name__}")
    nodes: list[Node] = []
    for key, value in data.items():
        if not isinstance(key, str) or not key:
            raise InvalidInput(f"{where}: filter keys must be non-empty strings")
        logic = _LOGIC.get(key.upper())
        if logic:
            if isinstance(value, dict):
                value = [value]
            if not isinstance(value, list) or not value:
                raise InvalidInput(f"{where}: {key} needs a non-empty list of filters")
            items: list[Node] = []
            for index, item in enumerate(value):
                items.extend(_parse_node(item, f"{where}.{key}[{index}]"))
            nodes.append(Logic(logic, tuple(items)))
        elif key == NESTED_METADATA and isinstance(value, dict) and value and _names_keys(value):
            for meta_key, condition in value.items():
                nodes.extend(_parse_node({METADATA_PREFIX + str(meta_key): condition}, f"{where}.metadata"))
        elif isinstance(value, dict):
            if not value:
                raise InvalidInput(f"{where}: filter on {key!r} has no operator")
            for op, operand in value.items():
                nodes.append(_condition(key, str(op).lower(), operand))
        elif value == "*":
            nodes.append(Condition(key, "exists", None, *resolve_key(key)))
        else:
            nodes.append(_condition(key, "eq", value))
    return nodes


def parse_filters(filters: dict[str, Any] | None) -> Node | None:
    if not filters:
        return None
    nodes = _parse_node(filters, "filters")
    if not nodes:
        return None
    return nodes[0] if len(nodes) == 1 else Logic("AND", tuple(nodes))


def split_scope(filters: dict[str, Any] | None) -> tuple[dict[str, str], dict[str, Any]]:
    """Take top-level user_id/agent_id/run_id equalities out of a filter dict (mem0 v2 puts the ids there)."""
    if not filters:
        return {}, {}
    if not isinstance(filters, dict):
        raise InvalidInput("filters must be an object")
    ids: dict[str, str] = {}
    rest: dict[str, Any] = {}

    def take(key: str, value: str) -> None:
        if ids.setdefault(key, value) != value:  # {"AND": [{"user_id": "a"}, {"user_id": "b"}]} matches nothing
            raise InvalidInput(f"filters name two different {key}s ({ids[key]!r} and {value!r}) that must both hold")

    for key, value in filters.items():
        if key in SCOPE_KEYS and isinstance(value, str) and value != "*":
            take(key, value)
        elif key in SCOPE_KEYS and isinstance(value, dict) and set(value) == {"eq"} and isinstance(value["eq"], str):
            take(key, value["eq"])
        elif _LOGIC.get(key.upper()) == "AND" and isinstance(value, list | dict) and value:
            # mem0's platform form {"AND": [{"user_id": "alice"}, {"agent_id": "x"}, ...]}: what every item must
            # hold, the ids among them included, holds at the top level too.
            kept = []
            for item in value if isinstance(value, list) else [value]:
                inner_ids, inner_rest = split_scope(item) if isinstance(item, dict) else ({}, item)
                for inner_key, inner_value in inner_ids.items():
                    take(inner_key, inner_value)
                if inner_rest:
                    kept.append(inner_rest)
            if kept:
                rest[key] = kept
        else:
            rest[key] = value
    return ids, rest


def named_values(condition: Any) -> list[Any]:
    """The values a top-level condition on one field names: a value, {"eq": v}, {"in": [...]}. Any other form (ne,
    nin, "*", a comparison) names none: AND-ed with a caller's own scope, it can only narrow."""
    if condition is None or condition == "*":
        return []
    if isinstance(condition, dict):
        named: list[Any] = []
        for op, value in condition.items():
            if op == "eq":
                named.append(value)
            elif op == "in":
                named.extend(value if isinstance(value, list) else [value])
        return named
    return [condition]


def merge_scope(scope: Scope, filters: dict[str, Any] | None) -> tuple[Scope, dict[str, Any]]:
    """Combine explicit ids with ids given inside `filters`; conflicting values are an error, not a guess."""
    ids, rest = split_scope(filters)
    merged = scope.as_dict()
    for key, value in ids.items():
        if key in merged and merged[key] != value:
            raise InvalidInput(f"{key} is given twice with different values ({merged[key]!r} and {value!r})")
        merged[key] = value
    return Scope(**merged), rest


# --- reference semantics -------------------------------------------------------------------------------


def _lookup(record: MemoryRecord, cond: Condition) -> tuple[bool, Any]:
    if cond.column in SCOPE_KEYS:
        value = getattr(record.scope, cond.column)
        return value is not None, value
    if cond.column is not None:
        value = getattr(record, cond.column)
        if hasattr(value, "value"):
            value = value.value
        return value is not None, value
    value = record.metadata.get(cond.meta_key or "")
    return value is not None, value


def _compare(op: str, actual: Any, expected: Any) -> bool:
    try:
        if op == "gt":
            return bool(actual > expected)
        if op == "gte":
            return bool(actual >= expected)
        if op == "lt":
            return bool(actual < expected)
        return bool(actual <= expected)
    except TypeError:
        return False


def _eval_elements(cond: Condition, elements: list[Any]) -> bool:
    op, expected = cond.op, cond.value
    if op == "exists":
        return bool(elements)
    if op in ("eq", "contains"):
        return expected in elements
    if op == "ne":
        return expected not in elements
    if op == "in":
        return any(value in elements for value in expected)
    if op == "nin":
        return not any(value in elements for value in expected)
    if op == "icontains":
        return any(isinstance(e, str) and e.lower() == expected.lower() for e in elements)
    return False  # a list is not ordered against a value


def _eval_condition(cond: Condition, record: MemoryRecord) -> bool:
    if cond.column in ELEMENT_COLUMNS:
        return _eval_elements(cond, getattr(record, cond.column))
    present, actual = _lookup(record, cond)
    op, expected = cond.op, cond.value
    if op == "exists":
        return present
    if op == "ne":
        return not present or actual != expected
    if op == "nin":
        return not present or actual not in expected
    if not present:
        return False
    if op == "eq":
        return bool(actual == expected)
    if op == "in":
        return actual in expected
    if op == "contains":
        if isinstance(actual, list):
            return expected in actual
        return isinstance(actual, str) and str(expected) in actual
    if op == "icontains":
        if isinstance(actual, list):
            return any(isinstance(a, str) and a.lower() == expected.lower() for a in actual)
        return isinstance(actual, str) and expected.lower() in actual.lower()
    if isinstance(actual, bool) or isinstance(expected, bool):
        return False
    if isinstance(expected, int | float) and not isinstance(actual, int | float):
        return False
    if isinstance(expected, str) and not isinstance(actual, str):
        return False
    return _compare(op, actual, expected)


def matches(node: Node | None, record: MemoryRecord) -> bool:
    if node is None:
        return True
    if isinstance(node, Condition):
        return _eval_condition(node, record)
    if node.kind == "AND":
        return all(matches(item, record) for item in node.items)
    if node.kind == "OR":
        return any(matches(item, record) for item in node.items)
    return not any(matches(item, record) for item in node.items)
