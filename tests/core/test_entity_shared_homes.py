"""A shared home (core/entities.py infer_shared_homes, the lives_with rules of both languages): those who live together
live in the same place when the message that says they share a home leaves one of them without a place, and a move
said after a shared home moves nobody else. Sentences written for these tests, not taken from a set."""

from __future__ import annotations

from jiyi.stores.entities import USER
from tests.core.test_entities import relations, run


def test_moving_in_with_someone_puts_you_where_they_live() -> None:
    graph, _ = run("My friend Tomas lives in Leeds", "I moved in with Tomas last week")
    assert {(USER, "lives_with", "Tomas"), (USER, "lives_in", "Leeds")} <= relations(graph)


def test_living_with_someone_is_a_shared_home_in_english() -> None:
    graph, _ = run("My cousin Ines lives with us now")
    assert ("Ines", "lives_with", USER) in relations(graph) or (USER, "lives_with", "Ines") in relations(graph)


def test_together_in_one_place_in_chinese() -> None:
    graph, _ = run("我男朋友叫大伟 我们一起住在海淀区")
    assert {("大伟", "boyfriend_of", USER), (USER, "lives_in", "海淀区"), ("大伟", "lives_in", "海淀区")} \
        <= relations(graph)
    assert ("大伟", "lives_with", USER) in relations(graph) or (USER, "lives_with", "大伟") in relations(graph)


def test_a_relative_who_lives_with_another() -> None:
    graph, _ = run("我弟弟叫小涛 住在合肥", "我妈身体还行 跟我弟弟住")
    assert ("妈", "lives_in", "合肥") in relations(graph)


def test_a_move_after_a_shared_home_moves_nobody_else() -> None:
    graph, _ = run("I live with Marta", "Moved to Porto yesterday, on my own")
    assert ("Marta", "lives_in", "Porto") not in relations(graph)


def test_a_plan_to_live_together_or_a_hospital_stay_is_not_a_shared_home() -> None:
    graph, _ = run("我女朋友叫晓晓", "等她来了一起住", "我妈跟我爸住院了")
    assert not any(r[1] == "lives_with" for r in relations(graph))
