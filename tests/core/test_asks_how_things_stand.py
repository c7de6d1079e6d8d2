"""Questions about the present (core/intent.py): words for now in Mandarin, Cantonese, traditional characters and
chat shorthand, and the English present progressive; not the simple present nor the past."""

from __future__ import annotations

import pytest

from jiyi.core.intent import asks_about_now, asks_how_things_stand


@pytest.mark.parametrize("question", [
    "我而家住边度？", "我依家仲有冇养猫", "幫我寫個IG自介 我現在是做什麼工作的？", "我還在學鋼琴嗎",
    "whats my major rn", "where am i working atm?", "what am I reading at the moment?", "我现在住哪",
])
def test_words_for_now(question: str) -> None:
    assert asks_about_now(question)
    assert asks_how_things_stand(question)


@pytest.mark.parametrize("question", [
    "How long is my mother staying with us?", "when are we flying out for the holiday?", "am i seeing anyone",
])
def test_the_present_progressive(question: str) -> None:
    assert not asks_about_now(question)
    assert asks_how_things_stand(question)


@pytest.mark.parametrize("question", [
    "what position do i play in derby", "我平时是不是爱看电视剧", "where did we go in june?",
    "我家那只猫是啥品种来着？", "is my sister a nurse?", "what's the atmosphere like at work",
    "Is morning better for a run?",
])
def test_not_the_simple_present_nor_the_past(question: str) -> None:
    assert not asks_how_things_stand(question)
