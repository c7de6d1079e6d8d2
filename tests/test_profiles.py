"""What a profile is made of (jiyi/profiles.py): a user's stable facts, grouped by category or filled into a schema,
and the settings that shape it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from jiyi import InvalidInput
from jiyi.profiles import PER_FIELD, ProfileSettings, by_category, by_schema, fingerprint, stable_facts
from jiyi.records import Category, MemoryRecord, Scope

NOW = datetime(2026, 11, 27, tzinfo=UTC)


def fact(text: str, *, categories: list[str] | None = None, tags: list[str] | None = None, importance: float = 1.5,
         core: bool = False, expires: datetime | None = None) -> MemoryRecord:
    return MemoryRecord(text, Scope("u"), categories=categories or [], tags=tags or [], importance=importance,
                        category=Category.CORE if core else Category.FACT, created_at=NOW - timedelta(days=1),
                        expiration_date=expires)


def test_a_profile_keeps_stable_facts_core_first_then_the_most_important() -> None:
    kept = stable_facts([
        fact("User is tired today", tags=["state"]),
        fact("User watched a film last night", tags=["event"]),
        fact("User's birthday is May 3", tags=["event"], core=True),  # core: kept whatever its kind
        fact("User likes tea", importance=1.0),
        fact("User is vegetarian", importance=2.5),
        fact("User's old phone number", expires=NOW - timedelta(days=1)),
    ], NOW)
    assert [r.content for r in kept] == ["User's birthday is May 3", "User is vegetarian", "User likes tea"]


def test_facts_are_grouped_under_their_first_category_in_mem0s_order() -> None:
    grouped = by_category([fact("User drinks oolong", categories=["food", "user_preferences"]),
                           fact("User lives in Hangzhou", categories=["personal_details"]),
                           fact("User has a corgi", categories=["misc"]),
                           fact("An old memory without categories"),
                           fact("User saves for a flat", categories=["money"])])
    assert list(grouped) == ["personal_details", "food", "money", "misc"]  # a project's own after mem0's, misc last
    assert grouped["misc"] == ["User has a corgi", "An old memory without categories"]
    assert len(by_category([fact(f"f{i}", categories=["food"]) for i in range(30)])["food"]) == PER_FIELD


def test_a_schema_takes_arrays_of_facts_strings_of_the_best_and_leaves_numbers_to_an_llm() -> None:
    schema = {"properties": {"food": {"type": "array", "description": "what they eat"},
                             "home": {"type": "string", "description": "where they live"},
                             "age": {"type": "integer", "description": "their age"}}}
    facts = [fact("User drinks oolong", categories=["food"]), fact("User lives in Hangzhou"),
             fact("User is 34")]
    relevance = np.array([[0.0, 0.0, 0.0],   # food: only by its category
                          [0.1, 0.9, 0.2],   # home: by the vectors
                          [0.0, 0.0, 0.9]])  # age: found, but an integer is not read offline
    assert by_schema(schema, facts, relevance) == {"food": ["User drinks oolong"], "home": "User lives in Hangzhou",
                                                   "age": None}


def test_the_fingerprint_changes_with_a_fact_its_version_or_the_schema() -> None:
    first = fact("User likes tea")
    settings = ProfileSettings()
    before = fingerprint([first], settings)
    assert fingerprint([first], settings) == before
    first.version += 1
    assert fingerprint([first], settings) != before
    assert fingerprint([first], ProfileSettings(schema={"properties": {}})) != fingerprint([first], settings)


def test_settings_change_only_what_is_given_and_refuse_what_mem0_refuses() -> None:
    schema = {"type": "object", "properties": {"diet": {"type": "string", "description": "what they eat"}}}
    changed = ProfileSettings().updated({"entities": {"user": {"schema": schema}}})
    assert changed == ProfileSettings(True, schema, None)
    assert changed.updated({"enabled": False}) == ProfileSettings(False, schema, None)
    assert ProfileSettings.from_json(changed.as_json()) == changed
    for bad, says in [({"schema": schema}, "Unsupported settings: schema"),
                      ({"enabled": "yes"}, "true or false"),
                      ({"entities": {"agent": {}}}, "users only"),
                      ({"entities": {"user": {"schema": {"properties": {"x": {"type": "string"}}}}}},
                       "needs a description"),
                      ({"entities": {"user": {"schema": {"type": "object"}}}}, "with properties")]:
        with pytest.raises(InvalidInput, match=says):
            ProfileSettings().updated(bad)
