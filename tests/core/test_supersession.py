"""What a reply must not be told any more (core/supersession.py): words of change, the part of a message that says
it, and which older memories a newer one says have changed."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from jiyi.core.supersession import (
    asks_about_before,
    said_at,
    says_it_changed,
    superseded,
    what_changed,
)
from jiyi.records import Category, MemoryRecord, Scope, SearchHit, SourceRef

T0 = datetime(2026, 3, 1, tzinfo=UTC)


def hit(text: str, days: int) -> SearchHit:
    record = MemoryRecord(content=text, scope=Scope("u"), id=text, category=Category.MESSAGE, role="user",
                          created_at=T0 + timedelta(days=days))
    return SearchHit(record, 0.5, {}, 0.5)


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
    ("我每周六都去游泳", False),
    ("my sister is visiting next week", False),
])
def test_words_of_change(text: str, changed: bool) -> None:
    assert says_it_changed(text) is changed


def test_the_change_is_what_its_clause_and_the_clauses_beside_it_say() -> None:
    said = "好久没来啦，搬过来两周了，现在住滨江，离新公司骑车十分钟，再也不用挤地铁了"
    assert what_changed(said) == "离新公司骑车十分钟 再也不用挤地铁了"
    assert what_changed("No soda! Thirty days clean. I switched to sparkling water") == (
        "No soda Thirty days clean I switched to sparkling water")


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


def test_the_word_facts_use_for_the_user_makes_no_subject() -> None:
    hits = [hit("User loves spicy noodles", 0), hit("User quit the climbing gym", 5)]
    assert superseded(hits, "what food do I love?", never_common) == set()
    hits = [hit("用户很爱吃火锅", 0), hit("用户把健身卡退了 不去了", 5)]
    assert superseded(hits, "我爱吃啥", never_common) == set()
