"""The write path keeps the user's entity graph (entity_path.py), on every store: turns name people and pets, the
graph points at the memories they came from, a deleted memory takes what only it supported, one user's graph is
theirs alone, and a failing graph update never fails the turn."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from typing import Any

import pytest

from jiyi import AsyncMemory, Memory, build_store
from jiyi.embedders.base import Embedder
from jiyi.entity_path import extract_change
from jiyi.stores.base import MemoryStore
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


def test_two_adds_at_once_naming_the_same_new_person_make_one_entity(store: MemoryStore, embedder: Embedder,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Two AsyncMemory instances on one store, each with its own connection (two server workers), keep a message
    each (infer=False) at the same moment, both naming Tom for the first time. The race is between reading the
    graph and saving what the message changes in it, so each add's reading is held until the other's has begun too
    (or a second has passed: the other add is then waiting for the graph, which is the point). Without the store
    keeping one user's graph updates apart, both read a graph without Tom and each makes its own (checked: two
    Toms and two friend_of relations with update_graph reading outside the lock)."""
    both_reading = threading.Barrier(2)

    def held(*args: Any, **kwargs: Any) -> Any:
        # broken: the other add is waiting for this one's update, so there is no race to set up
        with contextlib.suppress(threading.BrokenBarrierError):
            both_reading.wait(timeout=1)
        return extract_change(*args, **kwargs)

    monkeypatch.setattr("jiyi.entity_path.extract_change", held)
    other = build_store(store.url)  # type: ignore[attr-defined]
    workers = [AsyncMemory(store, embedder), AsyncMemory(other, embedder)]
    said = ["Went climbing with my friend Tom today", "my friend Tom says the new gym is great"]
    errors: list[BaseException] = []

    def add(memory: AsyncMemory, text: str) -> None:
        try:
            asyncio.run(memory.add(text, user_id="ana", infer=False))
        except BaseException as exc:  # reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=add, args=pair) for pair in zip(workers, said, strict=True)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert not errors and not any(thread.is_alive() for thread in threads)
    assert isinstance(store, EntityStore)
    graph = store.graph("ana")
    assert [e.name for e in graph.entities.values()] == ["Tom"]
    [tom] = graph.entities
    assert [(r.source, r.relation, r.target) for r in graph.relations] == [(tom, "friend_of", USER)]
    # both messages are Tom's memories: the second add found the entity the first made
    assert len(store.entity_memories("ana", [tom], 10)) == 2
    other.close()


def test_the_named_speakers_of_a_conversation_are_people_of_it(memory: Memory) -> None:
    """LoCoMo's "Caroline: …" lines, a group chat's names: each speaker is a person of the graph, the name opening a
    message is not read as part of what was said (nor as a mention: not every memory of hers is about Caroline), a
    speaker spoken to is not mentioned either ("Thanks, Melanie!" says nothing about Melanie), and a lone
    "label: text" note names no one."""
    memory.add([{"role": "user", "content": "Caroline: Thanks, Melanie! Went to a support group with Jolene."},
                {"role": "assistant", "content": "Melanie: That's great, Caroline! I took the kids to the lake."}],
               user_id="caroline", infer=False)
    memory.add([{"role": "user", "content": "Caroline: Hey Mel! Jolene says hi."}], user_id="caroline", infer=False)
    names, _ = graph_of(memory, "caroline")
    assert set(names.values()) == {USER, "Caroline", "Melanie", "Mel", "Jolene"}
    store = memory.store
    assert isinstance(store, EntityStore)
    caroline, melanie, mel, jolene = (next(e for e, n in names.items() if n == name)
                                      for name in ("Caroline", "Melanie", "Mel", "Jolene"))
    assert store.entity_memories("caroline", [caroline, melanie], 10) == []
    assert [memory.get(i)["memory"] for i in store.entity_memories("caroline", [mel], 10)] == [
        "Caroline: Hey Mel! Jolene says hi."]  # a name the speakers do not go by is a person like any other
    assert len(store.entity_memories("caroline", [jolene], 10)) == 2
    memory.add("Dinner: pasta with pesto", user_id="bob", infer=False)
    memory.add("Dinner: tacos", user_id="bob", infer=False)
    assert graph_of(memory, "bob") == ({USER: USER}, set())


def test_a_turn_of_one_speakers_messages_still_knows_the_other_speaker(memory: Memory) -> None:
    """With extraction (infer=True), as with messages kept as said: a turn holding only Caroline's lines still has
    Melanie's before it, so "Take care, Melanie." speaks to a speaker and mentions no one (a mention would bring
    Melanie's greetings to every search that names her, through the graph path)."""
    memory.add([{"role": "user", "content": "Caroline: Thanks, Melanie! Went to a support group with Jolene."},
                {"role": "assistant", "content": "Melanie: That's great, Caroline! I took the kids to the lake."}],
               user_id="caroline")
    memory.add([{"role": "user", "content": "Caroline: I'm off to bed now."},
                {"role": "user", "content": "Caroline: Take care, Melanie. Talk to you soon!"}], user_id="caroline")
    memory.settle()  # the turns' messages kept as evidence: the graph cites those records too
    names, _ = graph_of(memory, "caroline")
    store = memory.store
    assert isinstance(store, EntityStore)
    melanie = next(e for e, n in names.items() if n == "Melanie")
    assert store.entity_memories("caroline", [melanie], 10) == []
