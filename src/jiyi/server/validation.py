"""A request that fails FastAPI's validation, said in one plain sentence that names the field: what mem0's SDKs show
as the error's message (they print `detail` as it comes, so a list of pydantic's objects reached users as a dump).

Never the value that was sent: it may be a user's private message, and a lone surrogate in it would make the answer
itself unencodable."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

# What a field must be, by pydantic's error type; a union's members fail one each, and are named together.
EXPECTED = {
    "string_type": "a string", "int_type": "an integer", "int_parsing": "an integer", "int_from_float": "an integer",
    "float_type": "a number", "float_parsing": "a number", "bool_type": "true or false",
    "bool_parsing": "true or false", "list_type": "a list", "dict_type": "an object", "model_type": "an object",
    "model_attributes_type": "an object", "none_required": "null",
}
# pydantic names each member of a union in the error's location ("str", "list[MessageIn]"); a field's path leaves them
# out. jiyi's field names are snake_case words, which none of these are.
_TYPE_NAMES = frozenset({"str", "int", "float", "bool", "bytes", "dict", "list", "none", "date", "datetime", "decimal"})
_TYPE_TAG = re.compile(r"\[|^[A-Z]|^(?:function|constrained|lax|json-or-python)-")
_SHOULD = re.compile(r"^(?:Input|String|List|Dictionary|Tuple|Set|Value) should ")
SOURCES = {"query": "query parameter ", "path": "path parameter ", "header": "header ", "cookie": "cookie "}
MOST_FIELDS = 3


def _field(loc: Sequence[Any]) -> tuple[str, tuple[Any, ...]]:
    """The sentence's name for a location, and the path it names (union members left out)."""
    source, *rest = loc or ("body",)
    path = tuple(part for part in rest
                 if not (isinstance(part, str) and (part in _TYPE_NAMES or _TYPE_TAG.search(part))))
    name = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in path).lstrip(".")
    if source == "body":
        return (name or "the request body"), path
    return f"{SOURCES.get(str(source), '')}{name}", (source, *path)


def _problem(name: str, errors: list[Mapping[str, Any]]) -> str:
    kinds = [str(e.get("type", "")) for e in errors]
    if "missing" in kinds:
        return f"{name} is required"
    if kinds[0] in ("too_short", "string_too_short") and (errors[0].get("ctx") or {}).get("min_length") == 1:
        return f"{name} must not be empty"
    if all(kind in EXPECTED for kind in kinds):
        expected = list(dict.fromkeys(EXPECTED[kind] for kind in kinds))
        listed = expected[0] if len(expected) == 1 else f"{', '.join(expected[:-1])} or {expected[-1]}"
        return f"{name} must be {listed}"
    message = str(errors[0].get("msg", "is invalid"))
    return f"{name} {_SHOULD.sub('must ', message)}" if _SHOULD.match(message) else f"{name}: {message}"


def validation_sentence(errors: Sequence[Mapping[str, Any]]) -> str:
    """One sentence for pydantic's errors: "messages[0].content must be a string, an object or a list"."""
    if any(e.get("type") == "json_invalid" for e in errors):
        return "the request body is not valid JSON"
    by_path: dict[tuple[Any, ...], tuple[str, list[Mapping[str, Any]]]] = {}
    for error in errors:
        name, path = _field(list(error.get("loc", ())))
        by_path.setdefault(path, (name, []))[1].append(error)
    # A union's member that failed at the field itself lost to one that got further inside it: name the deeper one.
    deepest = [path for path in by_path
               if not any(len(other) > len(path) and other[:len(path)] == path for other in by_path)]
    problems = [_problem(*by_path[path]) for path in deepest[:MOST_FIELDS]]
    more = len(deepest) - MOST_FIELDS
    return "; ".join(problems) + (f" (and {more} more)" if more > 0 else "") if problems else "the request is invalid"
