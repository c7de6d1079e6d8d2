"""The facade's argument checks, shared by its methods and by the requests (requests.py, where the checks of one
operation alone live): each turns a caller's value into what jiyi uses, or raises InvalidInput saying what to fix (the
server answers it as a 4xx). Values are never echoed where they may be a user's text."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from jiyi.core.categories import parse_custom_categories
from jiyi.core.messages import check_json_value, check_text, parse_time
from jiyi.errors import InvalidInput, NotFound
from jiyi.records import Scope

DEFAULT_TOP_K = 20  # search results
DEFAULT_CONTEXT_TOP_K = 5  # memories context() injects
DEFAULT_LIST_LIMIT = 100  # get_all, a page of get_page
MAX_LIMIT = 1000
UNSET: Any = object()  # an argument not given, where None means "clear it" (update's expiration_date)


def limit(value: Any, default: int, name: str) -> int:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInput(f"{name} must be an integer")
    if not 1 <= value <= MAX_LIMIT:
        raise InvalidInput(f"{name} must be between 1 and {MAX_LIMIT}, got {value}")
    return value


def one_count(limit_: int | None, top_k: int | None) -> int | None:
    """v1 says `limit`, v2 `top_k`: the one given."""
    if limit_ is not None and top_k is not None and limit_ != top_k:
        raise InvalidInput("give the result count once, as limit or as top_k")
    return top_k if top_k is not None else limit_


def check_fraction(value: Any, name: str) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1):
        raise InvalidInput(f"{name} must be a number between 0 and 1")


def custom_categories(value: Any) -> list[dict[str, str]] | None:
    """mem0's custom_categories, checked, as [{"name": "description"}]; None for none (an empty list too)."""
    if value is None or value == []:
        return None
    return [{name: text} for name, text in parse_custom_categories(value)]


def expiration(value: Any) -> datetime | None:
    return parse_time(value, "expiration_date")


def check_metadata(metadata: Any) -> None:
    if metadata is not None and not isinstance(metadata, dict):
        raise InvalidInput("metadata must be an object")
    check_json_value(metadata, "metadata")


def check_version(version: Any) -> None:
    if version is not None and (isinstance(version, bool) or not isinstance(version, int) or version < 1):
        raise InvalidInput("version must be a positive integer (a memory's version, as get() returns it)")


def check_reason(reason: Any) -> None:
    if reason is not None:
        if not isinstance(reason, str) or not reason.strip():
            raise InvalidInput("reason must be a non-empty string")
        check_text(reason, "reason")


def new_text(data: Any, text: Any) -> str | None:
    """update()'s new text: v1 gives it as `data`, v2 as `text`; None when neither is given."""
    if data is not None and text is not None and data != text:
        raise InvalidInput("give the new text once, as data or as text")
    chosen = text if text is not None else data
    if chosen is None:
        return None
    if not isinstance(chosen, str) or not chosen.strip():
        raise InvalidInput("text must be a non-empty string")
    check_text(chosen, "text")
    return chosen


def update_expiration(new_text: str | None, metadata: Any, expiration_date: Any) -> Any:
    """update()'s expiration date: a datetime, None to clear it, UNSET to keep it; something must change."""
    if new_text is None and metadata is None and expiration_date is UNSET:
        raise InvalidInput("nothing to update: give text, metadata or expiration_date")
    return UNSET if expiration_date is UNSET else expiration(expiration_date)


ENTITY_FIELDS = {"user": "user_id", "agent": "agent_id", "run": "run_id"}


def entity_scope(kind: str, name: str, user_id: str | None, agent_id: str | None) -> Scope:
    """The scope of one user, agent or run (`kind`, `name`), among one user's or one agent's memories if given."""
    field = ENTITY_FIELDS.get(kind)
    if field is None:
        raise InvalidInput(f"entity type must be user, agent or run (jiyi has no {kind!r} scope)")
    within = {"user_id": user_id, "agent_id": agent_id}
    if within.get(field) not in (None, name):
        raise NotFound(f"{kind} {name} not found")  # among one user's memories there is no other user
    return Scope(**{**within, field: name})
