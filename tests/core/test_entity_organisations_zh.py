"""Where a Chinese organisation is, read from the name as said (core/organisations_zh.py), and who goes to which
school (entity_rules_zh: attends). Sentences written for these tests, not taken from a set."""

from __future__ import annotations

from jiyi.core.organisations_zh import split_places
from jiyi.stores.entities import USER
from tests.core.test_entities import relations, run


def test_a_place_before_a_workplace_is_where_it_is() -> None:
    graph, _ = run("我在杭州顺达机械厂做会计")
    assert {(USER, "works_at", "顺达机械厂"), ("顺达机械厂", "located_in", "杭州")} <= relations(graph)


def test_a_city_and_a_district_before_a_school_with_de() -> None:
    graph, _ = run("我在成都武侯区的光华小学教英语")
    assert {(USER, "works_at", "光华小学"), ("光华小学", "located_in", "武侯区"), ("武侯区", "part_of", "成都")} \
        <= relations(graph)


def test_a_child_goes_to_the_school_named_after_him() -> None:
    graph, _ = run("我儿子叫小航 今年上三年级", "小航转到了海淀区的育英小学")
    assert {("小航", "attends", "育英小学"), ("育英小学", "located_in", "海淀区")} <= relations(graph)


def test_reading_at_a_middle_school_is_attending_it() -> None:
    graph, _ = run("我妹妹叫小雯 在长沙明德中学读初二")
    assert {("小雯", "attends", "明德中学"), ("明德中学", "located_in", "长沙")} <= relations(graph)


def test_the_user_at_a_school_without_a_verb_of_study_attends_nothing() -> None:
    graph, _ = run("我现在在向阳小学")
    assert not any(r[1] == "attends" for r in relations(graph))


def test_a_described_company_is_not_named() -> None:
    graph, _ = run("我表哥叫阿伟 他在一家物流公司上班")
    assert not any(r[1] == "works_at" for r in relations(graph))


def test_place_words_stop_where_no_name_would_be_left() -> None:
    assert split_places("朝阳区朝阳小学").name == "朝阳小学"  # 朝阳 is a place word too, but 小学 alone names nothing
    assert split_places("上海的时候").places == ()  # past 的 only an institution word makes an organisation
    assert split_places("浙大附属医院").places == ()  # 浙大 is a university called by its place


def test_a_move_to_a_place_written_in_latin_letters() -> None:
    graph, _ = run("上个月搬到Penang了")
    assert (USER, "lives_in", "Penang") in relations(graph)


def test_a_lowercase_latin_word_after_a_move_is_no_place() -> None:
    graph, _ = run("搬到wifi信号好的房间了")
    assert not any(r[1] == "lives_in" for r in relations(graph))


def test_a_business_someone_opened_is_theirs_and_where_it_was_opened() -> None:
    graph, _ = run("我在绍兴开了个面馆 叫老街面馆", "我表哥在无锡开了家厂叫宏达机电", "我姐在大理开民宿，名叫云上")
    assert {(USER, "owns", "老街面馆"), ("老街面馆", "located_in", "绍兴"),
            ("宏达机电", "located_in", "无锡"), ("云上", "located_in", "大理")} <= relations(graph)
    owned = {(s, t) for s, r, t in relations(graph) if r == "owns"}
    assert {t for _, t in owned} == {"老街面馆", "宏达机电", "云上"}
    assert (USER, "宏达机电") not in owned and (USER, "云上") not in owned


def test_a_business_only_wished_for_or_a_meeting_is_nobodys() -> None:
    graph, _ = run("我想在杭州开个咖啡店 叫慢时光", "今天开了个会 叫周例会", "要是我开个饭馆就好了")
    assert {r for r in relations(graph) if r[1] in ("owns", "located_in")} == set()


# --- a first day at a workplace said by its bare name (entity_rules_zh._FIRST_DAY) ---

def test_a_first_day_names_the_users_new_workplace() -> None:
    graph, _ = run("终于换工作了 今天网易第一天 有点紧张")
    assert (USER, "works_at", "网易") in relations(graph)


def test_a_first_day_of_an_event_or_in_a_town_is_no_workplace() -> None:
    graph, _ = run("今天开学第一天 好累", "军训第一天 晒黑了", "成都第一天 吃了火锅")
    assert not any(r[1] == "works_at" for r in relations(graph))
