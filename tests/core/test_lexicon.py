"""The concept lexicon and English word forms (core/lexicon.py): shipped, and joining what it should."""

from __future__ import annotations

from jiyi.core.lexicon import CONCEPT_CREDIT, Lexicon, build_lexicon, lexicon
from jiyi.core.retrieval import _held, _indexed_words
from jiyi.text import normalize, query_terms


def reached(question: str) -> dict[str, dict[str, float]]:
    return lexicon().reach(question, query_terms(question))


def meets(question: str, memory: str) -> bool:
    """A word of the question is held by the memory through the lexicon (they share none of their own)."""
    terms = query_terms(question)
    assert not set(terms) & set(query_terms(memory))
    words, text = _indexed_words(memory), normalize(memory)
    return any(_held(term, words, text, reached(question)) > 0 for term in terms)


def test_the_shipped_lexicon_is_loaded_and_large() -> None:
    words = lexicon()
    assert len(words.reaches) > 5000 and len(words.cjk_words) > 1000


def test_a_category_word_meets_its_members_and_a_member_its_synonyms() -> None:
    assert meets("What instrument do I play?", "I sold my violin, I'm learning the cello instead")
    assert meets("Any news about my apartment?", "My landlord finally fixed the heating")
    assert meets("我最近身体有什么状况吗？", "压力特别大，老是掉头发")
    assert meets("How's my mum?", "my mother called yesterday")
    assert reached("What instrument do I play?")["instrument"]["cello"] == CONCEPT_CREDIT


def test_a_member_does_not_meet_its_siblings() -> None:
    assert not meets("How's my dad doing?", "My mom is doing great")
    assert "mom" not in reached("What's my dad's job?")["dad"] and "妈" not in reached("我爸是做什么的")["我爸"]


def test_english_word_forms_meet_at_full_credit() -> None:
    assert reached("what did my children eat")["eat"]["ate"] == 1.0
    assert meets("what did my children eat", "my child ate all the pasta")


def test_one_chinese_character_is_held_only_as_a_word_of_its_own() -> None:
    assert Lexicon.holds("烟", ["没", "碰", "烟"], normalize("没碰烟了"))
    assert not Lexicon.holds("烟", ["烟雾", "报警器"], normalize("烟雾报警器又响了"))
    assert Lexicon.holds("掉头发", ["老是", "掉", "头发"], normalize("老是掉头发"))


def test_heads_reach_members_members_reach_heads_and_their_group_only() -> None:
    words = build_lexicon({"concepts": [{"id": "pet", "heads": {"en": ["pet"], "zh": ["宠物"]}, "members": [
        {"en": ["dog", "puppy"], "zh": ["狗"]}, {"en": ["cat", "kitten"], "zh": ["猫"]}]}]},
        {"groups": [["mouse", "mice"]]})
    assert set(words.reaches["pet"]) == {"宠物", "dog", "puppi", "狗", "cat", "kitten", "猫"}
    assert set(words.reaches["dog"]) == {"puppi", "狗", "pet", "宠物"}
    assert words.reaches["mice"] == {"mous": 1.0}
    assert words.same_concept("dog", "cat") and not words.joins("dog", "cat") and words.joins("dog", "pet")


def test_a_word_set_finds_exactly_what_holds_finds_word_by_word() -> None:
    """WordSet.held_by is Lexicon.holds over a whole set at once (a faster form): they must agree on every memory."""
    from random import Random

    from jiyi.core.lexicon import WordSet

    shipped = lexicon()
    rng = Random(29)
    vocabulary = sorted(shipped.concepts)
    fillers = ["我", "今天", "烟雾报警器", "酒会", "the", "and", "my", "I", "went", "to", "really", "了", "，", "."]
    outcomes = []
    for _ in range(100):
        chosen = rng.sample(vocabulary, 40)
        word_set = WordSet.of(chosen)
        for _ in range(10):
            pieces = [rng.choice(chosen if rng.random() < 0.5 else vocabulary), *rng.sample(fillers, 4)]
            rng.shuffle(pieces)
            memory = (" " if rng.random() < 0.5 else "").join(pieces)
            words, text = _indexed_words(memory), normalize(memory)
            expected = any(Lexicon.holds(word, words, text) for word in chosen)
            assert word_set.held_by(words, text) == expected, (memory, chosen)
            outcomes.append(expected)
    assert 0.2 < sum(outcomes) / len(outcomes) < 0.8  # both answers were put to the test
