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
    graph, _ = run("I live in Leeds", "the Golf's gone, finally", "阿杰又迟到了")
    assert relations(graph, current_only=True) == {(USER, "lives_in", "Leeds")}
    assert [e.name for e in graph.entities.values()] == ["Leeds"]


def test_words_after_a_kinship_term_that_are_not_names_make_no_entity() -> None:
    graph, _ = run("我爸念叨了七天", "my brother just called", "晚上和男朋友吃饭")
    # 我爸 and 男朋友 stand for one person each; "my brother" could be any of several: no entity without a name
    assert {e.name: e.aliases for e in graph.entities.values()} == {"爸": ["爸", "我爸"], "男朋友": ["男朋友"]}
    assert relations(graph) == {("爸", "father_of", USER), ("男朋友", "boyfriend_of", USER)}


def people_and_places(graph: Graph) -> dict[str, str]:
    return {e.name: e.kind for e in graph.entities.values()}


def test_english_names_said_in_passing_are_people_and_places_by_their_context() -> None:
    graph, mentions = run("Went hiking with Melanie and Jon, then we drove to Tucson",
                          "Thanks, Caroline! You're the best.", "Jon's new studio looks amazing",
                          "Thankfully, my mom is fine. Anyway, Harry Potter is on tonight")
    # "my mom is fine" names her by the term, as "my mom called" does (UNIQUE); "Thankfully" names nobody
    assert people_and_places(graph) == {"Melanie": "person", "Jon": "person", "Tucson": "place",
                                        "Caroline": "person", "mom": "person"}
    assert ("Jon", "m2") in mentions[2]  # a sentence's first word names an entity the graph already knows
    # a name in passing says someone is in the user's life, not how
    assert relations(graph) == {("mom", "mother_of", USER)}


def test_a_capitalised_first_word_is_a_name_only_when_the_message_has_it_mid_sentence() -> None:
    graph, _ = run("Margaret and I were married forty-one years.", "Luna and Oliver are so sweet!")
    assert people_and_places(graph) == {}
    graph, _ = run("Margaret and I were married forty-one years. The house is quiet since Margaret passed.")
    assert people_and_places(graph) == {"Margaret": "person"}


def test_a_lowercase_word_after_a_kinship_term_is_a_name_only_in_lowercase_chat() -> None:
    graph, _ = run("My aunt believed in me. My car broke down again")
    assert people_and_places(graph) == {}
    graph, _ = run("my roommate jordan already ate all the groceries i bought")
    assert ("jordan", "roommate_of", USER) in relations(graph)


def test_chinese_names_said_in_passing_by_their_form_and_the_words_around_them() -> None:
    graph, _ = run("我和小李去吃饭了", "跟老王说了 他不信", "王姐说她明天来", "刘洋告诉我他要结婚了",
                   "婆婆来杭州帮我们带娃")
    kinds = people_and_places(graph)
    assert {k: kinds[k] for k in ("小李", "老王", "王姐", "刘洋", "杭州")} == {
        "小李": "person", "老王": "person", "王姐": "person", "刘洋": "person", "杭州": "place"}
    graph, _ = run("小时候我住在乡下", "小区门口新开了家店", "老高兴了", "向老师请教了一个问题")
    assert people_and_places(graph) == {}


def test_business_partners_are_organisations_and_a_numbered_word_is_no_one() -> None:
    graph, _ = run("I'm in talks with Gatorade about a sponsorship", "Remember that block in Game 7 of the Finals?")
    assert people_and_places(graph) == {"Gatorade": "organisation"}


def test_a_pronoun_never_stands_for_a_named_speaker_of_the_conversation() -> None:
    """Between Caroline and Melanie, Caroline's "she" is someone else: Melanie is "you", Caroline is "I"."""
    graph = Graph()
    extract_change("Thanks, Melanie! I adopted a puppy last week", graph, [], T0, ["m0"], speakers=["Melanie"])
    change = extract_change("She is so playful", graph, ["Thanks, Melanie! I adopted a puppy last week"], T0,
                            ["m1"], speakers=["Melanie"])
    assert change.mentions == []
    without = Graph()
    extract_change("Thanks, Melanie! I adopted a puppy last week", without, [], T0, ["m0"])
    change = extract_change("She is so playful", without, ["Thanks, Melanie! I adopted a puppy last week"], T0, ["m1"])
    assert [without.entities[e].name for e, _ in change.mentions] == ["Melanie"]  # a person named in passing


def test_chinese_children_by_birth_order() -> None:
    graph, _ = run("次女美玲在台北教书", "我小儿子叫立伟")
    assert {("美玲", "daughter_of", USER), ("立伟", "son_of", USER)} <= relations(graph)
