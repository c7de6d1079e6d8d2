"""What a companion needs from the offline extractor (no LLM), in Chinese and English:

1. pronouns (她 / 他 / 它, she / he / it, her / his) resolve to the last person or thing the user named;
2. moods live in one slot: the newest mood supersedes the last one, which stays in the history;
3. a state that rules out a routine (can't run for now) ends it: routines have a slot per activity;
4. a thing done again and again is said as events the abstraction can group, and a habit said as a need is a habit;
5. small talk stays out.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta

import pytest

from jiyi import Memory, build_embedder
from jiyi.core import offline
from jiyi.core.abstraction import repeated_activities
from jiyi.core.facts import Candidate, Fact, FactKind
from jiyi.core.messages import ChatMessage
from jiyi.embedders.base import Embedder
from jiyi.records import Event, MemoryRecord, Scope
from jiyi.stores.base import MemoryStore


def extract(text: str, *earlier: str) -> list[Fact]:
    return offline.extract_user_facts([ChatMessage(role="user", content=text)], list(earlier))


def texts(text: str, *earlier: str) -> list[str]:
    return [f.text for f in extract(text, *earlier)]


def decide(fact: Fact, *existing: str) -> tuple[Event, str | None]:
    """The decision on `fact` against existing memories (ids m0, m1, …)."""
    [decision] = offline.decide_offline([fact], [[Candidate(f"m{i}", t, 0.5) for i, t in enumerate(existing)]])
    return decision.event, decision.target_id


def only(text: str, *earlier: str) -> Fact:
    [fact] = extract(text, *earlier)
    return fact


# --- 1. pronouns ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("earlier", "said", "fact"), [
    (["我儿子上个月刚满三岁"], "他最近迷上了恐龙", "用户的儿子最近迷上了恐龙"),
    (["我老婆是护士"], "她下个月要调去急诊科", "用户的老婆下个月要调去急诊科"),
    (["我家的狗叫豆豆"], "它特别怕打雷", "用户家的狗特别怕打雷"),  # 它: a pet
    (["我新买了一辆电动车"], "它一次充电能跑两百公里", "用户的电动车一次充电能跑两百公里"),  # 它: a thing
    (["我妹妹在读大学"], "她的专业是法语", "用户的妹妹的专业是法语"),  # 她的
    (["我养了一只橘猫叫年糕"], "年糕最近掉毛很厉害", "用户的猫年糕最近掉毛很厉害"),  # a pet's name
    (["我爸去年退休了"], "我每个周末都回去陪他下棋", "用户每个周末都回去陪爸爸下棋"),  # 他 as an object
    (["我有个姐姐，还有个弟弟"], "他还在读初中", "用户的弟弟还在读初中"),  # 他: the brother, not the sister
    ([], "我有个哥哥，他在深圳当律师", "用户的哥哥在深圳当律师"),  # within one message
], ids=lambda v: v if isinstance(v, str) else None)
def test_chinese_pronouns_resolve_to_the_last_one_named(earlier: list[str], said: str, fact: str) -> None:
    assert fact in texts(said, *earlier)


@pytest.mark.parametrize(("earlier", "said", "kept"), [
    # 叫《…》 names the play just spoken of; it was "用户的弟弟叫《恋爱的犀牛》", from the brother of a day before.
    (["我弟弟下周结婚，我要当伴郎"], "周末去看了场话剧，叫《恋爱的犀牛》", ["用户周末去看了场话剧，叫《恋爱的犀牛》"]),
    ([], "我新买了一辆车，叫小白", ["用户新买了一辆车，叫小白"]),
    ([], "我有个妹妹，叫小雨", ["用户有个妹妹叫小雨"]),
    (["我有个妹妹"], "叫小雨", ["用户的妹妹叫小雨"]),  # one thought sent as two messages
    ([], "我有个弟弟。叫了外卖", ["用户有个弟弟"]),  # 叫了: calling for, not naming
], ids=lambda v: v if isinstance(v, str) else None)
def test_a_bare_jiao_names_what_the_sentence_spoke_of(earlier: list[str], said: str, kept: list[str]) -> None:
    assert texts(said, *earlier) == kept


@pytest.mark.parametrize(("earlier", "said", "fact"), [
    (["我家的狗叫豆豆"], "豆豆是我最好的朋友", "用户家的狗豆豆是用户最好的朋友"),
    ([], "我妈是我最好的朋友", "用户的妈妈是用户最好的朋友"),
    ([], "我喜欢跑步，现在我每周都跑", "用户每周都跑"),  # the second clause's own 我 is its subject
], ids=lambda v: v if isinstance(v, str) else None)
def test_a_second_wo_in_the_clause_keeps_the_first_as_the_subject(earlier: list[str], said: str, fact: str) -> None:
    """豆豆是我最好的朋友 became 家的狗豆豆是用户最好的朋友: the 我 of 我家的狗 was taken for a carried-over subject."""
    assert fact in texts(said, *earlier)


@pytest.mark.parametrize(("earlier", "said", "fact"), [
    (["My son just turned three."], "He's obsessed with dinosaurs", "User's son is obsessed with dinosaurs"),
    (["My wife is a nurse."], "She's transferring to the ER next month",
     "User's wife is transferring to the ER next month"),
    (["I have a dog called Pepper."], "She's scared of thunderstorms", "User's dog is scared of thunderstorms"),
    (["I just bought a new e-bike."], "It can do 60 miles on one charge",
     "User's e-bike can do 60 miles on one charge"),
    (["My sister is at college."], "Her major is French", "User's sister's major is French"),
    (["I adopted a cat named Mochi."], "Mochi has been sneezing all week",
     "User's cat Mochi has been sneezing all week"),
    (["I have a sister and a brother."], "He's still in middle school", "User's brother is still in middle school"),
    (["My mom has diabetes."], "I'm learning low-sugar recipes for her",
     "User is learning low-sugar recipes for User's mom"),
    ([], "I have an older brother, he works as a lawyer in Boston", "User's brother works as a lawyer in Boston"),
], ids=lambda v: v if isinstance(v, str) else None)
def test_english_pronouns_resolve_to_the_last_one_named(earlier: list[str], said: str, fact: str) -> None:
    assert fact in texts(said, *earlier)


def test_a_resolved_pronoun_makes_a_fact_about_the_relation() -> None:
    fact = only("他最近迷上了恐龙", "我儿子上个月刚满三岁")
    assert (fact.kind, fact.topic) == (FactKind.RELATIONSHIP, "儿子")
    fact = only("He's obsessed with dinosaurs", "My son just turned three.")
    assert (fact.kind, fact.topic) == (FactKind.RELATIONSHIP, "son")


@pytest.mark.parametrize(("earlier", "said"), [
    (["我同事的猫丢了"], "它好可怜"),  # someone else's cat
    (["我闺蜜的男朋友是厨师"], "他做饭特别好吃"),  # her boyfriend, not the user's
    ([], "她今天好像不太开心"),  # nobody named
    (["我家的狗叫豆豆"], "它好可爱啊"),  # an exclamation, not a fact
    (["My friend's cat is missing."], "She's so upset"),
    (["My coworker's husband is a chef."], "He cooks amazing pasta"),
    ([], "He said it's fine"),
    (["I have a dog called Pepper."], "She's so cute!"),
])
def test_pronouns_about_other_peoples_relations_or_nobody_are_not_facts(earlier: list[str], said: str) -> None:
    assert texts(said, *earlier) == []


# --- 2. moods: the newest supersedes, with history ----------------------------------------------------------------


@pytest.mark.parametrize(("said", "words"), [
    ("这阵子一直很焦虑", ["这阵子", "焦虑"]),
    ("面试通过了，终于踏实了", ["面试通过了", "踏实"]),  # what happened is kept with the mood
    ("最近睡得好，心情好多了", ["好多了"]),
    ("I've been really anxious this week", ["anxious", "this week"]),  # the time it was said with
    ("Passed the interview, finally feeling calm", ["calm"]),
    ("The deadline finally passed, feeling way less stressed now", ["The deadline finally passed", "less stressed"]),
])
def test_moods_fill_the_mood_slot(said: str, words: list[str]) -> None:
    moods = [f for f in extract(said) if f.slot == "mood"]
    assert len(moods) == 1 and moods[0].kind is FactKind.STATE
    assert all(w in moods[0].text for w in words), moods[0].text


@pytest.mark.parametrize("said", ["今天好累", "刚才有点烦", "I'm so happy for you!"])
def test_a_passing_mood_of_the_moment_is_not_kept(said: str) -> None:
    assert [f for f in extract(said) if f.slot == "mood"] == []


@pytest.mark.parametrize(("old", "new"), [
    ("用户这阵子一直很焦虑", "面试通过了，终于踏实了"),
    ("User has been really anxious this week", "Passed the interview, finally feeling calm"),
    ("用户最近心情很低落", "我现在好多了"),
])
def test_a_new_mood_updates_the_old_one(old: str, new: str) -> None:
    mood = next(f for f in extract(new) if f.slot == "mood")
    assert decide(mood, "用户住在杭州", old) == (Event.UPDATE, "m1")


# --- 3. a state that rules a routine out ends it -----------------------------------------------------------------


@pytest.mark.parametrize(("said", "slot", "negated"), [
    ("我每周游三次泳", "habit:游泳", False),
    ("最近耳朵发炎了，医生不让我游泳", "habit:游泳", True),
    ("我每天晚上都喝一杯红酒", "habit:酒", False),
    ("最近在吃头孢，暂时不能喝酒", "habit:酒", True),
    ("我现在每天都骑车上班", "habit:骑车", False),
    ("脚踝扭了，这两个月都不能骑车了", "habit:骑车", True),
    ("I swim laps every Tuesday", "habit:swim", False),
    ("Got an ear infection, no swimming until it clears up", "habit:swim", True),
    ("I have a glass of wine every night", "habit:alcohol", False),
    ("I'm on antibiotics so I can't drink for now", "habit:alcohol", True),
    ("I bike to work every day", "habit:cycle", False),
    ("I've stopped cycling for a few weeks", "habit:cycle", True),
])
def test_routines_and_restrictions_share_a_slot_per_activity(said: str, slot: str, negated: bool) -> None:
    [fact] = [f for f in extract(said) if f.slot]
    assert (fact.slot, fact.negated) == (slot, negated), fact


@pytest.mark.parametrize(("routine", "restriction"), [
    ("我每周游三次泳", "最近耳朵发炎了，医生不让我游泳"),
    ("我每天晚上都喝一杯红酒", "最近在吃头孢，暂时不能喝酒"),
    ("I swim laps every Tuesday", "Got an ear infection, no swimming until it clears up"),
    ("I bike to work every day", "Sprained my ankle, so no cycling for a couple of weeks"),
])
def test_a_restriction_updates_the_routine(routine: str, restriction: str) -> None:
    [old] = texts(routine)
    [stop] = [f for f in extract(restriction) if f.negated]
    assert decide(stop, "用户叫小林", old) == (Event.UPDATE, "m1")


def test_a_restriction_does_not_undo_a_liking() -> None:
    """Not allowed to swim for now: the user still likes swimming; only a routine is ended."""
    [stop] = extract("医生不让我游泳")
    assert decide(stop, "用户超喜欢游泳")[0] is Event.ADD
    [stop] = [f for f in extract("Got an ear infection, no swimming until it clears up") if f.negated]
    assert decide(stop, "User loves swimming")[0] is Event.ADD


def test_an_injury_and_what_it_stops_are_one_memory_in_chinese() -> None:
    [fact] = extract("脚踝扭了，这两个月都不能骑车了")
    assert "脚踝" in fact.text and "不能骑车" in fact.text
    assert (fact.slot, fact.negated) == ("habit:骑车", True)
    assert offline.structure_of(fact.text).slot == "habit:骑车"  # read back from the stored text


@pytest.mark.parametrize(("said", "plans", "event"), [
    ("我打算把云南的行程改成去西藏", ["用户下个月要去云南旅游"], Event.UPDATE),
    ("我不去云南了", ["用户周末要去爬山", "用户下个月要去云南旅游"], Event.UPDATE),
    ("Change of plans, I'm going to Portugal instead of Spain", ["User is going to Spain next month"], Event.UPDATE),
    ("婚礼取消了", ["用户十月要办婚礼"], Event.UPDATE),
    ("We had to cancel… no wait, we cancelled the Japan trip", ["User is flying to Japan in May"], Event.UPDATE),
    ("我把周末的健身改到周日了", ["用户周末要去爬山"], Event.ADD),  # another plan of the same weekend
    ("I love Spanish food", ["User is going to Spain next month"], Event.ADD),  # not a change of plan
], ids=lambda v: v if isinstance(v, str) else None)
def test_a_changed_plan_replaces_the_plan_it_names(said: str, plans: list[str], event: Event) -> None:
    decided, target = decide(extract(said)[0], *plans)
    assert decided is event
    if event is Event.UPDATE:
        assert target == f"m{len(plans) - 1}"  # the plan that names what changed


@pytest.mark.parametrize(("said", "kept", "topic"), [
    ("我不去云南了", "用户不再去云南", "云南"),  # was "用户不再云南"
    ("我不再去健身房了", "用户不再去健身房", "健身房"),
    ("我不吃辣了", "用户不再吃辣", "吃辣"),
])
def test_what_the_user_no_longer_does_keeps_its_verb(said: str, kept: str, topic: str) -> None:
    fact = only(said)
    assert (fact.text, fact.topic, fact.negated) == (kept, topic, True)


@pytest.mark.parametrize("said", ["今天的会议取消了", "航班取消了", "We cancelled our subscription",
                                  "They cancelled the gig"])
def test_what_others_call_off_is_not_a_plan_of_the_users(said: str) -> None:
    assert texts(said) == []


# --- 4. again and again: events the abstraction groups, a habit said as a need -------------------------------------


T0 = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)


@pytest.mark.parametrize("said", [
    ["早上在楼下买了杯美式", "今天又买了杯美式", "中午又去买了杯美式"],
    ["Bought an iced latte this morning", "Bought another iced latte today", "Bought an iced latte again"],
])
def test_things_done_again_are_events_the_abstraction_groups(said: list[str]) -> None:
    facts = [only(text) for text in said]
    assert all(f.kind is FactKind.EVENT for f in facts)
    records = [MemoryRecord(content=f.text, scope=Scope("u"), created_at=T0 + timedelta(days=day), tags=["event"])
               for day, f in enumerate(facts)]
    [group] = repeated_activities(records)
    assert len(group.members) == 3


@pytest.mark.parametrize(("said", "slot"), [
    ("冰美式已经成了我每天的续命水", "habit:冰美式"),
    ("我每天都离不开奶茶", "habit:奶茶"),
    ("Matcha has become a daily ritual for me", "habit:matcha"),
    ("I can't get through the morning without an iced latte", "habit:latte"),
])
def test_a_habit_said_as_a_need_is_a_habit(said: str, slot: str) -> None:
    fact = only(said)
    assert (fact.kind, fact.slot) == (FactKind.PREFERENCE, slot)


# --- 5. small talk -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("said", [
    "刚吃完饭，好撑", "地铁又晚点了，烦", "他们家的菜太咸了", "我同事的猫特别可爱，她天天给我发照片",
    "昨天看了个视频，笑死", "老板又开会了", "每天都这么忙吗？", "最近天气好热", "我想吃火锅了", "明天见啦",
    "It's raining again.", "Sounds good to me!", "Made my day lol", "Had fun chatting!",
    "Oh no, the train is late again.",
    "My friend's dog is adorable, he sends me videos every day.", "It was fun.", "No thanks, I'm good.",
    "Ugh, my package got delayed again.",
])
def test_small_talk_makes_no_facts(said: str) -> None:
    assert texts(said) == []


# --- through the write path: UPDATE with history -------------------------------------------------------------------


@pytest.fixture(scope="module")
def e5() -> Embedder:
    return build_embedder("e5")


@pytest.fixture
def memory(store: MemoryStore, e5: Embedder) -> Iterator[Memory]:
    m = Memory(store, e5)
    yield m
    m.close()


OTHERS_ZH = ["我叫小林", "我住在杭州", "我对花生过敏", "我有一个妹妹", "我喜欢爬山", "我在腾讯工作", "我养了一只猫"]
OTHERS_EN = ["My name is Sam.", "I live in Leeds.", "I'm allergic to peanuts.", "I have a sister.", "I love hiking.",
             "I work at Google."]


def said_in_turns(m: Memory, turns: Sequence[str]) -> list[list[dict[str, object]]]:
    return [m.get_event(m.add(text, user_id="u")["event_id"])["results"] for text in turns]


@pytest.mark.parametrize(("others", "before", "after", "gone", "now"), [
    (OTHERS_ZH, "这阵子一直很焦虑", "面试通过了，终于踏实了", "焦虑", "踏实"),
    (OTHERS_EN, "I've been really anxious this week", "Passed the interview, finally feeling calm", "anxious", "calm"),
    (OTHERS_ZH, "我每周游三次泳", "最近耳朵发炎了，医生不让我游泳", "三次", "不让"),
    (OTHERS_EN, "I bike to work every day", "Sprained my ankle, so no cycling for a couple of weeks", "every day",
     "no cycling"),
], ids=["mood-zh", "mood-en", "routine-zh", "routine-en"])
def test_the_write_path_supersedes_with_history(memory: Memory, others: list[str], before: str, after: str,
                                                gone: str, now: str) -> None:
    said_in_turns(memory, others)
    [[old]] = said_in_turns(memory, [before])
    assert old["event"] == "ADD"
    [results] = said_in_turns(memory, [after])
    [update] = [r for r in results if r["event"] == "UPDATE"]
    assert update["id"] == old["id"] and update["previous_memory"] == old["memory"]
    assert now in update["memory"].lower() and gone not in update["memory"]
    history = [(h["event"], h["old_memory"], h["new_memory"]) for h in memory.history(old["id"])]
    assert history == [("ADD", None, old["memory"]), ("UPDATE", old["memory"], update["memory"])]
    kept = [r["memory"] for r in memory.get_all(user_id="u")["results"]]
    assert old["memory"] not in kept and update["memory"] in kept


def test_the_write_path_resolves_her_from_the_last_turn(memory: Memory) -> None:
    said_in_turns(memory, ["我女儿明年上小学"])
    [[fact]] = said_in_turns(memory, ["她特别喜欢画画"])
    assert (fact["event"], fact["memory"]) == ("ADD", "用户的女儿特别喜欢画画")
    said_in_turns(memory, ["My daughter starts first grade next year"])
    [[fact]] = said_in_turns(memory, ["She really loves drawing"])
    assert (fact["event"], fact["memory"]) == ("ADD", "User's daughter really loves drawing")


def test_the_write_path_keeps_small_talk_out(memory: Memory) -> None:
    results = said_in_turns(memory, ["今天天气真好啊", "刚吃完饭，好撑", "Sounds good to me!", "It was fun."])
    assert results == [[], [], [], []]
    assert memory.get_all(user_id="u")["results"] == []


@pytest.mark.parametrize(("said", "facts"), [
    # a clause after an "I" clause that starts with a determiner or a quantifier has no verb to give "I" to
    ("Well, I had a bit of a setback recently - another rejection from a production company.",
     ["User had a bit of a setback recently"]),
    ("Had that performance and it was awesome - so many people there complementing my dance moves.",
     ["User had that performance"]),
    # a dropped subject before a verb is still the speaker's
    ("I went to the gym - finally feeling better", ["User went to the gym", "User is finally feeling better"]),
])
def test_a_clause_without_a_verb_is_not_given_the_speaker_as_subject(said: str, facts: list[str]) -> None:
    assert texts(said) == facts


@pytest.mark.parametrize(("said", "facts"), [
    # An adverb in -ly before the verb is no verb to inflect, nor is "not" / "no longer".
    ("I officially signed up for the half marathon", ["User officially signed up for the half marathon"]),
    ("I barely sleep these days", ["User barely sleeps these days"]),
    ("I no longer care about the promotion", ["User no longer cares about the promotion"]),
    ("I really apply myself at work", ["User really applies themselves at work"]),  # a verb in -ly stays one
    # How sure the user is, said around the clause, is not part of it.
    ("I passed all my exams i think", ["User passed all User's exams"]),
    ("I think I'm allergic to cats", ["User is allergic to cats"]),
    # A fact whose only object is a pronoun nothing resolved says nothing.
    ("I loved it", []),
])
def test_what_the_english_rules_say_is_well_formed(said: str, facts: list[str]) -> None:
    assert [f.text for f in extract(said)] == facts


def test_what_someone_else_makes_the_user_do_is_no_routine_of_theirs() -> None:
    # 天天让我回去…: the sister's urging, said on from her clause, not a habit "用户天天让用户回去…".
    said = [f.text for f in extract("她在老家当牙医，天天让我回去找个稳定工作", "我姐刚微信问我清明回不回烟台")]
    assert not any("让用户" in text for text in said)
    assert [f.text for f in extract("我每天让自己早睡一小时")] != []  # the user's own routine still is one
