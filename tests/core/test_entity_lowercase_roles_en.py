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
