"""What a reply must not be told any more (core/supersession.py): words of change, the part of a message that says
it, and which older memories a newer one says have changed."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from jiyi.core.lexicon import lexicon
from jiyi.core.supersession import (
    Replacement,
    asks_about_before,
    changed_people,
    changed_subject,
    common_words,
    other_people,
    people_in,
    put_in_place,
    said_at,
    same_subject,
    says_it_changed,
    says_it_moved,
    subject_marks,
    superseded,
    superseded_by,
    topic_words,
    what_changed,
)
from jiyi.records import Category, MemoryRecord, Scope, SearchHit, SourceRef

T0 = datetime(2026, 3, 1, tzinfo=UTC)


def hit(text: str, days: int, relevance: float = 0.5) -> SearchHit:
    record = MemoryRecord(content=text, scope=Scope("u"), id=text, category=Category.MESSAGE, role="user",
                          created_at=T0 + timedelta(days=days))
    return SearchHit(record, relevance, {}, relevance)


@pytest.mark.parametrize(("text", "changed"), [
    ("kabir and I are done. he basically ghosted me", True),
    ("I sold my violin, I'm learning the cello instead", True),
    ("pepper died last night", True),
    ("we cancelled the Japan trip", True),
    ("I'm not vegan any more", True),
    ("我已经不抽烟了", True),
    ("最近工作太忙，游泳停了", True),
    ("因为我调岗了！从ICU调到门诊了", True),
    ("我们分手了", True),
    ("my manager is retiring and I'm taking over the team", True),
    ("we pulled out of the half marathon, my ankle isn't ready", True),
    ("the concert got postponed to the autumn", True),
    ("we changed the flights to August", True),
    ("I retire in 2030, that's the plan", False),
    ("I go swimming every Saturday", False),
    ("我们分了", True),
    ("老板也分了几个", False),
    ("跑了一圈，走了两个小时", False),
    ("聊了考研、哭、想放弃、家人", False),
    ("我琢磨着以后不开车了，回沈阳开个小饭馆", False),
    ("聊了业绩、被骂、迷茫、要不要辞职", False),
    ("我下个月要搬到朝阳了", True),
    ("脚好得差不多了，但医生说一个月内别打球", False),
    ("阿彤又半夜打电话，真的受不了了", False),
    ("我不想干了", True),
    ("I'm thinking about quitting my job", False),
    ("I almost gave up on the course", False),
    ("I might have to cancel the trip", False),
    ("My cello teacher is a retired symphony player", False),
    ("Pam's going to come up here in May instead", True),
    ("我每周六都去游泳", False),
    ("my sister is visiting next week", False),
    ("My veena teacher has shifted to Bangalore, her husband got transfer", True),
    ("I shifted the couch a bit to make room", False),
    # not a change: the talk ends, a conjunction, an idiom, a preposition of place
    ("好啦不说了 我妈喊我吃饭", False),
    ("不跟你聊了 我去洗澡", False),
    ("我俩不说话了", True),
    ("天气不好 不过下山吃了一碗面 值得了", False),
    ("不过我现在不抽烟了", True),
    ("the shoot ran late and I ended up sleeping at the studio", False),
    ("we ended it last week", True),
    ("spent the morning fishing off the pier", False),
    ("I've been off sugar for a month", True),
])
def test_words_of_change(text: str, changed: bool) -> None:
    assert says_it_changed(text) is changed


@pytest.mark.parametrize("text", ["我们的婚礼推迟到明年春天了", "复查改期了，下周三再去",
                                  "目标院校改了，专业还是计算机", "we pushed the wedding to June",
                                  "ROM confirmed new date 20 march"])
def test_a_moved_plan_is_a_weaker_sign_of_change(text: str) -> None:
    assert says_it_moved(text) and not says_it_changed(text)


def test_a_moved_plan_leaves_the_rest_of_the_older_memory_for_questions_about_the_rest() -> None:
    hits = [hit("我目标院校是浙大，专业选计算机", 0), hit("目标院校改了，换成南大", 30)]
    assert superseded(hits, "我考研报的哪个学校", never_common, near=far) == {hits[0].record.id}
    assert superseded(hits, "我想学什么专业", never_common, near=far) == set()


def test_people_are_told_apart_by_relation_and_by_name() -> None:
    brother, sister = people_in("My brother Theo just moved to Denver"), people_in("my sister Dana lives in Lisbon")
    assert brother.relations == {"brother_of"} and brother.names == {"theo"} and other_people(brother, sister)
    assert not other_people(brother, people_in("Theo's sister Dana lives in Lisbon"))
    # one person said in other words: 我妈 / 妈妈, "mom" / "mother"
    assert not other_people(people_in("我妈搬到北京了"), people_in("妈妈住在上海"))
    assert not other_people(people_in("my mom moved out"), people_in("my mother lives in Leeds"))
    # a relation and a name may be one person; a place is not a name
    assert not other_people(people_in("my boyfriend and I are done"), people_in("I met Kabir in May"))
    assert not people_in("I moved to Denver").names


def test_a_change_to_one_persons_life_changes_nothing_of_anothers() -> None:
    hits = [hit("User's sister Dana lives in Lisbon and teaches English there.", 0),
            hit("My brother Theo just moved to Denver for a job at a brewery.", 10)]
    assert superseded(hits, "Which city is my sis living in these days?", never_common, lexicon().joins) == set()
    hits = [hit("User adopted a greyhound named Biscuit last spring.", 0),
            hit("My cello teacher is a retired symphony player named Mrs. Okafor.", 10)]
    assert superseded(hits, "what did I name my dog?", never_common) == set()


def test_people_are_those_a_change_is_said_of() -> None:
    assert changed_people("My brother Theo just moved to Denver").relations == {"brother_of"}
    assert not changed_people("jess officially moved out sunday to live w her boyfriend").relations
    hits = [hit("User's roommate jess made pad see ew last night", 0),
            hit("it's just me now, jess officially moved out sunday to live w her boyfriend", 10)]
    assert superseded(hits, "do i have a roommate right now?", never_common) == {hits[0].record.id}
    hits = [hit("大学室友 最铁的闺蜜 她五月份结婚 喊我当伴娘", 0),
            hit("对了她婚期改了 推到十月一号了 男方那边奶奶要做手术 我伴娘还是当", 20)]
    assert superseded(hits, "佳佳哪天办婚礼来着", never_common, near=far) == {hits[0].record.id}


def test_a_person_is_the_changed_subject_only_when_the_change_says_nothing_else() -> None:
    assert changed_subject("我表姐婚期改了", never_common) == {"婚期", "改了"}
    assert "表姐" in changed_subject("我表姐走了", never_common)
    hits = [hit("我表姐在银行上班，天天加班", 0), hit("对了我表姐婚期改了 推到十月一号了", 20)]
    assert superseded(hits, "我表姐是做什么的", never_common, near=far) == set()
    assert superseded(hits, "我表姐哪天结婚", never_common, near=far) == set()  # the older one never said the date


def test_the_change_is_what_its_clause_and_the_clauses_beside_it_say() -> None:
    said = "好久没来啦，搬过来两周了，现在住滨江，离新公司骑车十分钟，再也不用挤地铁了"
    assert what_changed(said) == "离新公司骑车十分钟 再也不用挤地铁了"
    assert what_changed("No soda! Thirty days clean. I switched to sparkling water") == (
        "No soda Thirty days clean I switched to sparkling water")


def test_in_chinese_chat_a_space_between_characters_ends_a_clause() -> None:
    assert what_changed("跟你说 我把吉他卖了 现在学架子鼓 邻居快疯了") == "跟你说 我把吉他卖了 现在学架子鼓"


def test_a_message_that_says_one_thing_changed_keeps_the_rest_of_an_older_one() -> None:
    hits = [hit("小雅是我高中同桌，下个月十号结婚，我当伴娘", 0),
            hit("她婚期改了 推迟到国庆 男方家里有事 我伴娘照当", 20)]
    assert superseded(hits, "小雅哪天结婚来着", never_common) == {hits[0].record.id}
    assert superseded(hits, "我跟小雅是怎么认识的", never_common) == set()


def never_common(word: str) -> bool:
    return False


def test_a_newer_change_of_the_same_subject_leaves_the_older_memory_out() -> None:
    hits = [hit("so there's this guy Kabir from college, we talk every night", 0),
            hit("my sister Anya got into medical school", 1),
            hit("bad. kabir and I are done. he ghosted me for 10 days", 20)]
    assert superseded(hits, "am I still talking to kabir?", never_common) == {hits[0].record.id}
    # the older one is what a question about the past asks for
    assert superseded(hits, "what was kabir like before?", never_common) == set()
    # a change said earlier than the memory changes nothing in it
    assert superseded([hits[2], hit("kabir texted me again today, we're talking", 30)], "kabir?", never_common) == set()


def test_a_shared_word_only_in_what_the_change_does_not_say_is_not_the_same_subject() -> None:
    hits = [hit("我妹妹今年高三，马上要高考了，搬过来也想她", 0),
            hit("好久没来啦，搬过来两周了，现在住滨江，离新公司骑车十分钟，再也不用挤地铁了", 10)]
    assert superseded(hits, "我妹现在读几年级啊？", never_common) == set()


def test_traditional_characters_are_read_as_simplified_function_words_and_all() -> None:
    """說 is 说: a function word, not a subject two memories share (a traditional-script user's brother's job was
    marked changed by "跟你說 我咖啡戒了")."""
    change = "跟你說 我咖啡戒了 上週偏頭痛痛到吐 現在改喝無糖烏龍茶"
    older = "她知道啊 但她說是煮給我哥的 他在竹科當工程師"
    assert not changed_subject(what_changed(change), never_common) & topic_words(older, never_common)
    assert people_in("我媽說她要搬家").relations == {"mother_of"}  # 媽 is 妈
    assert same_subject(changed_subject(what_changed("跟你說 我咖啡戒了"), never_common),
                        topic_words("我現在一天要灌三杯咖啡才撐得住", never_common))


def test_common_words_do_not_make_a_subject() -> None:
    hits = [hit("I love my job at the bakery", 0), hit("I quit my job at the hospital", 5)]
    assert superseded(hits, "what's my job?", never_common) == {hits[0].record.id}
    assert superseded(hits, "what's my job?", lambda word: word == "job") == set()


@pytest.mark.parametrize(("question", "before"), [
    ("What did I use to play?", True), ("我以前住哪", True), ("what do I play now?", False), ("我现在住哪", False)])
def test_a_question_about_the_past(question: str, before: bool) -> None:
    assert asks_about_before(question) is before


def test_words_of_when_do_not_make_a_subject() -> None:
    hits = [hit("my doctor put me on iron tablets last month", 0),
            hit("we moved in together last weekend, no more flatmates", 10)]
    assert superseded(hits, "what did the doctor say?", never_common) == set()


def test_a_memory_was_said_when_its_message_was_not_when_its_words_say() -> None:
    booked = MemoryRecord(content="we booked flights for the 10th of July", scope=Scope("u"), role="user",
                          created_at=T0 + timedelta(days=40), event_time=T0 + timedelta(days=130),
                          provenance=[SourceRef("m1", "user", T0)])
    changed = MemoryRecord(content="we rescheduled the flights to May", scope=Scope("u"), role="user",
                           created_at=T0 + timedelta(days=40), event_time=T0 + timedelta(days=70),
                           provenance=[SourceRef("m2", "user", T0 + timedelta(days=20))])
    assert said_at(booked) == T0 and said_at(changed) == T0 + timedelta(days=20)
    hits = [SearchHit(booked, 0.5, {}, 0.5), SearchHit(changed, 0.5, {}, 0.5)]
    assert superseded(hits, "when are we flying?", never_common) == {booked.id}
    # without a dated source, the time its words name stands in
    undated = MemoryRecord(content="x", scope=Scope("u"), created_at=T0, event_time=T0 + timedelta(days=3))
    assert said_at(undated) == T0 + timedelta(days=3)


def far(new: MemoryRecord, old: MemoryRecord) -> bool:
    return False


def test_a_chinese_words_characters_name_its_thing_without_function_characters() -> None:
    assert subject_marks({"戒酒", "白酒"}) == {"戒酒", "白酒", "戒", "酒", "白"}
    assert subject_marks({"一个月", "不吃"}) == {"一个月", "不吃", "吃"}
    assert not subject_marks({"肚子", "干脆"}) & subject_marks({"孩子", "干啥"})


def test_the_question_joins_a_change_and_what_it_changed_said_in_other_words() -> None:
    hits = [hit("晚饭总要配二两白酒，饭后再散步半小时", 0), hit("体检完医生让我把酒戒了，一个多月滴酒没沾", 30)]
    # 白酒 and 酒 are other words (and not close enough in meaning here): only the question says they meet
    assert superseded(hits, "我晚饭还喝白酒吗？", never_common, near=far) == {hits[0].record.id}
    # the older memory still answers what did not change
    assert superseded(hits, "我饭后还散步吗？", never_common, near=far) == set()


def test_asked_how_things_are_now_the_question_may_meet_each_in_a_word_of_its_own() -> None:
    hits = [hit("signed up for the Brighton 10k in June, training starts monday", 0),
            hit("I withdrew from the race, my hamstring needs rest", 40)]
    assert superseded(hits, "am I still doing Brighton? the race, I mean", never_common, near=far) == {
        hits[0].record.id}
    # not asked about now, all three must share the thing
    assert superseded(hits, "what did I sign up for in Brighton? the race, I mean", never_common, near=far) == set()


def test_the_question_finds_a_change_by_the_clause_that_says_it_not_the_clauses_beside_it() -> None:
    hits = [hit("my niece Ada starts school in September", 0),
            hit("no Lisbon this spring. Mum is coming to stay instead. she wants to see Ada start school", 20)]
    assert superseded(hits, "is Ada starting school this year?", never_common, near=far) == set()


def test_what_replaced_a_memory_the_question_asks_about_takes_its_place() -> None:
    old = hit("signed up for the Brighton 10k in June", 0, relevance=0.8)
    other = hit("my knee felt fine on the bike", 10, relevance=0.4)
    change = hit("I withdrew from the race", 40, relevance=0.2)
    hits = [old, other, change]
    gone = superseded_by(hits, "am I still racing Brighton?", never_common, near=far)
    assert gone == {old.record.id: Replacement(change.record.id, asked=True)}
    standing = put_in_place(hits, gone)
    assert [(h.record.id, h.relevance) for h in standing] == [(change.record.id, 0.8), (other.record.id, 0.4)]
    # found for another reason, the change keeps its own place
    assert put_in_place(hits, {old.record.id: Replacement(change.record.id, asked=False)}) == [other, change]


def test_asked_how_things_are_now_the_lexicon_joins_the_question_to_each() -> None:
    hits = [hit("our startup finally shipped the billing page, big party tonight", 0),
            hit("got laid off on friday, the whole team is gone", 30)]
    joins = lexicon().joins
    assert superseded(hits, "where am I working these days?", never_common, joins, far) == {hits[0].record.id}
    # not asked about now, the question's own word must be in both
    assert superseded(hits, "what kind of work do I do?", never_common, joins, far) == set()


def test_a_wait_that_is_over_is_no_change() -> None:
    hits = [hit("用户想养一只猫，但房东不让", 0), hit("房东终于松口了，说可以养猫，但不能养狗", 200)]
    assert not says_it_moved(hits[1].record.content) and not says_it_changed(hits[1].record.content)
    assert superseded(hits, "我一直想要的那个毛茸茸的室友，房东同意了没", never_common) == set()


def test_the_word_facts_use_for_the_user_makes_no_subject() -> None:
    hits = [hit("User loves spicy noodles", 0), hit("User quit the climbing gym", 5)]
    assert superseded(hits, "what food do I love?", never_common) == set()
    hits = [hit("用户很爱吃火锅", 0), hit("用户把健身卡退了 不去了", 5)]
    assert superseded(hits, "我爱吃啥", never_common) == set()


def test_a_function_word_or_a_verb_of_motion_makes_no_subject() -> None:
    # 没 in both, "went" in both: nothing else in common, and the older memory still stands
    hits = [hit("每周六下午跟师兄去体育馆打羽毛球 打两个小时出一身汗 什么烦恼都没了", 0),
            hit("另外告诉你 我三个礼拜没碰咖啡了 现在每天泡绿茶", 10)]
    assert superseded(hits, "我平时有固定运动的习惯吗", never_common) == set()
    hits = [hit("two years sober in april. the crew went out after close and i got a ginger ale and went home", 0),
            hit("pepper died. she'd had a lump for a while and she just went downhill fast", 10)]
    assert superseded(hits, "the crew wants to hit a bar friday, any tips?", never_common) == set()
    # a thing in common still makes one subject
    hits = [hit("我每周六都去游泳", 0), hit("最近工作太忙，游泳停了", 10)]
    assert superseded(hits, "我周末干嘛", never_common) == {hits[0].record.id}
    hits = [hit("pepper has a lump, the vet is worried", 0), hit("pepper died last night", 10)]
    assert superseded(hits, "how is my rat doing?", never_common) == {hits[0].record.id}


def test_the_lexicon_joins_only_through_the_clause_that_says_the_change() -> None:
    def joined(a: str, b: str) -> bool:
        return {a, b} == {"五一", "假期"}

    assert same_subject({"五一", "云南"}, {"假期", "老师"}, joined, said={"五一"})
    assert not same_subject({"五一", "云南"}, {"假期", "老师"}, joined, said={"云南"})
    assert same_subject({"云南"}, {"云南", "老师"}, joined, said=set())  # a word in common needs no join
    hits = [hit("嗯 她在幼儿园当老师 每天被一群小朋友折磨 假期就想去躺平", 0),
            hit("还有五一那个计划变了 不去云南了 小鹿让我跟她回潮汕见她爸妈", 30)]
    assert superseded(hits, "我女朋友干啥工作的", never_common, joined) == set()
    hits = [hit("嗯 她在幼儿园当老师 假期就想去躺平", 0), hit("五一不休了 公司要加班", 30)]
    assert superseded(hits, "我女朋友干啥工作的", never_common, joined) == {hits[0].record.id}


def test_a_clause_that_turns_to_another_subject_borders_the_change() -> None:
    assert what_changed("next march, after our wedding. also i moved out, staying in the new flat") == (
        "also i moved out staying in the new flat")
    assert what_changed("我们去海边了 对了我把吉他卖了 现在学架子鼓") == "对了我把吉他卖了 现在学架子鼓"
    assert what_changed("No soda! Thirty days clean. btw the dog is fine") == "No soda Thirty days clean"


def test_what_a_clause_of_time_names_is_not_what_changed() -> None:
    assert "考试" not in changed_subject("考试那阵停了", never_common)
    assert "烟" in subject_marks(changed_subject("住院那会儿把烟戒了", never_common))
    hits = [hit("四月要考主管护师 书还没看几页", 0), hit("尤克里里好久没碰了 考试那阵停了 现在在练八段锦", 30)]
    assert superseded(hits, "那个职称考试我考了没", never_common, near=far) == set()


def test_words_that_name_no_subject_join_nothing() -> None:
    # particles of the languages mixed into English chat, time of day, a word of praise that goes with anything
    assert topic_words("first week sa makati condo la", never_common) == {"makati", "condo"}
    assert not topic_words("by afternoon it was mad", never_common)
    hits = [hit("first week sa makati condo! bea and i bought matching mugs", 0),
            hit("walking to work now, no more traffic sa EDSA", 30)]
    assert superseded(hits, "what should I bake for bea's birthday?", never_common) == set()
    # 叫 names or bids anyone; Cantonese function characters are function characters
    assert not topic_words("叫 冇 咗", never_common)


def test_the_assistants_name_is_no_subject_two_messages_share() -> None:
    class Frequencies:
        def document_frequencies(self, words):
            return {}, 10

    common = common_words(Frequencies(), ["小雪啊海南不去了"], addressee="小雪")
    assert common("小雪") and not common("海南")
    hits = [hit("小雪 我这冬泳啊 算是告别了 医生说我血压高", 0), hit("小雪啊海南不去了 下礼拜去北京", 30)]
    assert superseded(hits, "我血压咋样", common) == set()
    assert superseded(hits, "我血压咋样", never_common) == {hits[0].record.id}
