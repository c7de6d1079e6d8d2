"""Whose words a candidate is, and which speakers a question names (core/speakers.py)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from jiyi.core.speakers import named_in, other_speakers, receives, speaker_of, whose_words, written_as_names
from jiyi.records import Category, MemoryRecord, Scope, SourceRef

SCOPE = Scope("u")
T0 = datetime(2026, 5, 1, tzinfo=UTC)


def said(content: str, *, name: str | None = None, role: str | None = "user",
         category: Category = Category.MESSAGE, sources: int = 1) -> MemoryRecord:
    return MemoryRecord(content=content, scope=SCOPE, id=content, actor_id=name, role=role, category=category,
                        provenance=[SourceRef(f"m{i}", role or "user", T0) for i in range(sources)])


@pytest.mark.parametrize(("record", "speaker"), [
    (said("Caroline: I went to the support group yesterday."), "Caroline"),
    (said("Mary Jane: see you at eight"), "Mary Jane"),
    (said("小雨：周末去爬山了"), "小雨"),
    (said("I painted a lake", name="Seraphina"), "Seraphina"),  # a message's `name` (SillyTavern)
    (said("Caroline: verbatim, stored with infer=False", category=Category.FACT), "Caroline"),
    (said("Favourite food: pizza"), None),  # a "label: value" memory, not a speaker
    (said("Note to self: call the bank"), None),
    (said("10:30 meeting with the bank"), None),
    (said("第12条：我和妈妈去了上海"), None),  # numbered notes and note headings are labels, not speakers
    (said("第三点：别忘了带伞"), None),
    (said("备注：周五交房租"), None),
    (said("地址：上海市徐汇区"), None),
    (said("提醒：明早吃药"), None),
    (said("Item 3: renew the passport"), None),
    (said("Note: the cat is called Mochi"), None),
    (said("Reminder: dentist on Friday"), None),
    (said("Caroline: a fact written by extraction", role=None, category=Category.FACT), None),
    (said("Caroline: a fact from two messages", category=Category.FACT, sources=2), None),
    (said("Caroline: summary of a stretch", category=Category.EPISODE), None),
])
def test_the_speaker_of_a_memory(record: MemoryRecord, speaker: str | None) -> None:
    assert speaker_of(record) == speaker


@pytest.mark.parametrize(("query", "named"), [
    ("What has Melanie painted?", {"Melanie"}),
    ("What did caroline say about the parade?", {"Caroline"}),
    ("Where did Caroline's family go?", {"Caroline"}),
    ("How do Melanie and Caroline describe their journey?", {"Melanie", "Caroline"}),
    ("What did Jonathan buy?", set()),  # "Jon" is not a word of it
    ("小雨周末去哪了", {"小雨"}),
    ("what did I say about my sister", set()),
    ("Melanie, what's my dog called?", set()),  # addressed, not asked about
    ("Hey Melanie, do you remember what I painted?", set()),
    ("Do you remember my dog's name, Melanie?", set()),
    ("小雨，你还记得我家狗叫什么吗", set()),
    ("你还记得我家狗叫什么吗，小雨？", set()),
    ("Melanie, what did Caroline paint?", {"Caroline"}),
    ("Caroline, what did Caroline paint last year?", {"Caroline"}),  # addressed and asked about
])
def test_the_speakers_a_question_names(query: str, named: set[str]) -> None:
    assert named_in(query, ["Melanie", "Caroline", "Jon", "小雨"]) == named


@pytest.mark.parametrize(("query", "speaker", "received"), [
    ("What was Jonah told to do about his knee?", "Jonah", True),
    ("Has Noor been asked to bring anything back?", "Noor", True),
    ("Kwame got invited to the gig", "Kwame", True),
    ("Who offered to lend Kwame a drill?", "Kwame", True),
    ("What did Ben recommend to Dana?", "Dana", True),
    ("What did Ben recommend to Dana?", "Ben", False),
    ("How was Porto explained to Vex?", "Vex", True),
    ("Did anyone offer Hamish a ride home?", "Hamish", True),
    ("How did the others describe Kasia's win?", "Kasia", True),
    ("What has Melanie made this year?", "Melanie", False),  # a perfect tense is hers without "been"
    ("What did Melanie bring to the picnic?", "Melanie", False),
    ("What is Caroline's dog called?", "Caroline", False),
    ("What skills has Nate helped others learn?", "Nate", False),  # others as the object
    ("许航面试前被提醒别穿什么？", "许航", True),
    ("他们给许航买了什么", "许航", True),
    ("大家是怎么劝秦朗的？", "秦朗", True),
    ("许航最近买了什么", "许航", False),
    ("许航帮别人修好了什么", "许航", False),
])
def test_a_speaker_on_the_receiving_end(query: str, speaker: str, received: bool) -> None:
    assert receives(query, speaker) is received


def test_whose_words_leaves_out_the_one_told() -> None:
    assert whose_words("What did Caroline tell Melanie about her kids?", ["Caroline", "Melanie"]) == {"Caroline"}
    assert whose_words("What was Melanie told about the parade?", ["Caroline", "Melanie"]) == set()


def candidates(*records: MemoryRecord) -> dict[str, MemoryRecord]:
    return {r.id: r for r in records}


def test_a_question_naming_one_speaker_sets_the_other_speakers_words_apart() -> None:
    found = candidates(said("Melanie: I painted a horse"), said("Caroline: Wow Melanie, you paint so well"),
                       said("Gina: nice!"), said("the user paints", role=None, category=Category.FACT))
    assert other_speakers("What has Melanie painted?", found) == {"Caroline: Wow Melanie, you paint so well",
                                                                  "Gina: nice!"}


def test_nothing_is_set_apart_when_the_question_names_every_speaker_or_none() -> None:
    found = candidates(said("Melanie: I painted a horse"), said("Caroline: I painted a lake"))
    assert other_speakers("What have Melanie and Caroline painted?", found) == set()
    assert other_speakers("What has been painted?", found) == set()
    assert other_speakers("What was Melanie asked to paint?", found) == set()


def test_nothing_is_set_apart_for_a_transcript() -> None:
    """The context stage searches with the recent conversation: its names are who spoke, not whom it asks about."""
    found = candidates(said("小雨：加油，我们好好练"), said("阿明：我下周三要参加钢琴考级"))
    assert other_speakers("小雨画了什么", found) == {"阿明：我下周三要参加钢琴考级"}
    assert other_speakers("小雨: 你好，我是小雨老师\n阿明: 最近心里七上八下的\nUser question: 你觉得我能过吗？",
                          found) == set()


def test_nothing_is_set_apart_among_one_speakers_words() -> None:
    found = candidates(said("Melanie: I painted a horse"), said("the user paints", role=None, category=Category.FACT))
    assert other_speakers("What has Melanie painted?", found) == set()


def test_searches_over_many_speakers_compile_no_pattern_twice(monkeypatch: pytest.MonkeyPatch) -> None:
    """Patterns made from speakers' names come from a bounded cache of their own: a store with more names than re's
    cache holds (512) once recompiled every pattern on every search (issue 28)."""
    import re._compiler

    names = [f"Kw{chr(97 + i // 26 % 26)}{chr(97 + i % 26)}" for i in range(600)]  # Kwaa, Kwab, …: 600 names
    records = {f"m{i}": said(f"{name}: note {i}") for i, name in enumerate(names)}
    records["m0"] = said("Melanie: I painted a lake")
    query = "What has Melanie painted?"
    assert other_speakers(query, records) == set(records) - {"m0"}  # warm: Melanie's patterns are made once
    compiled = []
    real_compile = re._compiler.compile
    monkeypatch.setattr(re._compiler, "compile", lambda *args: compiled.append(args) or real_compile(*args))
    for i in range(600):  # another user's searches fill re's own cache
        re.search(f"unrelated pattern {i}", "")
    compiled.clear()
    for _ in range(3):
        assert other_speakers(query, records) == set(records) - {"m0"}
    assert compiled == []


def test_a_lowercase_name_is_known_by_how_the_memories_write_it() -> None:
    records = [said("darren and me went to the hawker centre"),
               said("What does Darren think? And did you tell Mum?", role="assistant"),
               said("See you on Monday then. Christmas is close.", role="assistant")]
    assert written_as_names("darren what job ah?", records) == {"darren"}
    # words the memories capitalise only at a sentence's start, or that look like names and are not, are no names
    assert written_as_names("what do you think about monday and christmas?", records) == set()
    assert written_as_names("see you soon", records) == set()
    assert written_as_names("Darren what job ah?", records) == set()  # capitalised: names_someone's part
