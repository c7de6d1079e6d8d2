"""Names after a title (core/entity_titles_en.py): a person by the form, named by the bare name with the titled form
an alias. Sentences written for these tests, not taken from a set."""

from __future__ import annotations

from jiyi.stores.entities import USER, Graph
from tests.core.test_entities import relations, run


def forms(graph: Graph) -> dict[str, set[str]]:
    return {e.name: {f.casefold() for f in e.surface_forms()} for e in graph.entities.values()}


def test_an_honorific_names_a_person_found_again_by_either_form() -> None:
    graph, mentions = run("I take care of Mrs. Abernathy now, she's 89", "Abernathy was calm today")
    assert forms(graph)["Abernathy"] >= {"abernathy", "mrs. abernathy"}
    assert graph.entities[next(iter(graph.entities))].kind == "person"
    assert ("Abernathy", "m1") in mentions[1]


def test_a_two_word_name_is_also_the_title_and_surname() -> None:
    graph, _ = run("Mrs. Linh Nguyen in Mississauga hired me")
    assert forms(graph)["Linh Nguyen"] >= {"mrs. linh nguyen", "mrs. nguyen"}


def test_family_titles_and_lowercase_trades() -> None:
    graph, _ = run("Ate Lorna got me the interview. chef Tony yelled again. Khala Rubina cried at the party")
    assert {"Lorna", "Tony", "Rubina"} <= set(forms(graph))
    assert "ate lorna" in forms(graph)["Lorna"] and "chef tony" in forms(graph)["Tony"]


def test_the_relation_rules_read_the_name_without_its_title() -> None:
    graph, _ = run("my principal, Dr. Alvarez, wants me to run the science fair")
    assert ("Alvarez", "boss_of", USER) in relations(graph)
    assert "dr. alvarez" in forms(graph)["Alvarez"]


def test_what_is_no_titled_name() -> None:
    graph, _ = run("Mrs. went home early. we ate Chipotle after. Mrs. A called. I saw Coach Monday")
    assert not graph.entities


def test_a_kin_title_someone_owns_is_left_to_the_kinship_rules() -> None:
    graph, _ = run("my uncle Raj is visiting")
    assert ("Raj", "uncle_of", USER) in relations(graph)
