"""Roles at organisations in chat written in lowercase (core/entity_rules_en: "im" is "i'm", and the organisation may
be lowercase too when the whole message is). Sentences written for these tests, not taken from a set."""

from __future__ import annotations

from jiyi.stores.entities import USER
from tests.core.test_entities import relations, run


def test_im_a_role_at_a_lowercase_organisation() -> None:
    graph, _ = run("ugh im a barista at blue bottle, the hours are brutal")
    assert (USER, "works_at", "blue bottle") in relations(graph)


def test_im_a_student_at_a_lowercase_university() -> None:
    graph, _ = run("so im a junior at penn state")
    assert (USER, "studies_at", "penn state") in relations(graph)


def test_a_capitalised_message_keeps_its_organisations_capitalised() -> None:
    graph, _ = run("I'm a regular at the gym. I'm a nurse at work most days.")
    assert not any(r[1] == "works_at" for r in relations(graph))


# --- names a lowercase writer leaves lowercase, at a verb of living or a job's cue (core/entity_lowercase_en) ---

def test_a_lowercase_town_after_moved_to_is_a_home() -> None:
    graph, _ = run("moved to fresno w marco, boxes everywhere")
    found = relations(graph)
    assert (USER, "lives_in", "Fresno") in found
    assert (USER, "lives_with", "Marco") in found
    assert ("Marco", "lives_in", "Fresno") in found


def test_a_lowercase_employer_after_first_day_at_is_a_workplace() -> None:
    graph, _ = run("first day at lidl tomorrow, kinda nervous")
    assert (USER, "works_at", "Lidl") in relations(graph)


def test_a_name_of_two_words_ends_in_a_head_noun() -> None:
    graph, _ = run("i live in oak park now, its quiet")
    assert (USER, "lives_in", "Oak Park") in relations(graph)


def test_general_places_and_workplaces_stay_common_nouns() -> None:
    graph, _ = run("moved to campus last week. first day at work was fine. living in town w friends")
    assert not any(r[1] in ("lives_in", "works_at", "lives_with") for r in relations(graph))


def test_a_word_after_the_name_that_is_no_head_noun_is_not_part_of_it() -> None:
    graph, _ = run("first week at fairview done, so tired")
    assert not any(r[1] == "works_at" for r in relations(graph))


def test_a_capitalised_message_is_not_recased() -> None:
    graph, _ = run("I moved to campus with friends. First day at work tomorrow.")
    assert not any(r[1] in ("lives_in", "works_at", "lives_with") for r in relations(graph))
