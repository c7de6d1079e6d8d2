"""Family words said as names (core/entity_family_words_en.py): "bhaiya called from Dubai" names the user's brother.
Sentences written for these tests, not taken from a set."""

from __future__ import annotations

from jiyi.stores.entities import USER
from tests.core.test_entities import relations, run


def test_a_family_word_names_the_users_relative_and_the_relation_rules_read_it() -> None:
    graph, _ = run("bhaiya called from Dubai last night")
    assert ("bhaiya", "brother_of", USER) in relations(graph)
    assert ("bhaiya", "lives_in", "Dubai") in relations(graph)


def test_two_family_words_side_by_side() -> None:
    graph, _ = run("mummy papa in Lucknow keep calling")
    assert {("mummy", "mother_of", USER), ("papa", "father_of", USER)} <= relations(graph)


def test_the_mammy_is_my_mammy() -> None:
    graph, _ = run("rang the mammy this evening")
    [mammy] = graph.entities.values()
    assert "the mammy" in mammy.surface_forms() and ("mammy", "mother_of", USER) in relations(graph)


def test_someone_elses_relative_or_a_title_is_no_relative_of_the_users() -> None:
    graph, _ = run("her didi is visiting. Lola Ruth slept all day. a papa bear toy")
    assert not any(target == USER for _, _, target in relations(graph))
    assert "Lola Ruth" in {f for e in graph.entities.values() for f in e.surface_forms()}
