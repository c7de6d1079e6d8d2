"""Same slot, newer value (core/slots.py): asked about now, an older memory that a newer one restates, in other words
than a word of change, is left out; memories of other slots, questions about the past and reminders keep theirs."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from jiyi.core.lexicon import lexicon
from jiyi.core.slots import newer_values
from jiyi.core.supersession import put_in_place
from jiyi.records import Category, MemoryRecord, Scope, SearchHit

T0 = datetime(2026, 3, 1, tzinfo=UTC)


def hit(text: str, days: float, relevance: float = 0.5, role: str = "user") -> SearchHit:
    record = MemoryRecord(content=text, scope=Scope("u"), id=text, category=Category.MESSAGE, role=role,
                          created_at=T0 + timedelta(days=days))
    return SearchHit(record, relevance, {}, relevance)


def alike(hits: list[SearchHit]) -> Callable[[MemoryRecord], dict[str, float]]:
    """Every pair equally close: the cosine test passes, the words decide."""
    return lambda record: {h.record.id: 1.0 if h.record.id == record.id else 0.9 for h in hits}


def left_out(hits: list[SearchHit], question: str) -> dict[str, str]:
    words = lexicon()
    gone = newer_values(hits, question, lambda _: False, words.same_concept, words.joins, alike(hits))
    return {old: replacement.by for old, replacement in gone.items()}


FATHER_IN = "手术顺利，我爸目前仍在交大一附院住院观察"
FATHER_HOME = "我爸昨日已回家静养，医生嘱咐每天散步半小时"
KNEE_WAITING = "The left knee is worn through, so I'm on the waiting list for a replacement."
KNEE_DONE = "I'm home. The new knee is in and I'm hobbling about on crutches."


def test_a_newer_value_without_a_word_of_change_replaces_the_older_one() -> None:
    hits = [hit(FATHER_IN, 0, 0.7), hit(FATHER_HOME, 15, 0.4)]
    assert left_out(hits, "我爸现在还在医院吗？") == {FATHER_IN: FATHER_HOME}
    hits = [hit(KNEE_WAITING, 0, 0.7), hit(KNEE_DONE, 45, 0.4)]
    assert left_out(hits, "Am I still waiting to hear about the knee?") == {KNEE_WAITING: KNEE_DONE}


def test_the_newer_one_takes_the_most_relevant_place_of_those_it_restates() -> None:
    hits = [hit("用户跑了52单，衣服能拧出水来", 0, 0.45), hit("也是，疼起来单都没法跑", 14, 0.6),
            hit("当组长以后跑单少了，主要排班跟处理差评", 70, 0.3)]
    words = lexicon()
    gone = newer_values(hits, "我现在一天还跑五十来单不", lambda _: False, words.same_concept, words.joins,
                        alike(hits))
    standing = put_in_place(hits, gone)
    assert [(h.record.content, h.relevance) for h in standing] == [("当组长以后跑单少了，主要排班跟处理差评", 0.6)]


def test_memories_of_another_slot_stay() -> None:
    # What the two share (a drink) is not what the question asks about (orders a day).
    hits = [hit("当组长以后跑单少了，啤酒还是一口没碰", 0), hit("晚上回来吃了顿酸菜鱼，我就喝了瓶可乐", 20)]
    assert left_out(hits, "我现在一天还跑多少单") == {}
    hits = [hit("I work at a bakery on the early shift", 0), hit("My sister just had a baby girl", 30)]
    assert left_out(hits, "where am I working these days?") == {}


def test_only_questions_about_now_and_not_about_the_past_nor_reminders() -> None:
    hits = [hit(FATHER_IN, 0), hit(FATHER_HOME, 15)]
    assert left_out(hits, "我爸住在哪家医院？") == {}
    assert left_out(hits, "我爸之前住在哪家医院，现在呢？") == {}
    knee = [hit(KNEE_WAITING, 0), hit(KNEE_DONE, 45)]
    assert left_out(knee, "do you still remember what's wrong with my knee?") == {}


def test_a_memory_said_of_someone_is_restated_only_by_one_that_names_them() -> None:
    hits = [hit("用户的妈妈最近血压有点高", 0), hit("用户一个爱吃辣的有点难受", 35)]
    assert left_out(hits, "我妈最近身体还好吗？") == {}


def test_not_within_one_conversation_nor_the_assistants_words() -> None:
    assert left_out([hit(FATHER_IN, 0), hit(FATHER_HOME, 0.01)], "我爸现在还在医院吗？") == {}
    assert left_out([hit(FATHER_IN, 0, role="assistant"), hit(FATHER_HOME, 15)], "我爸现在还在医院吗？") == {}


MOTHER_VISITS = "My mother arrives from Kumasi on Thursday. She's staying with us for three months."
MOTHER_STAYS = "My mother has decided not to go back. She'll live with us permanently."
COMMUTE = "我哋住海珠，返公司坐半个钟地铁"
AT_HOME = "好消息！老细批咗我喺屋企做嘢，一个礼拜返一日公司就得，唔使日日坐地铁"


def test_a_question_in_the_present_progressive_asks_how_things_stand() -> None:
    hits = [hit(MOTHER_VISITS, 0, 0.7), hit(MOTHER_STAYS, 40, 0.4)]
    assert left_out(hits, "How long is my mother staying with us?") == {MOTHER_VISITS: MOTHER_STAYS}


def test_now_said_in_cantonese_or_traditional_characters() -> None:
    hits = [hit(COMMUTE, 0, 0.7), hit(AT_HOME, 30, 0.4)]
    assert left_out(hits, "我而家仲使唔使日日坐地铁返工？") == {COMMUTE: AT_HOME}
    assert left_out(hits, "我現在還要天天坐地铁嗎？") == {COMMUTE: AT_HOME}


def test_a_habit_asked_in_the_simple_present_keeps_what_was_said_first() -> None:
    # "what position do i play" is as often answered by the older memory: the newer one says the season stopped.
    hits = [hit("derby was brutal tho, i'm jammer for the B team", 0, 0.7),
            hit("physio says no derby till july at least, so i'm on the bench for the B team", 30, 0.4)]
    assert left_out(hits, "what position do i play in the B team") == {}
    hits = [hit("我基本只看韩剧 国产的看不进去", 0, 0.7), hit("要得 一集 就一集 韩剧看完就睡", 20, 0.4)]
    assert left_out(hits, "我平时是不是爱看韩剧") == {}
