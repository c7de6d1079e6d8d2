"""Which messages a fact was made of, when its extractor does not say (core/provenance.py)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jiyi.core.provenance import cited_messages, translation_candidates, words_of

README = ["我对海鲜过敏，别给我推荐海鲜", "I moved to Shanghai last spring"]
DESMOND = ["Hi, my name is Desmond.", "I have a sister.", "Her name is Jesica.", "She has a dog."]


@pytest.mark.parametrize(("fact", "said", "expected"), [
    ("用户对海鲜过敏", README, [0]),
    ("User moved to Shanghai", README, [1]),
    ("用户的妹妹叫小美", ["我有个妹妹", "她叫小美"], [0, 1]),  # made of both
    ("Has a sister named Jesica", DESMOND, [1, 2]),
    ("Name is Desmond", DESMOND, [0]),
    ("用户住在杭州", ["我住在杭州", "我住在杭州"], [0]),  # equals: the earliest
    ("User is allergic to seafood", README, []),  # no word in common
])
def test_the_messages_a_fact_is_made_of(fact: str, said: list[str], expected: list[int]) -> None:
    assert cited_messages(fact, said) == expected


def test_the_word_for_the_person_is_not_a_word_of_what_was_said() -> None:
    assert words_of("用户") == frozenset() and words_of("User") == frozenset()
    assert cited_messages("用户喜欢猫", ["用户名忘了", "我喜欢猫"]) == [1]


def test_a_translated_fact_is_looked_for_in_the_other_language() -> None:
    assert translation_candidates("用户搬到了上海", README) == [1]
    assert translation_candidates("User is allergic to seafood", README) == [0]
    assert translation_candidates("User likes fish", ["I love shrimp", "And crab"]) == [0, 1]


TEXT = st.text(st.sampled_from("我对海鲜过敏上海猫 abcdeshanghai"), max_size=12)


@given(TEXT, st.lists(TEXT, max_size=5))
def test_a_cited_message_shares_a_word_and_one_that_does_is_found(fact: str, said: list[str]) -> None:
    cited = cited_messages(fact, said)
    sharing = [i for i, text in enumerate(said) if words_of(text) & words_of(fact)]
    assert cited == sorted(set(cited)) and set(cited) <= set(sharing)
    assert bool(cited) == bool(sharing)
