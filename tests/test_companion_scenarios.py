"""End to end, as a companion app uses jiyi: turns over several days through Memory.add (infer=True, offline), then
the question a user asks. The five kinds of miss from the user trial (issue 13), in wording of our own."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from jiyi import AsyncMemory, Memory, build_embedder, build_store
from jiyi.read_path import ReadSettings

START = datetime(2026, 9, 1, 8, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def e5() -> object:
    return build_embedder("e5")


@pytest.fixture
def memory(tmp_path: Path, e5: object) -> Iterator[Memory]:
    with Memory(_async=AsyncMemory(build_store(f"sqlite:///{tmp_path / 'c.db'}"), e5)) as m:  # type: ignore[arg-type]
        yield m


def say(memory: Memory, *turns: tuple[float, str]) -> None:
    for day, text in turns:
        memory.add(text, user_id="u", timestamp=(START + timedelta(days=day)).isoformat())


def top(memory: Memory, question: str, k: int = 1) -> list[str]:
    return [r["memory"] for r in memory.search(question, user_id="u", top_k=k)["results"]]


def test_a_habit_said_on_several_days_answers_what_i_like(memory: Memory) -> None:
    say(memory, (0, "中午点了一杯美式"), (0, "这周好忙"), (1, "下午又喝了杯美式"), (1, "晚上去超市买了点水果"),
        (3, "美式现在是我每天都离不开的"))
    assert "美式" in top(memory, "我平时爱喝什么")[0]


def test_a_pronoun_is_the_person_named_before(memory: Memory) -> None:
    say(memory, (0, "我儿子下个月满五岁"), (0, "他最近迷上了恐龙"), (2, "周末陪他去了趟博物馆"))
    assert "恐龙" in top(memory, "我儿子喜欢什么")[0]


def test_a_pronoun_is_the_person_named_before_in_english(memory: Memory) -> None:
    say(memory, (0, "My son turns five next month"), (0, "He is obsessed with dinosaurs lately"))
    assert "dinosaur" in top(memory, "What is my son into?")[0]


def test_a_new_state_that_rules_out_a_habit_answers_first(memory: Memory) -> None:
    say(memory, (0, "我每周游泳三次"), (1, "今天吃了顿烤鱼"), (12, "耳朵发炎了，医生说这段时间不能游泳"))
    answer = top(memory, "我现在还游泳吗")[0]
    assert "不能游泳" in answer, answer


def test_a_new_state_that_rules_out_a_habit_answers_first_in_english(memory: Memory) -> None:
    say(memory, (0, "I cycle to work every day"), (8, "Broke my wrist, the doctor says no cycling for six weeks"))
    answer = top(memory, "Do I still cycle to work?")[0]
    assert "no cycling" in answer, answer


def test_the_newest_mood_answers_how_i_have_been(memory: Memory) -> None:
    say(memory, (0, "这周一直加班，特别焦虑"), (0, "周五要交方案"), (6, "方案通过了，现在踏实多了"))
    answer = top(memory, "我最近心情怎么样")[0]
    assert "踏实" in answer, answer


@pytest.mark.parametrize("neighbour_weight", [None, 0.0])
def test_an_answer_given_a_turn_after_the_subject_is_found(tmp_path: Path, e5: object,
                                                           neighbour_weight: float | None) -> None:
    """"What did I make at the workshop downtown?": the bowl is in the turn after the one naming the workshop, and the
    fact extracted from it matches the question only faintly. Said next to the best match, it is lifted
    (neighbour_support) above the other things "I made"; without that, they rank above it. (The message it came from
    is found either way: the workshop's fact, which cites only its own message, does not stand for it.)"""
    settings = ReadSettings.from_config({} if neighbour_weight is None else
                                        {"retrieval": {"neighbour_weight": neighbour_weight}})
    chats = [
        (0, ["I finally signed up for the pottery workshop downtown!", "How exciting! How did the first class go?",
             "Messy, but I loved it. I made a little clay bowl for my mom."]),
        (2, ["I made pancakes for breakfast this morning.", "Yum, with syrup?", "With blueberries, my favourite."]),
        (3, ["Work was long today, we had three meetings.", "That sounds tiring.",
             "I made a new slide deck for the client."]),
        (5, ["My sister visited and we made dumplings together.", "Fun! What filling?",
             "Pork and cabbage, like grandma's."]),
    ]
    store = build_store(f"sqlite:///{tmp_path / 'n.db'}")
    with Memory(_async=AsyncMemory(store, e5, read_settings=settings)) as memory:  # type: ignore[arg-type]
        for day, said in chats:
            turn = [{"role": "user" if i % 2 == 0 else "assistant", "content": text} for i, text in enumerate(said)]
            memory.add(turn, user_id="u", timestamp=(START + timedelta(days=day)).isoformat())
        # (not "pottery": the lexicon joins it to the bowl's "clay", which finds the bowl without its neighbour)
        ranked = top(memory, "What did I make at the workshop downtown?", k=6)
    bowl = next((i for i, text in enumerate(ranked) if text.startswith("User made a little clay bowl")), len(ranked))
    assert (bowl < ranked.index("User made pancakes for breakfast this morning")) == (neighbour_weight is None), ranked


@pytest.mark.parametrize("infer", [True, False])
@pytest.mark.parametrize(("turns", "question", "answer", "compliment"), [
    (["Priya: Morning! Last night I painted the old lighthouse by the harbour.",
      "Tom: Wow Priya, you paint so well, your paintings are always stunning!",
      "Priya: Thanks Tom! What have you been up to?",
      "Tom: Fixed my bike and went for a long ride along the river."],
     "What has Priya painted?", "lighthouse", "stunning"),
    (["小雨：昨晚我画了海边那座老灯塔。", "阿杰：小雨你画的画真好看，小雨画画越来越厉害了！",
      "小雨：谢谢阿杰！你最近忙啥呢？", "阿杰：修好了自行车，沿着河骑了一大圈。"],
     "小雨画了什么", "灯塔", "好看"),
])
@pytest.mark.parametrize("other_speaker_weight", [None, 1.0])
def test_a_question_naming_a_speaker_is_answered_by_their_own_words(
        tmp_path: Path, e5: object, infer: bool, turns: list[str], question: str, answer: str, compliment: str,
        other_speaker_weight: float | None) -> None:
    """A chat between two named speakers sent as a plain client sends it (every message role "user", "Name: text"):
    Tom's compliment names Priya and painting as often as her own news does, and scores at least as high on
    similarity alone; the question names Priya, so Tom's words weigh less (core/speakers.py) and her own news comes
    first."""
    settings = ReadSettings.from_config({} if other_speaker_weight is None else
                                        {"retrieval": {"other_speaker_weight": other_speaker_weight}})
    store = build_store(f"sqlite:///{tmp_path / 's.db'}")
    with Memory(_async=AsyncMemory(store, e5, read_settings=settings)) as memory:  # type: ignore[arg-type]
        for minute, text in enumerate(turns):
            memory.add([{"role": "user", "content": text}], user_id="u", infer=infer,
                       timestamp=(START + timedelta(minutes=minute)).isoformat())
        found = memory.search(question, user_id="u", top_k=4)["results"]
    score = {key: next(r["score"] for r in found if key in r["memory"]) for key in (answer, compliment)}
    if other_speaker_weight is None:
        assert answer in found[0]["memory"] and score[answer] > score[compliment], found
    else:
        assert score[compliment] >= score[answer], found


def injected(memory: Memory, question: str) -> list[str]:
    return [m["memory"] for m in memory.context([{"role": "user", "content": question}], user_id="u")["memories"]]


def test_a_newer_value_said_without_a_word_of_change_is_injected_instead_of_the_older(memory: Memory) -> None:
    say(memory, (0, "手术顺利，我爸目前仍在交大一附院住院观察，我每天下课后去医院陪护"),
        (15, "我爸昨日已回家静养，医生嘱咐低盐低脂，每天散步半小时"))
    memories = injected(memory, "我爸现在还在医院吗？")
    assert any("回家静养" in m for m in memories), memories
    assert not any("住院观察" in m for m in memories), memories


def test_a_newer_value_said_without_a_word_of_change_is_injected_instead_of_the_older_in_english(
        memory: Memory) -> None:
    say(memory, (0, "My dad had his surgery, he is in the hospital for observation for now"),
        (15, "Dad came home yesterday, the doctor says he should walk half an hour a day"))
    memories = injected(memory, "Is my dad still in the hospital?")
    assert any("came home" in m for m in memories), memories
    assert not any("observation" in m for m in memories), memories


def test_memories_of_two_slots_both_stay_asked_about_now(memory: Memory) -> None:
    say(memory, (0, "我每天早上在小区跑步五公里"), (20, "最近报了个吉他班，每周两节课"))
    memories = injected(memory, "我现在还每天跑步吗？")
    assert any("跑步" in m for m in memories), memories
