"""What the Chinese rules must not state (core/entity_rules_zh.py): whose a role or a relative is when the text does
not say the user's, an organisation's place read as a home, places or descriptions read as organisations, and who a
clause that only describes someone is about. Sentences written for these tests, not taken from a set."""

from __future__ import annotations

from jiyi.stores.entities import USER
from tests.core.test_entities import relations, run


def test_someone_elses_husband_is_not_the_users() -> None:
    graph, _ = run("我闺蜜阿Lin要结婚了", "回成都当伴娘 阿Lin的老公大伟人超好")
    assert ("大伟", "husband_of", "阿Lin") in relations(graph)
    assert not any(r[2] == USER for r in relations(graph) if r[1] == "husband_of")


def test_my_child_with_someone_is_still_mine() -> None:
    graph, _ = run("我与前夫的儿子小峰在杭州读书")
    assert ("小峰", "son_of", USER) in relations(graph)


def test_a_teacher_said_without_whose_is_nobodys_teacher() -> None:
    graph, _ = run("儿子考了第一 班主任李老师打电话来讲")
    assert not any(r[1] == "teacher_of" for r in relations(graph))
    assert not any(e.name == "打电话" for e in graph.entities.values())


def test_the_place_after_an_organisation_is_where_it_is() -> None:
    graph, _ = run("面试了一家广告公司 叫蓝鲸传媒 在滨江区 老板人不错")
    assert ("蓝鲸传媒", "located_in", "滨江区") in relations(graph)
    assert (USER, "lives_in", "滨江区") not in relations(graph)
    graph, _ = run("准备开第三家店 在雁塔区")
    assert not any(r[1] == "lives_in" for r in relations(graph))


def test_the_place_after_a_home_is_where_the_home_is() -> None:
    graph, _ = run("我住的是单位分的房子 在道外区")
    assert (USER, "lives_in", "道外区") in relations(graph)


def test_places_all_the_way_are_no_school() -> None:
    graph, _ = run("女儿小雪在英国曼彻斯特读研究生")
    assert not any(r[1] in ("studies_at", "attends") for r in relations(graph))


def test_an_organisation_described_is_not_named() -> None:
    graph, _ = run("我哥在深圳一家电子公司上班")
    assert not any(r[1] == "works_at" for r in relations(graph))


def test_an_internship_somewhere_is_not_a_home() -> None:
    graph, _ = run("我儿子小杰暑假在上海实习")
    assert not any(r[1] == "lives_in" for r in relations(graph))


def test_old_and_a_surname_opens_a_clause_as_its_subject() -> None:
    graph, _ = run("老蔡被调去厦门双十中学当教练了")
    assert ("老蔡", "works_at", "双十中学") in relations(graph)
    assert (USER, "works_at", "双十中学") not in relations(graph)


def test_my_roommate_described_is_not_the_user_doing_anything() -> None:
    graph, _ = run("我室友小琪人很好", "小琪说她要结婚了 我大学室友 还在武汉")
    assert (USER, "lives_in", "武汉") not in relations(graph)
