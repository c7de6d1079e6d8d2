"""Who a Chinese clause is about and what kind of place it names (core/entity_rules_zh.py, places_zh.py): the subject
a clause starts with, a thing as subject, places the dictionary tags as names, wishes that are not facts, and the
familiar forms of a full name. Sentences written for these tests, not taken from a set."""

from __future__ import annotations

from jiyi.core.entity_names_zh import familiar_forms
from jiyi.core.places_zh import is_place
from jiyi.stores.entities import USER
from tests.core.test_entities import relations, run


def test_my_relative_at_the_start_of_a_clause_is_its_subject() -> None:
    graph, _ = run("我爸上个月来我这儿住了几天", "我爸身体不好 回洛阳了")
    assert ("爸", "lives_in", "洛阳") in relations(graph)
    assert all(r[0] != USER for r in relations(graph) if r[1] == "lives_in")


def test_a_thing_as_subject_says_nothing_about_the_user() -> None:
    graph, _ = run("我的小店搬到朝阳区了 生意还行")
    assert (USER, "lives_in", "朝阳区") not in relations(graph)


def test_a_name_with_a_little_prefix_starts_a_clause() -> None:
    graph, _ = run("我室友阿Kim人很好", "阿Kim走了 去东京了")
    assert ("阿Kim", "lives_in", "东京") in relations(graph)
    assert (USER, "lives_in", "东京") not in relations(graph)


def test_places_the_dictionary_calls_names_are_places() -> None:
    assert is_place("温哥华") and is_place("槐荫区") and is_place("深圳")
    assert not is_place("小区") and not is_place("超市") and not is_place("腾讯")
    graph, _ = run("我弟弟小峰在西雅图做程序员")
    assert ("小峰", "lives_in", "西雅图") in relations(graph)
    assert not any(r[1] == "works_at" for r in relations(graph))


def test_only_an_admission_is_admitted_to() -> None:
    graph, _ = run("今天被投诉了 好烦", "我被复旦录取了")
    assert relations(graph) == {(USER, "admitted_to", "复旦")}


def test_a_wish_or_a_plan_is_not_where_anyone_is() -> None:
    graph, _ = run("我老公想让我去青岛上班", "我们打算搬到苏州")
    assert not any(r[1] in ("lives_in", "works_at") for r in relations(graph))


def test_what_follows_with_my_relative_to_the_end_is_what_they_do() -> None:
    graph, _ = run("现在跟我姐合住")
    assert not any(e.name == "合住" for e in graph.entities.values())


def test_a_full_name_is_known_by_its_familiar_forms() -> None:
    assert familiar_forms("王秀兰") == ["秀兰"] and familiar_forms("陈静") == ["静儿"]
    assert familiar_forms("小雅") == [] and familiar_forms("Emily") == []
    graph, _ = run("女儿叫刘敏 在成都", "邻居张建国人不错", "敏儿说她丈夫小何升职了")
    assert ("小何", "husband_of", "刘敏") in relations(graph)
