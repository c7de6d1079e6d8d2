"""English households said as a list after "with" (core/entity_homes_en.py): everyone named lives with the subject
and where the sentence says. Sentences written for these tests, not taken from a set."""

from __future__ import annotations

from jiyi.stores.entities import USER
from tests.core.test_entities import relations, run


def together(graph_relations: set[tuple[str, str, str]], one: str, other: str) -> bool:
    return (one, "lives_with", other) in graph_relations or (other, "lives_with", one) in graph_relations


def test_a_list_of_people_the_user_lives_with() -> None:
    graph, _ = run("I live with my dad, his girlfriend Nora and my little sister Bea")
    found = relations(graph)
    assert together(found, USER, "dad") and together(found, USER, "Nora") and together(found, USER, "Bea")


def test_a_place_and_a_partner_after_and() -> None:
    graph, _ = run("I'm a retired nurse and live in Hobart with my husband, Ian")
    found = relations(graph)
    assert {(USER, "lives_in", "Hobart"), ("Ian", "lives_in", "Hobart")} <= found and together(found, USER, "Ian")


def test_someone_else_lives_somewhere_with_a_spouse() -> None:
    graph, _ = run("My son Leo lives in Perth with his wife, Aiko")
    found = relations(graph)
    assert {("Leo", "lives_in", "Perth"), ("Aiko", "lives_in", "Perth")} <= found
    assert not together(found, "Leo", "Aiko")  # husband and wife already say they share a home


def test_a_group_that_is_not_one_person_is_passed_over() -> None:
    graph, _ = run("My friend Noor lives with us and my parents in Bradford")
    found = relations(graph)
    assert {("Noor", "lives_in", "Bradford"), (USER, "lives_in", "Bradford")} <= found and together(found, USER, "Noor")
    assert not any("parents" in (source, target) for source, _, target in found)


def test_a_stay_is_not_a_home() -> None:
    graph, _ = run("I'm staying with Hugo in Nice this week")
    assert not together(relations(graph), USER, "Hugo")
