"""The concept lexicon and English word forms (core/lexicon.py): shipped, and joining what it should."""

from __future__ import annotations

import itertools
import random

from jiyi.core.lexicon import CONCEPT_CREDIT, Lexicon, build_lexicon, lexicon
from jiyi.core.retrieval import _held, _indexed_words
from jiyi.text import has_cjk, normalize, query_terms


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


def _reference_reach(words: Lexicon, question: str, terms: list[str]) -> dict[str, dict[str, float]]:
    """Lexicon.reach as it was written before it added each (term, word) once and copied a first word's reach whole."""
    found: dict[str, dict[str, float]] = {}

    def add(term: str, word: str) -> None:
        met = found.setdefault(term, {})
        for other, credit in words.reaches[word].items():
            if other != term and met.get(other, 0.0) < credit:
                met[other] = credit

    for term in terms:
        if term in words.reaches:
            add(term, term)
    for first, second in itertools.pairwise(terms):
        if (phrase := f"{first} {second}") in words.reaches:
            add(first, phrase)
            add(second, phrase)
    for word in words.cjk_words_in(normalize(question).replace(" ", "")):
        for term in terms:
            if has_cjk(term) and (term in word or word in term):
                add(term, word)
    return found


def test_reach_is_what_it_always_was_in_its_order() -> None:
    """The words each term meets, their credits and their order (the keyword path searches them in that order)."""
    words = lexicon()
    pick = random.Random(3)
    known = sorted(words.reaches)
    questions = ["猫 医生", "我最近身体有什么状况吗？", "老是掉头发", "What musical instrument do I play?",
                 "医生说我失眠了，晚上睡不着", "my sister's children went to the doctor", "我妈妈的生日是什么时候"]
    questions += [" ".join(pick.choice(known) for _ in range(pick.randint(1, 5))) for _ in range(300)]
    questions += ["".join(pick.choice(words.cjk_words) for _ in range(pick.randint(1, 3))) for _ in range(300)]
    for question in questions:
        terms = query_terms(question)
        found = words.reach(question, terms)
        expected = _reference_reach(words, question, terms)
        assert found == expected and list(found) == list(expected), question
        assert all(list(found[term].items()) == list(expected[term].items()) for term in found), question


def test_a_lexicon_with_credits_of_zero_still_reaches_as_written() -> None:
    """reach() copies a word's reach whole only when every credit is above 0 (build_lexicon makes no other)."""
    words = Lexicon({"a": {"b": 0.0, "c": 0.8}, "c": {"a": 0.8}}, (), {})
    assert words.reach("a c", ["a", "c"]) == _reference_reach(words, "a c", ["a", "c"]) == {"a": {"c": 0.8},
                                                                                          "c": {"a": 0.8}}
