"""The grammar of introductions and of what ends (core/entity_rules_en.py, entity_rules_zh.py through
core/entities.py): a name beside a kinship or role term either way round, terms owned through a chain ("my sister's
husband", "我姐的老公"), work, home and what closes them. Sentences written for these tests, not taken from a set."""

from __future__ import annotations

from jiyi.stores.entities import USER
from tests.core.test_entities import relations, run


def test_a_name_and_its_term_either_way_round() -> None:
    for said in ("my sister Priya is visiting", "Priya, my sister, is visiting", "Priya (my sister) is visiting",
                 "Priya is my sister", "My sister's name is Priya", "I have a sister named Priya"):
        graph, _ = run(said)
        assert relations(graph) == {("Priya", "sister_of", USER)}, said


def test_a_place_or_a_time_before_the_comma_is_not_the_person() -> None:
    graph, _ = run("In Boston, my sister found a flat")
    assert relations(graph) == set()


def test_pets_named_when_they_are_adopted() -> None:
    graph, _ = run("We adopted a kitten called Miso last week", "our dog is called Rex")
    assert relations(graph) == {("Miso", "pet_of", USER), ("Rex", "pet_of", USER)}


def test_terms_owned_by_someone_else_a_pronoun_or_a_chain() -> None:
    graph, _ = run("my older sister Priya moved back", "Priya's husband Dev is a chef",
                   "her daughter Anika turned five", "my sister's son Kabir loves trains",
                   "Ravi is my mom's brother")
    assert {("Priya", "sister_of", USER), ("Dev", "husband_of", "Priya"), ("Anika", "daughter_of", "Priya"),
            ("Kabir", "son_of", "Priya"), ("mom", "mother_of", USER), ("Ravi", "brother_of", "mom")} \
        <= relations(graph)


def test_a_term_said_alone_after_the_name_is_the_same_person() -> None:
    graph, _ = run("My wife Lena is an architect", "I miss my wife.")
    assert relations(graph) == {("Lena", "wife_of", USER)}
    assert [e.name for e in graph.entities.values()] == ["Lena"]


def test_a_name_after_a_comma_that_starts_a_clause_is_not_apposed() -> None:
    graph, _ = run("My sister Mia waved at her best friend, Leo kept walking.")
    assert relations(graph) == {("Mia", "sister_of", USER)}
