"""The write path keeps the user's entity graph (entity_path.py), on every store: turns name people and pets, the
graph points at the memories they came from, a deleted memory takes what only it supported, one user's graph is
theirs alone, and a failing graph update never fails the turn."""

from __future__ import annotations

import logging

import pytest

from jiyi import Memory
from jiyi.stores.entities import USER, EntityStore


def graph_of(memory: Memory, user: str) -> tuple[dict[str, str], set[tuple[str, str, str]]]:
    store = memory.store
    assert isinstance(store, EntityStore)
    graph = store.graph(user)
    names = graph.names()
    return names, {(names[r.source], r.relation, names[r.target]) for r in graph.relations if r.is_current}


def test_turns_build_the_users_graph_from_what_they_said(memory: Memory) -> None:
    memory.add("My older brother Arjun just started law school at UChicago", user_id="ana")
    memory.add("he bombed his first contracts exam", user_id="ana")
    memory.add("我家柯基豆豆今天把我新买的拖鞋啃了", user_id="ana")
    memory.settle()  # the messages kept as said are written after add() answers
    names, relations = graph_of(memory, "ana")
    assert {("Arjun", "brother_of", USER), ("Arjun", "studies_at", "UChicago"), ("豆豆", "pet_of", USER)} <= relations

    store = memory.store
    assert isinstance(store, EntityStore)
    arjun = next(e for e, n in names.items() if n == "Arjun")
    about_arjun = [memory.get(i)["memory"] for i in store.entity_memories("ana", [arjun], 10)]
    # the exam was said with "he" only: the graph still knows it is about Arjun
    assert "he bombed his first contracts exam" in about_arjun
    assert all("豆豆" not in text for text in about_arjun)
    assert graph_of(memory, "bob") == ({USER: USER}, set())


def test_deleting_the_memories_a_relation_came_from_removes_it(memory: Memory) -> None:
    memory.add("my cat Mochi knocked my coffee over", user_id="ana")
    memory.settle()
    assert ("Mochi", "pet_of", USER) in graph_of(memory, "ana")[1]
    for item in memory.get_all(user_id="ana")["results"]:
        memory.delete(item["id"])
    # the facts are gone, but the message kept as said still says it
    assert ("Mochi", "pet_of", USER) in graph_of(memory, "ana")[1]
    memory.delete_all(user_id="ana")
    assert graph_of(memory, "ana") == ({USER: USER}, set())


def test_a_failing_graph_update_is_logged_and_the_turn_lands(memory: Memory, monkeypatch: pytest.MonkeyPatch,
                                                             caplog: pytest.LogCaptureFixture) -> None:
    def broken(*args: object) -> int:
        raise RuntimeError("graph down")

    monkeypatch.setattr("jiyi.write_path.remember_entities", broken)
    with caplog.at_level(logging.ERROR, logger="jiyi.write_path"):
        out = memory.add("My wife Lena is an architect", user_id="ana")
        memory.settle()
    assert out["results"] and memory.get_all(user_id="ana")["results"]
    assert "entity graph was not updated" in caplog.text
    assert graph_of(memory, "ana") == ({USER: USER}, set())


def test_memories_kept_as_said_build_the_graph_too(memory: Memory) -> None:
    """infer=False (mem0's "store it as given", and how bulk imports and LoCoMo's mem0 ingestion add): each message is
    the memory, and who is who comes from it all the same; the relation cites that memory, so deleting it removes the
    relation."""
    kept = memory.add("My older brother Arjun just started law school at UChicago", user_id="ana", infer=False)
    memory.add("he bombed his first contracts exam", user_id="ana", infer=False)
    names, relations = graph_of(memory, "ana")
    assert {("Arjun", "brother_of", USER), ("Arjun", "studies_at", "UChicago")} <= relations
    store = memory.store
    assert isinstance(store, EntityStore)
    arjun = next(e for e, n in names.items() if n == "Arjun")
    about_arjun = {memory.get(i)["memory"] for i in store.entity_memories("ana", [arjun], 10)}
    assert "he bombed his first contracts exam" in about_arjun
    memory.delete(kept["results"][0]["id"])
    assert ("Arjun", "brother_of", USER) not in graph_of(memory, "ana")[1]
