"""The grammar of introductions and of what ends (core/entity_rules_en.py, entity_rules_zh.py through
core/entities.py): a name beside a kinship or role term either way round, terms owned through a chain ("my sister's
husband", "我姐的老公"), work, home and what closes them. Sentences written for these tests, not taken from a set."""

from __future__ import annotations

from jiyi.stores.entities import USER, Graph
from tests.core.test_entities import relations, run


def test_a_name_and_its_term_either_way_round() -> None:
    for said in ("my sister Priya is visiting", "Priya, my sister, is visiting", "Priya (my sister) is visiting",
                 "Priya is my sister", "My sister's name is Priya", "I have a sister named Priya"):
        graph, _ = run(said)
        assert relations(graph) == {("Priya", "sister_of", USER)}, said


def test_a_place_or_a_time_before_the_comma_is_not_the_person() -> None:
    graph, _ = run("In Boston, my sister found a flat")
    assert relations(graph) == set()


def test_pets_named_when_they_are_adopted() -> None:
    graph, _ = run("We adopted a kitten called Miso last week", "our dog is called Rex")
    assert relations(graph) == {("Miso", "pet_of", USER), ("Rex", "pet_of", USER)}


def test_terms_owned_by_someone_else_a_pronoun_or_a_chain() -> None:
    graph, _ = run("my older sister Priya moved back", "Priya's husband Dev is a chef",
                   "her daughter Anika turned five", "my sister's son Kabir loves trains",
                   "Ravi is my mom's brother")
    assert {("Priya", "sister_of", USER), ("Dev", "husband_of", "Priya"), ("Anika", "daughter_of", "Priya"),
            ("Kabir", "son_of", "Priya"), ("mom", "mother_of", USER), ("Ravi", "brother_of", "mom")} \
        <= relations(graph)


def test_a_term_said_alone_after_the_name_is_the_same_person() -> None:
    graph, _ = run("My wife Lena is an architect", "I miss my wife.")
    assert relations(graph) == {("Lena", "wife_of", USER)}
    assert [e.name for e in graph.entities.values()] == ["Lena"]


def test_a_name_after_a_comma_that_starts_a_clause_is_not_apposed() -> None:
    graph, _ = run("My sister Mia waved at her best friend, Leo kept walking.")
    assert relations(graph) == {("Mia", "sister_of", USER)}


def closed(graph: Graph) -> set[tuple[str, str, str]]:
    return relations(graph) - relations(graph, current_only=True)


def test_a_role_at_an_organisation_names_the_relation_by_the_role() -> None:
    graph, _ = run("My cousin Nadia is a pharmacist at Boots", "Nadia's son Ollie is a student at Keele",
                   "I'm a regular at Flanagan's", "my new job at Canva starts Monday")
    assert relations(graph) == {("Nadia", "cousin_of", USER), ("Nadia", "works_at", "Boots"),
                                ("Ollie", "son_of", "Nadia"), ("Ollie", "studies_at", "Keele"),
                                (USER, "works_at", "Canva")}


def test_losing_a_job_and_graduating_close_without_naming_the_place() -> None:
    graph, _ = run("I work at Deloitte", "my brother Sam studies at Leeds Beckett", "Well, I got laid off today.",
                   "Sam graduated!", "I quit smoking too")
    assert {(USER, "works_at", "Deloitte"), ("Sam", "studies_at", "Leeds Beckett")} <= closed(graph)
    graph, _ = run("I work at Deloitte", "I quit smoking this week")
    assert closed(graph) == set()


def test_where_someone_is_from_and_here_in() -> None:
    graph, _ = run("My flatmate Aoife is from Galway", "It's pouring here in Berlin", "I grew up in Cork")
    assert {("Aoife", "from", "Galway"), (USER, "lives_in", "Berlin"), (USER, "from", "Cork")} <= relations(graph)


def test_a_couple_that_gets_engaged_then_married_closes_what_it_was() -> None:
    graph, _ = run("my girlfriend Maya is the best", "We got engaged last night!!", "Maya and I got married")
    assert closed(graph) == {("Maya", "girlfriend_of", USER), ("Maya", "fiancee_of", USER)}
    assert relations(graph, current_only=True) == {("Maya", "wife_of", USER)}
    graph, _ = run("Sol and Remy got married")  # nothing says who is the husband: nothing stated
    assert relations(graph) == set()


def test_things_sold_or_given_away_were_owned_until_then() -> None:
    graph, _ = run("thinking I should sell the Jeep", "I sold the Jeep.", "We gave Nico the old Corolla")
    assert closed(graph) == {(USER, "owns", "Jeep"), (USER, "owns", "Corolla")}
    assert relations(graph, current_only=True) == {("Nico", "owns", "Corolla")}


def test_moving_in_with_someone_and_moving_out() -> None:
    graph, _ = run("my roommate Priyanka is great", "Priyanka is moving in with her boyfriend", "Priyanka moved out")
    assert ("Priyanka", "roommate_of", USER) in closed(graph)


def test_terse_chat_drops_the_my_and_the_subject() -> None:
    graph, _ = run("husband Kofi fixed the gate", "old dog Bramble slept all day", "Moved to Hobart.",
                   "Started at the Hobart Vet Clinic on Monday")
    assert {("Kofi", "husband_of", USER), ("Bramble", "pet_of", USER), (USER, "lives_in", "Hobart"),
            (USER, "works_at", "Hobart Vet Clinic")} <= relations(graph)


def test_an_organisation_called_so_where_it_is_and_a_district_of_a_city() -> None:
    graph, _ = run("I'm a designer at a startup called Brightloom in Lisbon",
                   "Got a flat in Alfama, Lisbon. Tiny but lovely")
    assert {(USER, "works_at", "Brightloom"), ("Brightloom", "located_in", "Lisbon"),
            (USER, "lives_in", "Alfama"), ("Alfama", "part_of", "Lisbon")} <= relations(graph)


def test_two_people_who_move_together_and_a_boss_who_works_where_the_user_works() -> None:
    graph, _ = run("Ines and Tomas moved to Porto", "I work at Farfetch", "my manager Rui is fair")
    assert {("Ines", "lives_in", "Porto"), ("Tomas", "lives_in", "Porto"), ("Rui", "boss_of", USER),
            ("Rui", "works_at", "Farfetch")} <= relations(graph)


def test_a_spouse_introduced_as_they_die_is_late_and_a_capitalised_term_after_her_is_a_title() -> None:
    graph, _ = run("My husband, Arthur, died in 2019.", "My daughter Rosa visited; the baby calls her Aunt Rosa.")
    assert relations(graph) == {("Arthur", "late_husband_of", USER), ("Rosa", "daughter_of", USER)}


def test_chinese_a_name_and_its_term_either_way_and_a_term_inside_a_sentence() -> None:
    for said in ("小雨是我姐", "我姐叫小雨", "我姐小雨下周来", "俺姐小雨下周来"):
        graph, _ = run(said)
        assert relations(graph) == {("小雨", "sister_of", USER)}, said
    graph, _ = run("周末跟同桌林果去图书馆了")
    assert relations(graph) == {("林果", "deskmate_of", USER)}


def test_chinese_terms_owned_by_a_name_a_pronoun_or_whoever_has_one() -> None:
    graph, _ = run("我表哥叫阿凯", "阿凯有个女儿朵朵", "阿凯的老婆叫小敏")
    assert {("阿凯", "cousin_of", USER), ("朵朵", "daughter_of", "阿凯"), ("小敏", "wife_of", "阿凯")} \
        <= relations(graph)
    graph, _ = run("她爸是海军退休的")  # what he is, not what he is called
    assert relations(graph) == set()


def test_chinese_a_spouse_term_says_husband_or_wife_only_with_a_pronoun() -> None:
    graph, _ = run("老伴老陈最近血压高 他不肯吃药")
    assert relations(graph) == {("老陈", "husband_of", USER)}
    graph, _ = run("老伴老陈最近血压高")
    assert relations(graph) == set()


def test_chinese_a_boyfriend_who_proposes_becomes_a_fiance() -> None:
    graph, _ = run("我男朋友阿明人很好", "阿明求婚了 我答应了")
    assert ("阿明", "boyfriend_of", USER) in closed(graph)
    assert relations(graph, current_only=True) == {("阿明", "fiance_of", USER)}


def test_someone_said_to_be_in_a_town_lives_there() -> None:
    graph, _ = run("my cousin Tereza is in Lisbon four years now", "Bruno and Alma are still in Porto",
                   "Tereza's back in Lisbon after the wedding")
    assert {("Tereza", "lives_in", "Lisbon"), ("Bruno", "lives_in", "Porto"), ("Alma", "lives_in", "Porto")} \
        <= relations(graph)


def test_a_stay_a_school_year_or_a_campus_is_no_home() -> None:
    graph, _ = run("my cousin Tereza is in Madrid for a conference", "Tereza is in Vienna on holiday",
                   "her son Pavel is in Year 4 now", "Pavel is in UC Davis")
    assert {r for r in relations(graph) if r[1] == "lives_in"} == set()


def test_someone_said_to_be_at_an_organisation_works_there() -> None:
    graph, _ = run("my flatmate Oskar, he's at Zalando", "Oskar's sister Vera has been at Siemens for ten years")
    assert {("Oskar", "works_at", "Zalando"), ("Vera", "works_at", "Siemens")} <= relations(graph)


def test_being_somewhere_for_a_while_or_the_user_there_is_no_job() -> None:
    graph, _ = run("my flatmate Oskar is at Heathrow for his flight", "I'm at Lidl buying bread",
                   "Oskar is at Christmas markets all week", "Oskar's at Wembley tonight")
    assert {r for r in relations(graph) if r[1] == "works_at"} == set()


def test_zhu_with_the_place_straight_after_it_is_a_home() -> None:
    graph, _ = run("我表姐现在住绍兴", "我住深圳福田，上班近")
    assert {("表姐", "lives_in", "绍兴"), (USER, "lives_in", "福田"), ("福田", "part_of", "深圳")} <= relations(graph)


def test_zhu_in_a_hotel_at_mine_or_only_planned_is_no_home_of_that_place() -> None:
    graph, _ = run("出差住酒店", "我打算住杭州", "我住城中村", "记住北京的地址")
    assert {r for r in relations(graph) if r[1] == "lives_in"} == set()


def test_the_home_village_someone_is_at_now() -> None:
    graph, _ = run("我老婆在南阳老家带孩子", "我表妹回衡阳老家了")
    assert {("老婆", "lives_in", "南阳"), ("表妹", "lives_in", "衡阳")} <= relations(graph)


def test_a_holiday_trip_home_or_where_one_is_from_is_not_where_one_lives() -> None:
    graph, _ = run("过年回信阳老家", "我老家在衡阳", "春节我回到衡阳老家了")
    assert {r for r in relations(graph) if r[1] == "lives_in"} == set()


def test_parent_words_of_other_home_languages_name_the_parent() -> None:
    graph, _ = run("Abbu has booked the tickets", "Nanay called from home last night")
    assert {("Abbu", "father_of", USER), ("Nanay", "mother_of", USER)} <= relations(graph)


def test_a_parent_word_inside_a_sentence_names_no_parent_of_the_user() -> None:
    graph, _ = run("the kids were screaming for their mummy all night", "her daddy has a boat")
    assert {r for r in relations(graph) if r[1] in ("mother_of", "father_of") and r[2] == USER} == set()


def test_cantonese_and_shanghainese_words_read_as_their_mandarin_ones() -> None:
    graph, _ = run("我细佬喺佛山美的集团做设计", "家婆喺肇庆自己住", "阿拉阿姐在宁波开了个花店 叫小满花坊")
    assert {("细佬", "brother_of", USER), ("细佬", "works_at", "美的集团"), ("家婆", "mother_in_law_of", USER),
            ("阿姐", "sister_of", USER), ("小满花坊", "located_in", "宁波")} <= relations(graph)


def test_working_from_home_laughter_or_arabic_is_no_one_and_nowhere() -> None:
    graph, _ = run("老细批咗我喺屋企做嘢", "哈哈多谢 下周开始喺超市做兼职", "我在学阿拉伯语")
    assert not any(r[2] == "屋企" or r[0] in ("哈哈", "阿拉伯语") for r in relations(graph))


def test_this_guy_and_a_name_is_whom_he_means_after_it() -> None:
    graph, _ = run("my sister Ada is in Cork", "so there's this guy Tomas from work, he's in Dublin now")
    assert ("Tomas", "lives_in", "Dublin") in relations(graph)
    assert ("Ada", "lives_in", "Dublin") not in relations(graph)


def test_found_work_or_an_apprenticeship_at_an_organisation_is_a_job_there() -> None:
    graph, _ = run("my nephew Kai found work at Ocado", "Kai's brother Rui started his apprenticeship with Siemens "
                   "up in Leeds")
    assert {("Kai", "works_at", "Ocado"), ("Rui", "works_at", "Siemens"), ("Rui", "lives_in", "Leeds")} \
        <= relations(graph)
    assert ("Siemens", "located_in", "Leeds") not in relations(graph)


def test_work_only_hoped_for_or_never_found_is_no_job() -> None:
    graph, _ = run("my nephew Kai might have found work at Ocado", "Kai never found work at Tesco")
    assert {r for r in relations(graph) if r[1] == "works_at"} == set()


def test_where_someone_rang_from_is_where_they_are_unless_a_home_is_said() -> None:
    graph, _ = run("my cousin Tadeo rang from Valencia last night", "my aunt Rosa lives in Murcia",
                   "Rosa called from Seville")
    assert {("Tadeo", "lives_in", "Valencia"), ("Rosa", "lives_in", "Murcia")} <= relations(graph)
    assert ("Rosa", "lives_in", "Seville") not in relations(graph)


def test_a_call_from_somewhere_that_is_no_town_places_no_one() -> None:
    graph, _ = run("my cousin Tadeo called from the airport", "Tadeo rang from Christmas dinner")
    assert {r for r in relations(graph) if r[1] == "lives_in"} == set()


def test_the_name_everyone_calls_someone_names_the_one_just_spoken_of() -> None:
    graph, _ = run("我老公姓韩，大家都叫他老韩，在宝钢上班", "我导师叫陈志远，组里私下都叫他陈老板")
    assert {("老韩", "husband_of", USER), ("老韩", "works_at", "宝钢"), ("陈志远", "advisor_of", USER)} \
        <= relations(graph)
    teacher = next(e for e in graph.entities.values() if e.name == "陈志远")
    assert "陈老板" in teacher.surface_forms()


def test_a_nickname_said_of_no_one_known_or_the_user_names_no_one() -> None:
    graph, _ = run("大家都叫他老黑", "他叫我小胖", "我们管她叫什么来着")
    assert relations(graph) == set()
    assert not any(r[0] == "大家" for r in relations(graph))


def test_parents_said_together_or_as_they_right_after_live_there_each() -> None:
    graph, _ = run("我爸妈都在洛阳", "跟俺爹妈打了电话 他们还在南阳")
    assert {("妈", "lives_in", "南阳"), ("爸", "lives_in", "南阳")} <= relations(graph)
    graph, _ = run("我爸妈一直在洛阳")
    assert {("妈", "lives_in", "洛阳"), ("爸", "lives_in", "洛阳")} <= relations(graph)


def test_parents_only_planning_someone_elses_parents_or_a_they_of_no_one_are_nowhere() -> None:
    graph, _ = run("我爸妈打算搬到杭州", "她爸妈都在成都", "他们在宜昌")
    assert {r for r in relations(graph) if r[1] == "lives_in"} == set()


def test_parent_words_as_subjects_of_being_in_a_town() -> None:
    graph, _ = run("Mummy called this morning", "mummy and daddy are still in Accra")
    assert ("Mummy", "lives_in", "Accra") in relations(graph)


def test_a_stay_said_further_on_is_no_home_but_a_while_is() -> None:
    graph, _ = run("my cousin Tereza is in Madrid this week for a wedding", "my brother Iker is home in Bilbao now "
                   "for a few months")
    assert {r for r in relations(graph) if r[1] == "lives_in"} == {("Iker", "lives_in", "Bilbao")}
