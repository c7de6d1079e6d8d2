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


def test_a_relatives_term_opening_a_clause_is_the_users_relative() -> None:
    graph, _ = run("弟弟来成都开会 他在深圳华为做芯片")
    assert ("弟弟", "brother_of", USER) in relations(graph)
    assert ("弟弟", "works_at", "华为") in relations(graph)


def test_a_stay_of_some_days_is_a_visit_not_a_shared_home() -> None:
    graph, _ = run("我妈来住我这儿三天")
    assert not any(r[1] == "lives_with" for r in relations(graph))


def test_the_form_the_user_says_is_kept() -> None:
    graph, _ = run("俺弟弟打电话说娘住院了")
    brother = next(e for e in graph.entities.values() if "弟弟" in e.surface_forms())
    assert "俺弟弟" in brother.surface_forms()
    graph, _ = run("跟爸妈说了", "我爸没说话")
    assert any("我爸" in e.surface_forms() for e in graph.entities.values())


def test_the_second_place_of_one_message_says_the_first_more_closely() -> None:
    graph, _ = run("我表哥阿豪在集美读大学", "表哥到新疆了 在喀什")
    homes = {r[2] for r in relations(graph) if r[0] == "阿豪" and r[1] == "lives_in"}
    assert homes == {"喀什"}


def test_a_home_read_between_the_lines_does_not_replace_one_said() -> None:
    graph, _ = run("我住在徐汇 离公司近", "弟弟来上海出差")
    assert relations(graph, current_only=True) >= {(USER, "lives_in", "徐汇")}
    assert (USER, "lives_in", "上海") not in relations(graph)


def test_an_organisation_is_also_called_with_its_nearer_places() -> None:
    graph, _ = run("老婆阿秀在浙江义乌小商品城打工")
    market = next(e for e in graph.entities.values() if e.kind == "organisation")
    assert "义乌小商品城" in market.surface_forms()


def test_the_one_called_so_in_a_clause_of_its_own_is_whom_what_follows_is_about() -> None:
    graph, _ = run("现任妻子林慧，她带来一个儿子，叫小宇，在长安中学读初三。")
    assert ("小宇", "son_of", "林慧") in relations(graph)
    assert ("小宇", "attends", "长安中学") in relations(graph)
    assert not any(e.name.startswith("叫") for e in graph.entities.values())


def test_a_word_after_a_term_is_a_persons_name_only_in_a_names_shape() -> None:
    graph, _ = run("老婆高兴得很", "婆婆好心买了一箱芒果", "另外那个室友回家了", "老婆天天骂")
    assert not {"高兴", "好心", "回家", "天天"} & {e.name for e in graph.entities.values()}
    graph, _ = run("我养的狗叫年糕")
    assert ("年糕", "pet_of", USER) in relations(graph)  # a pet is called by a word of the dictionary


def test_what_is_not_so_is_not_stated() -> None:
    graph, _ = run("五一的计划变了 不去云南了")
    assert not any(r[1] == "lives_in" for r in relations(graph))


def test_a_shop_ending_in_market_is_no_city() -> None:
    graph, _ = run("我老婆在家门口超市当收银")
    assert not any(r[1] == "lives_in" for r in relations(graph))


def test_a_title_names_no_one() -> None:
    graph, _ = run("有个学生写《我的父亲》，看得我半天没缓过来")
    assert not relations(graph)


def test_someone_known_by_a_surname_is_not_the_user() -> None:
    graph, _ = run("又被我妈押去相亲了", "姓罗，在株洲中车当工程师，人挺老实")
    assert not any(r[0] == USER and r[1] == "works_at" for r in relations(graph))


def test_a_plan_goes_on_into_the_clause_it_opens() -> None:
    graph, _ = run("打算直接找工作，去蓝鲸教育做课程研发")
    assert not any(r[1] == "works_at" for r in relations(graph))


def test_a_stay_this_time_is_a_visit() -> None:
    graph, _ = run("男朋友下周又来北京，这次住我这边")
    assert not any(r[1] == "lives_with" for r in relations(graph))


def test_the_boss_said_alone_after_another_organisation_is_its_boss() -> None:
    graph, _ = run("Kopi Lab开了第二间分店 老板又找我画墙画")
    assert not any(r[1] == "boss_of" for r in relations(graph))
    graph, _ = run("下周一入职熊猫传媒做运营 老板姓邓")
    assert any(r[1] == "boss_of" and r[2] == USER for r in relations(graph))
    graph, _ = run("组长老周人倒是挺好 今天还帮我挡了一次锅")
    assert ("老周", "boss_of", USER) in relations(graph)


def test_a_common_noun_after_to_live_at_is_no_place() -> None:
    graph, _ = run("孫女入學了，住在學校宿舍")
    assert not any(r[1] == "lives_in" for r in relations(graph))
