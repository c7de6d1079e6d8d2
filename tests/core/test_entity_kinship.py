"""Kinship composed from relations the graph holds (core/entity_kinship.py, stated by core/entities.py): a
grandchild through the user's child, the one grandchild's parent when the user has one child, a spouse's child as
the user's stepchild — and nothing when the graph leaves two answers. Sentences written for these tests."""

from __future__ import annotations

from datetime import UTC, datetime

from jiyi.core.entity_kinship import composed_kinship
from jiyi.stores.entities import USER, GraphRelation
from tests.core.test_entities import relations, run


def test_the_grandchild_of_the_only_child_is_that_childs() -> None:
    graph, _ = run("My daughter Rosa lives in Leeds.", "My grandson Milo turned five today.")
    assert ("Milo", "son_of", "Rosa") in relations(graph)


def test_chinese_the_grandchild_of_the_only_child() -> None:
    graph, _ = run("我儿子叫陈峰 在上海上班", "孙女叫豆豆 今年三岁")
    assert ("豆豆", "daughter_of", "陈峰") in relations(graph)


def test_two_children_leave_the_grandchilds_parent_unknown() -> None:
    graph, _ = run("My daughter Rosa lives in Leeds.", "My son Tom lives in York.", "My grandson Milo turned five.")
    assert not any(r[1] in ("son_of", "daughter_of", "child_of") and r[0] == "Milo" for r in relations(graph))


def test_two_grandchildren_may_be_cousins() -> None:
    graph, _ = run("My daughter Rosa lives in Leeds.", "My grandson Milo turned five.",
                   "My granddaughter Ivy started school.")
    assert ("Milo", "son_of", "Rosa") in relations(graph)  # said while he was the only one
    assert ("Ivy", "daughter_of", "Rosa") not in relations(graph)


def test_the_child_of_my_child_is_my_grandchild() -> None:
    graph, _ = run("My son Tom lives in York.", "Tom's daughter Ella is learning the violin.")
    assert ("Ella", "daughter_of", "Tom") in relations(graph)
    assert ("Ella", "granddaughter_of", USER) in relations(graph)


def test_the_child_of_a_friend_is_no_grandchild() -> None:
    graph, _ = run("My friend Tom lives in York.", "Tom's daughter Ella is learning the violin.")
    assert not any(r[1].startswith("grand") for r in relations(graph))


def test_my_husbands_daughter_is_my_stepdaughter() -> None:
    graph, _ = run("My husband Carlos is a chef.", "Carlos's daughter Lucia visits on weekends.")
    assert ("Lucia", "stepdaughter_of", USER) in relations(graph)


def test_our_daughter_is_no_stepdaughter() -> None:
    graph, _ = run("My husband Carlos is a chef.", "My daughter Lucia is ten.", "Carlos's daughter Lucia is ten.")
    assert ("Lucia", "daughter_of", USER) in relations(graph)
    assert ("Lucia", "stepdaughter_of", USER) not in relations(graph)


def test_an_ex_husbands_son_is_no_stepson() -> None:
    graph, _ = run("My ex-husband Mark lives in Bristol.", "Mark's son Leo is at college.")
    assert ("Leo", "stepson_of", USER) not in relations(graph)


def test_in_laws_are_not_composed() -> None:
    when = datetime(2026, 1, 1, tzinfo=UTC)
    held = [GraphRelation("zhiqiang", "husband_of", USER, valid_at=when),
            GraphRelation("popo", "mother_in_law_of", USER, valid_at=when)]
    assert composed_kinship(held, lambda _: None) == []


def test_a_closed_relation_composes_nothing() -> None:
    when = datetime(2026, 1, 1, tzinfo=UTC)
    held = [GraphRelation("tom", "son_of", USER, valid_at=when),
            GraphRelation("ella", "daughter_of", "tom", valid_at=when, invalid_at=when)]
    assert composed_kinship(held, lambda _: "f") == []
    held[1].invalid_at = None
    assert composed_kinship(held, lambda _: "f") == [("ella", "granddaughter_of", USER)]


def test_my_relative_known_only_by_the_term_is_someone() -> None:
    graph, _ = run("My sister moved to Porto last week.")
    assert {("sister", "sister_of", USER), ("sister", "lives_in", "Porto")} <= relations(graph)


def test_my_relative_known_by_the_term_takes_the_name_said_later() -> None:
    graph, _ = run("My sister moved to Porto last week.", "My sister Ines is a chemist.")
    assert {("Ines", "sister_of", USER), ("Ines", "lives_in", "Porto")} <= relations(graph)
    assert [e.name for e in graph.entities.values() if e.kind == "person"] == ["Ines"]


def test_chinese_my_relative_known_by_the_term_then_named() -> None:
    graph, _ = run("我哥去东莞了 屋里就剩我", "我哥王磊打电话说厂里包吃住")
    assert {("王磊", "brother_of", USER), ("王磊", "lives_in", "东莞")} <= relations(graph)


def test_with_two_sisters_known_my_sister_is_neither_nor_a_third() -> None:
    graph, _ = run("Ines is my sister.", "Ana is my sister too.", "My sister moved to Porto last week.")
    assert not any(r[1] == "lives_in" for r in relations(graph))
    assert sorted(e.name for e in graph.entities.values() if e.kind == "person") == ["Ana", "Ines"]


def test_a_friend_known_only_by_the_word_is_not_made_someone() -> None:
    graph, _ = run("My friend moved to Vienna.", "Her brother moved to Graz.")
    assert relations(graph) == set()  # "my friend" is any of them; whose brother "her" means, nobody said


def test_a_named_persons_relative_known_only_so_is_someone() -> None:
    graph, _ = run("My friend Priya is visiting.", "Priya's brother moved to Leeds last month.")
    assert {("Priya's brother", "brother_of", "Priya"), ("Priya's brother", "lives_in", "Leeds")} <= relations(graph)


def test_a_named_persons_relative_takes_the_name_said_later() -> None:
    graph, _ = run("My friend Priya is visiting.", "Priya's brother moved to Leeds last month.",
                   "Priya's brother Raj is a doctor.")
    assert {("Raj", "brother_of", "Priya"), ("Raj", "lives_in", "Leeds")} <= relations(graph)
    assert "Priya's brother" in next(e for e in graph.entities.values() if e.name == "Raj").aliases


def test_chinese_a_named_persons_relative_then_named() -> None:
    graph, _ = run("邻居老周人很好", "老周的女儿在杭州上班", "老周的女儿叫婷婷")
    assert {("婷婷", "daughter_of", "老周"), ("婷婷", "lives_in", "杭州")} <= relations(graph)
    assert sum(1 for e in graph.entities.values() if e.kind == "person") == 2


def test_a_named_persons_relative_among_two_known_is_neither_nor_a_third() -> None:
    graph, _ = run("老周有个女儿婷婷", "老周有个女儿小雨", "老周的女儿在杭州上班")
    assert ("婷婷", "daughter_of", "老周") in relations(graph) and ("小雨", "daughter_of", "老周") in relations(graph)
    assert not any(r[1] == "lives_in" for r in relations(graph))
    assert sorted(e.name for e in graph.entities.values() if e.kind == "person") == ["婷婷", "小雨", "老周"]


def test_a_relative_of_a_pronoun_two_could_mean_is_nobody() -> None:
    graph, _ = run("My friend Priya is visiting.", "My neighbour Anna came too.", "Her brother moved to Leeds.")
    assert not any(r[1] == "lives_in" for r in relations(graph))
    assert sorted(e.name for e in graph.entities.values() if e.kind == "person") == ["Anna", "Priya"]


def test_the_unnamed_mother_of_my_one_grandson_is_my_one_daughter_named_later() -> None:
    graph, _ = run("My grandson Leo started school. His mum works at Tesco.", "My daughter Amy is a nurse.")
    assert {("Amy", "mother_of", "Leo"), ("Amy", "works_at", "Tesco"), ("Amy", "daughter_of", USER)} <= relations(graph)
    assert sorted(e.name for e in graph.entities.values() if e.kind == "person") == ["Amy", "Leo"]


def test_chinese_the_unnamed_mother_of_my_one_grandson_is_my_one_daughter() -> None:
    graph, _ = run("我外孙乐乐上小学了 他妈在杭州上班", "闺女叫王芳 在杭州做会计")
    assert {("王芳", "mother_of", "乐乐"), ("王芳", "lives_in", "杭州")} <= relations(graph)
    assert "乐乐的妈妈" in next(e for e in graph.entities.values() if e.name == "王芳").aliases


def test_the_unnamed_mother_of_my_grandson_is_not_my_son() -> None:
    graph, _ = run("My grandson Leo started school. His mum works at Tesco.", "My son Ben is a pilot.")
    assert ("Leo's mum", "mother_of", "Leo") in relations(graph)
    assert not any(r[0] == "Ben" and r[1] in ("mother_of", "father_of", "works_at") for r in relations(graph))


def test_the_unnamed_mother_of_a_grandson_with_two_children_known_is_neither() -> None:
    graph, _ = run("My daughter Amy is a nurse.", "My daughter Kate is a pilot.",
                   "My grandson Leo started school. His mum works at Tesco.")
    assert not any(r[0] in ("Amy", "Kate") and r[1] in ("mother_of", "works_at") for r in relations(graph))


def test_my_brothers_wife_is_my_sister_in_law() -> None:
    graph, _ = run("My older brother Imran lives in Leeds.", "His wife Sana is a teacher.")
    assert ("Sana", "wife_of", "Imran") in relations(graph)
    assert ("Sana", "sister_in_law_of", USER) in relations(graph)


def test_a_friends_wife_is_no_in_law() -> None:
    graph, _ = run("My friend Imran lives in Leeds.", "His wife Sana is a teacher.")
    assert ("Sana", "wife_of", "Imran") in relations(graph)
    assert not any(r[1].endswith("_in_law_of") for r in relations(graph))


def test_my_sisters_son_is_my_nephew() -> None:
    graph, _ = run("My sister Nadia lives in Cairo.", "Nadia's son Omar started school.")
    assert ("Omar", "nephew_of", USER) in relations(graph)


def test_composed_kinship_with_a_gender_unknown_says_nothing() -> None:
    when = datetime(2026, 1, 1, tzinfo=UTC)
    held = [GraphRelation("nadia", "sister_of", USER, valid_at=when),
            GraphRelation("kid", "child_of", "nadia", valid_at=when)]
    assert composed_kinship(held, lambda _: None) == []  # niece or nephew: nothing said which


def test_chinese_my_relatives_acquaintance_is_not_my_relative() -> None:
    graph, _ = run("我姐的同学在华为上班", "我妈的同事在深圳上班")
    assert not any(r[1] in ("works_at", "lives_in") for r in relations(graph))


def test_a_pronouns_unnamed_relative_takes_the_name_said_later() -> None:
    graph, _ = run("我同事小刘人很好", "他妈在昆明上班", "他妈叫王丽")
    assert {("王丽", "mother_of", "小刘"), ("王丽", "lives_in", "昆明")} <= relations(graph)
    assert sorted(e.name for e in graph.entities.values() if e.kind == "person") == ["小刘", "王丽"]


def test_english_a_pronouns_unnamed_relative_takes_the_name_said_later() -> None:
    graph, _ = run("My friend Kemal is great.", "His brother moved to Izmir.", "His brother Emre is a pilot.")
    assert {("Emre", "brother_of", "Kemal"), ("Emre", "lives_in", "Izmir")} <= relations(graph)
    assert "Kemal's brother" in next(e for e in graph.entities.values() if e.name == "Emre").aliases


def test_a_pronoun_two_earlier_people_fit_states_nothing() -> None:
    graph, _ = run("我对象阿哲在医院上班", "我leader老钱今天又甩锅", "他姐陈蕾下个月结婚")
    assert not any(r[1] == "sister_of" for r in relations(graph))


def test_a_pronoun_only_one_earlier_person_fits_is_that_one() -> None:
    graph, _ = run("My friend Tom called.", "His sister Jo is a nurse.")
    assert ("Jo", "sister_of", "Tom") in relations(graph)


def test_a_pronoun_after_a_name_in_the_same_message_is_that_name() -> None:
    graph, _ = run("My pal Graeme is fine.", "My pal Davie plays bowls.",
                   "Davie has been poorly. His wife Agnes says it's his heart.")
    assert ("Agnes", "wife_of", "Davie") in relations(graph)
