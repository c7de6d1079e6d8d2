"""Chinese organisations named by 叫 beside the word for what they are (core/organisations_called_zh.py), by an
institution word with a name before it, and with a department after it. Sentences written for these tests, not taken
from a set."""

from __future__ import annotations

from jiyi.stores.entities import USER
from tests.core.test_entities import relations, run


def _organisations(*turns: str) -> set[str]:
    graph, _ = run(*turns)
    return {e.name for e in graph.entities.values() if e.kind == "organisation"}


def test_a_kind_word_then_its_name() -> None:
    assert "立德会计" in _organisations("她说那家事务所叫立德会计")


def test_a_name_then_the_kind_word_with_a_latin_name_of_two_words() -> None:
    assert "Bean House" in _organisations("我常去一间叫Bean House的咖啡馆画画")


def test_whose_company_it_is_says_who_works_there() -> None:
    graph, _ = run("阿伟那间公司叫远航物流，老板是他舅舅", "我们公司叫星河软件")
    assert {("阿伟", "works_at", "远航物流"), (USER, "works_at", "星河软件")} <= relations(graph)


def test_going_to_one_named_after_changing_jobs_is_working_there() -> None:
    graph, _ = run("我跳槽了，去了一间设计公司叫拾光设计")
    assert (USER, "works_at", "拾光设计") in relations(graph)


def test_going_to_one_named_without_a_job_said_is_a_visit() -> None:
    graph, _ = run("周末去了一家餐厅叫老街坊，味道不错")
    assert "老街坊" in {e.name for e in graph.entities.values()}
    assert not any(r[1] == "works_at" for r in relations(graph))


def test_the_name_in_a_later_clause_of_one_described() -> None:
    graph, _ = run("我妈搬进杭州的一家养老院，离我家不远，叫松鹤园")
    assert ("松鹤园", "located_in", "杭州") in relations(graph)


def test_a_name_alone_that_ends_in_an_institution_word() -> None:
    assert "小太阳托育" in _organisations("孩子送托了 叫小太阳托育")


def test_called_with_a_person_after_it_asks_and_names_nothing() -> None:
    assert _organisations("县医院叫我去培训三个月", "公司叫大家周末加班") == set()


def test_called_with_what_is_not_a_name() -> None:
    assert _organisations("那家店叫什么我忘了") == set()


def test_a_bare_institution_word_is_no_workplace() -> None:
    graph, _ = run("我在医院上班", "她在大学教书")
    assert not any(r[1] == "works_at" for r in relations(graph))


def test_a_courier_named_by_its_brand() -> None:
    graph, _ = run("我表哥叫阿明 他在申通快递上班")
    assert ("阿明", "works_at", "申通快递") in relations(graph)


def test_a_department_after_the_hospital_is_the_hospital() -> None:
    graph, _ = run("我在协和医院心内科上班")
    assert (USER, "works_at", "协和医院") in relations(graph)


def test_an_abbreviated_name_is_a_workplace() -> None:
    graph, _ = run("我老公叫阿文 他在亚航做机师")
    assert ("阿文", "works_at", "亚航") in relations(graph)


def test_a_university_by_its_short_name_where_someone_studies() -> None:
    graph, _ = run("我表弟叫小杰 在武大读大三")
    assert ("小杰", "studies_at", "武大") in relations(graph)


def test_a_short_name_ending_in_da_with_no_study_is_nothing() -> None:
    graph, _ = run("我表弟叫小杰 在武大门口卖水果")
    assert not any(r[2] == "武大" for r in relations(graph))


def test_the_university_named_in_the_clause_after_studying_there() -> None:
    graph, _ = run("我女儿叫晓雯 在厦门上大学 厦门大学", "我儿子叫小航 在伦敦读研究生，读的是帝国理工学院")
    assert {("晓雯", "studies_at", "厦门大学"), ("厦门大学", "located_in", "厦门"),
            ("小航", "studies_at", "帝国理工学院"), ("帝国理工学院", "located_in", "伦敦")} <= relations(graph)


def test_a_university_after_a_plan_or_alone_is_no_study() -> None:
    graph, _ = run("我女儿想在上海读研究生，复旦大学", "复旦大学")
    assert not any(r[1] == "studies_at" for r in relations(graph))
