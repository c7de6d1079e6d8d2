"""Scopes over HTTP: one user's memories never reach another user; several ids narrow the scope (AND)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from rest_helpers import add, list_memories, search, texts_found

# (text, user_id, agent_id, run_id): the same words everywhere, so only the scope can tell them apart.
SEEDED = [
    ("alice alone likes sushi", "alice", None, None),
    ("alice with tutor likes sushi", "alice", "tutor", None),
    ("alice with chef likes sushi", "alice", "chef", None),
    ("alice with tutor in run r1 likes sushi", "alice", "tutor", "r1"),
    ("bob alone likes sushi", "bob", None, None),
    ("bob with tutor likes sushi", "bob", "tutor", None),
    ("tutor alone likes sushi", None, "tutor", None),
]


@pytest.fixture
def seeded(client: httpx.Client) -> httpx.Client:
    for text, user_id, agent_id, run_id in SEEDED:
        ids = {k: v for k, v in (("agent_id", agent_id), ("run_id", run_id)) if v}
        add(client, text, user_id=user_id, **ids)
    return client


def having(**ids: str) -> set[str]:
    """The seeded texts whose scope holds every given id."""
    columns = {"user_id": 1, "agent_id": 2, "run_id": 3}
    return {row[0] for row in SEEDED if all(row[columns[k]] == v for k, v in ids.items())}


SCOPES: list[dict[str, str]] = [
    {"user_id": "alice"},
    {"user_id": "bob"},
    {"agent_id": "tutor"},
    {"user_id": "alice", "agent_id": "tutor"},
    {"user_id": "bob", "agent_id": "tutor"},
    {"user_id": "alice", "agent_id": "chef"},
    {"user_id": "alice", "run_id": "r1"},
    {"user_id": "alice", "agent_id": "tutor", "run_id": "r1"},
    {"run_id": "r1"},
    {"user_id": "carol"},
]


@pytest.mark.parametrize("scope", SCOPES, ids=[",".join(f"{k}={v}" for k, v in s.items()) for s in SCOPES])
def test_search_with_top_level_ids_returns_exactly_that_scope(seeded: httpx.Client, scope: dict[str, str]) -> None:
    assert texts_found(seeded, "likes sushi", **scope) == having(**scope)


@pytest.mark.parametrize("scope", SCOPES, ids=[",".join(f"{k}={v}" for k, v in s.items()) for s in SCOPES])
def test_search_with_ids_in_filters_returns_exactly_that_scope(seeded: httpx.Client, scope: dict[str, str]) -> None:
    assert texts_found(seeded, "likes sushi", filters=scope) == having(**scope)


@pytest.mark.parametrize("scope", SCOPES, ids=[",".join(f"{k}={v}" for k, v in s.items()) for s in SCOPES])
def test_list_returns_exactly_that_scope(seeded: httpx.Client, scope: dict[str, str]) -> None:
    assert {item["memory"] for item in list_memories(seeded, **scope)} == having(**scope)


def test_other_users_exact_text_is_not_found(seeded: httpx.Client) -> None:
    results = search(seeded, "bob alone likes sushi", user_id="alice")
    assert all(r["user_id"] == "alice" for r in results)
    assert "bob alone likes sushi" not in {r["memory"] for r in results}


def test_returned_items_carry_their_scope(seeded: httpx.Client) -> None:
    results: list[dict[str, Any]] = search(seeded, "sushi", user_id="alice", agent_id="tutor")
    assert results
    assert all(r["user_id"] == "alice" and r["agent_id"] == "tutor" for r in results)


def test_delete_all_of_a_user_agent_pair_spares_the_rest(seeded: httpx.Client) -> None:
    seeded.delete("/memories", params={"user_id": "alice", "agent_id": "tutor"}).raise_for_status()
    assert texts_found(seeded, "likes sushi", user_id="alice") == having(user_id="alice") - having(
        user_id="alice", agent_id="tutor")
    assert texts_found(seeded, "likes sushi", user_id="bob") == having(user_id="bob")
    assert texts_found(seeded, "likes sushi", agent_id="tutor") == having(agent_id="tutor") - having(
        user_id="alice", agent_id="tutor")
