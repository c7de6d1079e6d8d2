"""What the English rules must not state (core/entity_rules_en.py, core/entities.py): a verb or a contraction read as
a name, a title read as the name, a sentence ended at an abbreviation, a branch's city read as the employer, and a
pronoun given to the one whose gender nothing says over the one known to fit. Sentences written for these tests, not
taken from a set."""

from __future__ import annotations

from jiyi.stores.entities import USER
from tests.core.test_entities import relations, run


def test_kid_before_a_sibling_is_an_adjective() -> None:
    graph, _ = run("my kid sis Ada is at nursing school")
    assert ("Ada", "sister_of", USER) in relations(graph)
    assert not any(r[1] == "child_of" for r in relations(graph))


def test_a_lowercase_verb_after_a_term_is_no_name() -> None:
    graph, _ = run("our kid started college last week, i gave him tips")
    assert not any(e.name == "started" for e in graph.entities.values())


def test_a_contraction_without_its_apostrophe_is_no_name() -> None:
    graph, _ = run("grandson Rory moved back in with his mum hes her youngest")
    assert not any(e.name == "hes" for e in graph.entities.values())


def test_a_title_takes_the_names_after_it() -> None:
    graph, _ = run("I am a doctoral student; my advisor is Professor Maria Lopez.")
    [advisor] = [r.source for r in graph.relations if r.relation == "advisor_of"]
    assert "professor maria lopez" in {f.casefold() for f in graph.entities[advisor].surface_forms()}


def test_no_sentence_ends_at_an_abbreviation() -> None:
    graph, _ = run("I've been seeing a guy named Luc, he's from St. Albert and teaches French")
    assert ("Luc", "from", "St. Albert") in relations(graph)


def test_a_city_before_office_is_not_the_employer() -> None:
    graph, _ = run("my wife Tara started at the Toronto office this week")
    assert not any(r[1] == "works_at" for r in relations(graph))


def test_someone_named_here_is_whom_the_pronoun_means() -> None:
    graph, _ = run("my flatmate Jo works at Acme", "met her on a call, her name is Nadia, she's an analyst at Globex")
    assert ("Nadia", "works_at", "Globex") in relations(graph)
    assert ("Jo", "works_at", "Globex") not in relations(graph)


def test_she_is_the_one_known_to_be_a_woman_before_one_nothing_says_of() -> None:
    graph, _ = run("My partner, Alex, works at a lab.", "Alex's mother, Rita, visits soon; she lives in Toledo.")
    assert ("Rita", "lives_in", "Toledo") in relations(graph)
    assert ("Alex", "lives_in", "Toledo") not in relations(graph)


def test_a_month_is_no_place() -> None:
    graph, _ = run("Pam's going to come up here in May instead")
    assert not any(r[1] == "lives_in" for r in relations(graph))


def test_a_capitalised_role_before_a_name_is_a_title() -> None:
    graph, _ = run("Coach Williams is retiring and they want me as the new head coach")
    assert not any(r[1] == "coach_of" for r in relations(graph))


def test_been_before_the_verb_still_says_where() -> None:
    graph, _ = run("I'm from Leeds originally but I've been living in Bristol for a while now.")
    assert (USER, "lives_in", "Bristol") in relations(graph)
