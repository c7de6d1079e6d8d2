"""Chinese nicknames written with a Latin name (core/entity_names_zh.py): 阿May, 老K are people by their form.
Sentences written for these tests, not taken from a set."""

from __future__ import annotations

from tests.core.test_entities import run


def test_a_latin_nickname_is_a_person_wherever_it_stands() -> None:
    graph, _ = run("我跟housemate阿Mei住在一起", "今天又被leader老K骂了")
    people = {e.name for e in graph.entities.values() if e.kind == "person"}
    assert {"阿Mei", "老K"} <= people


def test_latin_letters_inside_a_word_are_no_nickname() -> None:
    graph, _ = run("我买了小KTV的票", "阿k说的话")
    assert not any(e.name in ("小KTV", "小K", "阿k") for e in graph.entities.values())
