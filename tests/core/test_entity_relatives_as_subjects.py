"""Relations of the other people in a user's life, said with the person as the clause's subject by whose relative
they are ("my mum works at …", "her husband …", 他妈…, 老周的女儿…) rather than by name: core/entities.py resolves
such a subject to the one the graph holds in that relation, and to nobody when it holds none or two. Sentences
written for these tests, not taken from a set."""

from __future__ import annotations

from jiyi.stores.entities import USER
from tests.core.test_entities import relations, run


def test_my_parent_as_a_subject_is_the_parent_the_graph_knows() -> None:
    graph, _ = run("My mum called this morning.", "My mum works at the Royal Infirmary now.")
    assert ("mum", "works_at", "Royal Infirmary") in relations(graph)
    assert (USER, "works_at", "Royal Infirmary") not in relations(graph)


def test_a_lowercase_verb_after_a_kinship_term_is_not_a_name() -> None:
    graph, _ = run("my dad works at the depot on weekends")
    assert ("dad", "father_of", USER) in relations(graph)
    assert not any(e.name == "works" for e in graph.entities.values())


def test_her_husband_is_the_husband_the_graph_knows_of_her() -> None:
    graph, _ = run("My sister Nadia married Omar last spring.", "Her husband Omar is lovely.",
                   "She says her husband works at Siemens.")
    assert ("Omar", "works_at", "Siemens") in relations(graph)
    assert ("Nadia", "works_at", "Siemens") not in relations(graph)


def test_someone_elses_relative_the_graph_does_not_know_is_someone_new() -> None:
    graph, _ = run("My friend Kemal is great.", "His brother moved to Izmir.")
    assert ("Kemal", "lives_in", "Izmir") not in relations(graph)
    assert {("Kemal's brother", "brother_of", "Kemal"), ("Kemal's brother", "lives_in", "Izmir")} <= relations(graph)


def test_my_sister_is_found_by_the_words_she_was_introduced_with() -> None:
    graph, _ = run("My sister Ines is a chemist.", "my sister moved to Porto last week")
    assert ("Ines", "lives_in", "Porto") in relations(graph)
    assert (USER, "lives_in", "Porto") not in relations(graph)


def test_a_former_boss_is_not_the_boss_the_graph_holds() -> None:
    graph, _ = run("My boss Greta is strict.", "My old boss moved to Vienna.")
    assert not any(r[1] == "lives_in" for r in relations(graph))


def test_a_role_somewhere_is_not_the_one_of_the_users_life() -> None:
    graph, _ = run("My partner on the squash ladder beat me again.")
    assert relations(graph) == set()


def test_chinese_their_relative_at_the_start_of_a_clause() -> None:
    graph, _ = run("我女儿小敏嫁给了阿峰", "小敏的老公叫阿峰 人挺实在", "她老公在宁波上班")
    assert ("阿峰", "lives_in", "宁波") in relations(graph)
    assert ("小敏", "lives_in", "宁波") not in relations(graph)


def test_chinese_a_name_and_their_relative() -> None:
    graph, _ = run("邻居老许有个儿子叫许亮", "老许的儿子在杭州工作")
    assert ("许亮", "lives_in", "杭州") in relations(graph)
    assert ("老许", "lives_in", "杭州") not in relations(graph)


def test_chinese_a_relative_the_graph_does_not_hold_is_someone_new() -> None:
    graph, _ = run("我同事小刘人很好", "他妈在昆明上班")
    assert ("小刘", "lives_in", "昆明") not in relations(graph)  # not 小刘: his mother, whom nothing names yet
    assert {("小刘的妈妈", "mother_of", "小刘"), ("小刘的妈妈", "lives_in", "昆明")} <= relations(graph)


def test_chinese_a_noun_after_the_pronoun_is_what_is_theirs() -> None:
    graph, _ = run("我表姐叫小雅", "她公司在苏州", "她姐夫在上海上班")
    assert not any(r[1] == "lives_in" for r in relations(graph))


def test_chinese_a_curse_is_not_a_mother() -> None:
    graph, _ = run("我室友叫阿成", "他妈的又在深圳加班")
    assert not any(r[0] != USER and r[1] == "lives_in" for r in relations(graph) if r[0] != "阿成")


def test_chinese_another_name_keeps_the_subject() -> None:
    graph, _ = run("儿子叫王磊 小名石头 在武汉读大学")
    [wang_lei] = [e for e in graph.entities.values() if e.name == "王磊"]
    assert "石头" in wang_lei.aliases
    assert ("王磊", "lives_in", "武汉") in relations(graph) or any(
        r[0] == "王磊" and r[1] in ("studies_at", "attends") for r in relations(graph))
    assert not any(e.name == "小名" for e in graph.entities.values())


def test_chinese_a_home_is_where_one_lives_not_a_home_town() -> None:
    graph, _ = run("我哥叫张涛", "我哥房子在苏州", "我老家在潍坊")
    assert ("张涛", "lives_in", "苏州") in relations(graph)
    assert (USER, "lives_in", "潍坊") not in relations(graph)


def test_after_and_the_subject_is_whom_the_clause_before_was_about() -> None:
    graph, _ = run("My cousin Ravi is a teacher and lives in Bristol.", "I run a bakery and live in Hove.")
    assert {("Ravi", "lives_in", "Bristol"), (USER, "lives_in", "Hove")} <= relations(graph)
    assert (USER, "lives_in", "Bristol") not in relations(graph)


def test_after_and_in_a_relative_clause_nothing_is_said_of_the_speaker() -> None:
    graph, _ = run("I met Sarah, who works at Ocado and lives in Luton.")
    assert not any(r[0] == USER and r[1] in ("works_at", "lives_in") for r in relations(graph))


def test_a_name_then_a_pronoun_is_one_person() -> None:
    graph, _ = run("My friend Dan is back.", "They introduced me to Maria, she's a pilot and lives in Lisbon.")
    assert ("Maria", "lives_in", "Lisbon") in relations(graph)
    assert ("Dan", "lives_in", "Lisbon") not in relations(graph)


def test_several_named_together_move_together_and_no_one_is_passed_over_for_a_name() -> None:
    graph, _ = run("Priya, Dev and the twins moved to Reading last week.")
    assert {("Priya", "lives_in", "Reading"), ("Dev", "lives_in", "Reading")} <= relations(graph)
    assert not any(e.name.casefold().startswith("the") for e in graph.entities.values())


def test_chinese_a_workplace_described_then_named() -> None:
    graph, _ = run("我表哥叫周航", "表哥在南京一家做芯片的公司上班 公司叫芯原微")
    assert {("周航", "works_at", "芯原微"), ("芯原微", "located_in", "南京")} <= relations(graph)
    assert (USER, "works_at", "芯原微") not in relations(graph)


def test_chinese_a_name_not_given_is_no_workplace() -> None:
    graph, _ = run("我在一家公司上班 叫什么不重要", "我同学叫王悦")
    assert not any(r[1] == "works_at" for r in relations(graph))


def test_chinese_a_described_workplace_is_not_where_anyone_lives() -> None:
    graph, _ = run("我妹妹叫林娜", "妹妹在海淀一家外企做财务")
    assert not any(r[1] == "lives_in" for r in relations(graph))


def test_chinese_someone_came_to_where_the_user_is() -> None:
    graph, _ = run("我爸来成都看我了 待一周")
    assert (USER, "lives_in", "成都") in relations(graph)
    assert ("爸", "lives_in", "成都") not in relations(graph)  # a visit, not a move


def test_chinese_a_wish_to_come_places_nobody() -> None:
    graph, _ = run("我妈想来成都住一阵", "他们原来成都人")
    assert not any(r[1] == "lives_in" for r in relations(graph))


def test_a_colleague_works_where_the_user_works() -> None:
    graph, _ = run("I work at Monzo.", "My colleague Aoife is hilarious.")
    assert ("Aoife", "works_at", "Monzo") in relations(graph)


def test_a_boss_named_as_the_user_leaves_worked_where_the_user_did() -> None:
    graph, _ = run("Last day at Ocado. My manager, Grace, gave a speech.")
    assert ("Grace", "works_at", "Ocado") in relations(graph)


def test_a_colleague_with_no_workplace_known_works_nowhere_said() -> None:
    graph, _ = run("My colleague Aoife is hilarious.")
    assert not any(r[1] == "works_at" for r in relations(graph))


def test_a_name_as_the_subject_of_working_or_living_is_a_person() -> None:
    graph, _ = run("Yesterday Tom started working at Lidl.", "Harriet lives in Galway these days.")
    assert {("Tom", "works_at", "Lidl"), ("Harriet", "lives_in", "Galway")} <= relations(graph)
    assert graph.entities[next(e for e, n in graph.names().items() if n == "Tom")].kind == "person"


def test_the_second_word_of_a_name_or_a_firm_is_no_person() -> None:
    graph, _ = run("Wei Jie works at Grab.", "Yesterday I read that Baker Street moved to Soho.")
    assert not any(e.kind == "person" for e in graph.entities.values())


def test_chinese_a_name_at_the_start_is_whom_the_clause_is_about() -> None:
    graph, _ = run("婷婷在北京读书", "王磊在华为上班")
    assert {("婷婷", "lives_in", "北京"), ("王磊", "works_at", "华为")} <= relations(graph)
    assert not any(r[0] == USER for r in relations(graph))


def test_chinese_a_common_noun_at_the_start_is_no_person() -> None:
    graph, _ = run("小区在郊区 挺安静", "老家在潍坊")
    assert not any(e.kind == "person" for e in graph.entities.values())


def test_chinese_what_someone_does_is_not_a_schools_name() -> None:
    graph, _ = run("我儿子乐乐五岁", "乐乐九月上小学")
    assert not any(r[1] == "attends" for r in relations(graph))


def test_chinese_someone_living_at_the_users_place() -> None:
    graph, _ = run("我婆婆从南昌过来了 她住我们家 帮忙带孩子")
    assert ("婆婆", "lives_with", USER) in relations(graph)


def test_chinese_near_the_users_place_is_no_shared_home() -> None:
    graph, _ = run("我表弟叫阿伟", "阿伟住我家附近")
    assert not any(r[1] == "lives_with" for r in relations(graph))


def test_chinese_the_subject_said_first_is_in_the_place_said_last() -> None:
    graph, _ = run("王磊现在在成都", "公司在杭州")
    assert ("王磊", "lives_in", "成都") in relations(graph)
    assert not any(r[2] == "杭州" for r in relations(graph))
