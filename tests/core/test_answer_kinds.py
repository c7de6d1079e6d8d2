"""core/answer_kinds.py: the kind of answer a question asks for, and whether a memory holds one."""

from __future__ import annotations

import pytest

from jiyi.core.answer_kinds import WITHOUT_THE_KIND, asked_kind, holds, weight


@pytest.mark.parametrize(("question", "kind"), [
    ("When did I move to Denver?", "time"), ("我一般哪几天去上课来着", "time"), ("我生日是几月几号", "time"),
    ("Where does my sister live?", "place"), ("What's my cat called?", "name"), ("Who do I walk with?", "name"),
    # Chinese names and places carry no mark of their own (剪映, 潮汕): no kind is judged by form.
    ("我老家是哪儿的", None), ("我在哪所大学读的", None), ("我女儿小名叫啥", None), ("那个软件叫啥来着", None),
    ("How many kids do I have?", "number"), ("那辆车花了多少钱", "number"), ("我家住几楼", "number"),
    ("Do I still play the violin?", None), ("我现在还游泳吗", None), ("推荐个好看的综艺呗", None),
    ("我几乎每天都跑步", None),
])
def test_the_question_word_says_what_the_answer_looks_like(question: str, kind: str | None) -> None:
    assert asked_kind(question) == kind


@pytest.mark.parametrize(("kind", "text", "held"), [
    ("time", "每周二四六晚上去", True), ("time", "We met in March 2019", True), ("time", "瑜伽课练得特别带劲", False),
    ("place", "我住在滨江区", True), ("place", "it's a little place on Boundary St", True),
    ("place", "She moved to Denver", True), ("place", "I love spicy food", False),
    ("name", "My friend Saroja comes along", True), ("name", "我女儿小名叫糖糖", True),
    ("name", "User's daughter called this morning", False),  # "called", no name after it
    ("name", "Lou is purring", False),  # a capitalised word that opens a sentence may be any word
    ("number", "三千多买的", True), ("number", "I have 3 rats", True), ("number", "twins, both girls", True),
    ("number", "the vet was kind", False),
])
def test_a_memory_holds_an_answer_of_the_kind_by_its_form(kind: str, text: str, held: bool) -> None:
    assert holds(kind, text) is held


def test_context_puts_a_memory_holding_the_kind_asked_for_first() -> None:
    # /context's order (read_path.merged): "called" matches the question's word, the named cat answers it; a memory
    # that matches far better still leads, and a question asking for no kind keeps the search's order.
    from jiyi.read_path import merged
    from jiyi.records import MemoryRecord, Scope, SearchHit

    def hit(text: str, score: float) -> SearchHit:
        return SearchHit(MemoryRecord(content=text, scope=Scope("u")), score, {}, score)

    called, named = hit("User's daughter called this morning", 0.8), hit("My cat is a tabby named Lou", 0.7)
    assert [h.record.content for h in merged([[called, named]], 5, "What's my cat called?")] == [
        named.record.content, called.record.content]
    assert merged([[called, named]], 5, "Do I have a cat?")[0] is called
    far_better = hit("User's cat called in sick lol", 0.99)
    assert merged([[far_better, named]], 5, "What's my cat called?")[0] is far_better


def test_a_memory_without_the_kind_asked_for_keeps_a_part_of_its_score() -> None:
    assert weight("number", "User is 34 years old") == 1.0
    assert weight("number", "User feels old") == WITHOUT_THE_KIND < 1.0
    assert weight(None, "User feels old") == 1.0  # nothing asked for: nothing weighed
