"""Offline entity and relation extraction (core/entities.py with the Chinese and English rules): naming, kinship and
role terms, pets, work and places, pronouns resolved to the last fitting entity, and what a later turn ends."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from jiyi.core.entities import extract_change
from jiyi.stores.entities import USER, Graph

T0 = datetime(2024, 3, 4, tzinfo=UTC)


def run(*turns: str) -> tuple[Graph, list[list[tuple[str, str]]]]:
    """Each turn through extract_change as the write path sends them; the graph and each turn's mentions by name."""
    graph = Graph()
    said: list[str] = []
    mentions = []
    for i, text in enumerate(turns):
        change = extract_change(text, graph, said, T0 + timedelta(days=i), [f"m{i}"])
        names = graph.names()
        mentions.append([(names[e], m) for e, m in change.mentions])
        said.append(text)
    return graph, mentions


def relations(graph: Graph, current_only: bool = False) -> set[tuple[str, str, str]]:
    names = graph.names()
    return {(names[r.source], r.relation, names[r.target]) for r in graph.relations
            if r.is_current or not current_only}


def test_chinese_kinship_naming_and_a_later_alias() -> None:
    graph, mentions = run("我表姐叫小雅 在北京做产品经理", "表姐面试过了！")
    [xiaoya] = [e for e in graph.entities.values() if e.name == "小雅"]
    assert xiaoya.kind == "person" and {"表姐", "我表姐"} <= set(xiaoya.aliases)
    assert {("小雅", "cousin_of", USER), ("小雅", "lives_in", "北京")} <= relations(graph)
    assert ("小雅", "m1") in mentions[1]  # "表姐" alone is 小雅


def test_chinese_pets_work_and_a_pronoun_that_says_she() -> None:
    graph, mentions = run("我家柯基豆豆今天把我新买的拖鞋啃了", "闺蜜Coco约我端午出去玩",
                          "她家猫叫芝麻 跟豆豆还在互相试探中")
    assert {("豆豆", "pet_of", USER), ("Coco", "friend_of", USER), ("芝麻", "pet_of", "Coco")} <= relations(graph)
    assert graph.entities[next(e for e, n in graph.names().items() if n == "芝麻")].kind == "pet"
    assert ("Coco", "m2") in mentions[2]


def test_a_term_said_first_joins_the_name_said_later() -> None:
    graph, _ = run("我老公又出差了 累死", "我老公志强说下周回来")
    people = [e for e in graph.entities.values() if e.kind == "person"]
    assert [p.name for p in people] == ["志强"] and "老公" in people[0].aliases
    assert relations(graph) == {("志强", "husband_of", USER)}


def test_a_move_closes_where_one_lived_and_leaving_a_job_closes_it() -> None:
    graph, _ = run("my older brother Arjun just started law school at UChicago",
                   "he's in a tiny studio in Chicago", "I live in Denver, love it here",
                   "officially a Seattle resident now", "first day at Amazon today",
                   "last day at Amazon, moving on")
    assert {("Arjun", "brother_of", USER), ("Arjun", "studies_at", "UChicago"),
            ("Arjun", "lives_in", "Chicago")} <= relations(graph)
    assert ("Arjun", "works_at", "UChicago") not in relations(graph)
    assert (USER, "lives_in", "Seattle") in relations(graph, current_only=True)
    assert (USER, "lives_in", "Denver") in relations(graph) - relations(graph, current_only=True)
    [amazon] = [r for r in graph.relations if r.relation == "works_at"]
    assert amazon.invalid_at == T0 + timedelta(days=5) and amazon.memory_ids == ["m4", "m5"]


def test_pronouns_follow_gender_and_link_what_never_says_the_name() -> None:
    graph, mentions = run("My wife Lena is an architect", "my brother Tom is visiting",
                          "she has been up till 2am on a library competition", "he bombed his exam")
    assert ("Lena", "m2") in mentions[2] and ("Tom", "m2") not in mentions[2]
    assert ("Tom", "m3") in mentions[3] and ("Lena", "m3") not in mentions[3]
    assert {("Lena", "wife_of", USER), ("Tom", "brother_of", USER)} <= relations(graph)


def test_a_break_up_and_a_pet_that_died_are_closed_not_deleted() -> None:
    graph, _ = run("kayla and i have been together 2 yrs next week", "our cat Pickles is mad at us",
                   "valentines day and we broke up", "我们家鹦鹉小绿会说话了", "小绿走了。养了九年。")
    closed = relations(graph) - relations(graph, current_only=True)
    assert {("kayla", "partner_of", USER), ("小绿", "pet_of", USER)} <= closed
    assert ("Pickles", "pet_of", USER) in relations(graph, current_only=True)


def test_an_end_the_graph_does_not_know_closes_nothing() -> None:
    graph, _ = run("I live in Leeds", "sold the Golf today", "阿杰又迟到了")
    assert relations(graph, current_only=True) == {(USER, "lives_in", "Leeds")}
    assert [e.name for e in graph.entities.values()] == ["Leeds"]


def test_words_after_a_kinship_term_that_are_not_names_make_no_entity() -> None:
    graph, _ = run("我爸念叨了七天", "my brother just called", "晚上和男朋友吃饭")
    # 我爸 and 男朋友 stand for one person each; "my brother" could be any of several: no entity without a name
    assert {e.name: e.aliases for e in graph.entities.values()} == {"爸": ["爸", "我爸"], "男朋友": ["男朋友"]}
    assert relations(graph) == {("爸", "father_of", USER), ("男朋友", "boyfriend_of", USER)}
