"""Where an English organisation is, said after any phrase that names it (core/entity_rules_en._located), and a name
whose kind a passing mention guessed, corrected by a rule in the same message (core/entities.py). Sentences written
for these tests, not taken from a set."""

from __future__ import annotations

from jiyi.stores.entities import USER
from tests.core.test_entities import relations, run


def test_a_school_here_in_a_city() -> None:
    graph, _ = run("I teach history at Westfield Academy here in Leeds")
    assert {(USER, "works_at", "Westfield Academy"), ("Westfield Academy", "located_in", "Leeds")} <= relations(graph)


def test_a_street_on_the_way_to_the_place() -> None:
    graph, _ = run("My job at Harbour Books on Quay Street in Galway is going well")
    assert ("Harbour Books", "located_in", "Galway") in relations(graph)


def test_a_first_day_somewhere_in_a_city() -> None:
    graph, _ = run("First day at Lumen Labs in Lisbon today")
    assert {(USER, "works_at", "Lumen Labs"), ("Lumen Labs", "located_in", "Lisbon")} <= relations(graph)


def test_an_interview_makes_the_name_an_organisation_not_a_person() -> None:
    graph, _ = run("Had a call with Brightwave in Oslo this morning")
    [brightwave] = [e for e in graph.entities.values() if e.name == "Brightwave"]
    assert brightwave.kind == "organisation"
    assert ("Brightwave", "located_in", "Oslo") in relations(graph)


def test_a_person_named_in_an_earlier_message_keeps_her_kind() -> None:
    graph, _ = run("Dinner with Clara tonight", "Got an email from Clara about the flat")
    [clara] = [e for e in graph.entities.values() if e.name == "Clara"]
    assert clara.kind == "person"
