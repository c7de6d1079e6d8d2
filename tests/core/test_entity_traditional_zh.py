"""Traditional Chinese read by the simplified entity rules (core/traditional_zh.py), the names kept as written.
Sentences written for these tests, not taken from a set."""

from __future__ import annotations

from jiyi.core.traditional_zh import as_written, has_traditional, to_simplified
from jiyi.stores.entities import USER
from tests.core.test_entities import relations, run


def test_a_relative_said_in_traditional_characters() -> None:
    graph, _ = run("長子志強在美國工作，次女美玲在台北教書")
    assert {("志強", "son_of", USER), ("美玲", "daughter_of", USER)} <= relations(graph)


def test_names_and_terms_stay_as_written() -> None:
    graph, _ = run("我女兒叫曉雯")
    [xiaowen] = [e for e in graph.entities.values() if e.kind == "person"]
    assert xiaowen.name == "曉雯" and "女兒" in xiaowen.aliases


def test_a_relative_of_a_named_person_in_traditional_characters() -> None:
    graph, _ = run("我兒子叫志明", "志明的女兒Emily來電")
    assert ("Emily", "daughter_of", "志明") in relations(graph)


def test_simplified_text_is_left_alone() -> None:
    assert not has_traditional("我女儿叫晓雯，在杭州上班")
    assert to_simplified("我女儿叫晓雯") == "我女儿叫晓雯"


def test_one_character_for_one_and_back() -> None:
    written = "長子志明在美國加州"
    simplified = to_simplified(written)
    assert simplified == "长子志明在美国加州" and len(simplified) == len(written)
    assert as_written("美国", simplified, written) == "美國"
    assert as_written("我姐", simplified, written) == "我姐"  # not in the text: as the rules put it
