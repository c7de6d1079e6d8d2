from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from jiyi.core.retrieval import (
    LONG_QUERY_TERMS,
    KeywordRelevance,
    _indexed_words,
    inverse_document_frequencies,
    keyword_relevance,
    states_a_constraint,
)
from jiyi.records import MemoryRecord, Scope
from jiyi.text import has_cjk, normalize

WORDS = ["tea", "jesica", "like", "失眠", "上海", "dog"]


@given(st.dictionaries(st.sampled_from(WORDS), st.integers(0, 1000)), st.integers(0, 1000))
def test_idf_is_positive_and_rarer_words_weigh_more(frequencies: dict[str, int], total: int) -> None:
    idf = inverse_document_frequencies(frequencies, total, WORDS)
    assert all(value > 0 for value in idf.values())
    for a in WORDS:
        for b in WORDS:
            if frequencies.get(a, 0) < frequencies.get(b, 0):
                assert idf[a] >= idf[b]


def test_sharing_a_rare_word_counts_more_than_a_common_one() -> None:
    terms = ["like", "jesica"]
    idf = inverse_document_frequencies({"like": 900, "jesica": 2}, 1000, terms)
    common = keyword_relevance(terms, idf, MemoryRecord(content="I like cilantro", scope=Scope("u")))
    rare = keyword_relevance(terms, idf, MemoryRecord(content="Jesica is my sister", scope=Scope("u")))
    both = keyword_relevance(terms, idf, MemoryRecord(content="I like Jesica", scope=Scope("u")))
    assert 0 < common < rare < both == 1.0


def test_chinese_words_match_inside_longer_segments() -> None:
    idf = inverse_document_frequencies({}, 10, ["虾"])
    assert keyword_relevance(["虾"], idf, MemoryRecord(content="我最喜欢吃油焖大虾", scope=Scope("u"))) == 1.0


def test_the_words_of_the_constraint_concepts_say_what_advice_must_respect() -> None:
    for text in ["中午吃火锅，我吃虾会起疹子", "医生说是高血压，盐要少吃", "i sprained my wrist at the gym",
                 "my A1C came back 6.1 so I'm officially prediabetic", "I'm lactose intolerant"]:
        assert states_a_constraint(text), text
    for text in ["今天下班路上好堵", "I love my corgi", "我在奶茶店打工", "we watched a movie last night"]:
        assert not states_a_constraint(text), text


def _reference_relevance(terms: list[str], idf: dict[str, float], content: str) -> float:
    """keyword_relevance as it was written before it worked out the query's side once (KeywordRelevance)."""
    if not terms:
        return 0.0
    text, words = normalize(content), _indexed_words(content)
    weights = [idf.get(t, 1.0) for t in terms]
    found = [w for t, w in zip(terms, weights, strict=True) if t in words or (has_cjk(t) and t in text)]
    of_query = max(sum(found), min(weights)) / sum(weights)
    if len(terms) < LONG_QUERY_TERMS:
        return of_query
    memory_weights = {w: idf.get(w, 1.0) for w in words}
    shared = sum(weight for word, weight in memory_weights.items() if word in set(terms))
    return max(of_query, shared / sum(memory_weights.values()) if memory_weights else 0.0)


_VOCABULARY = ["tea", "jesica", "like", "失眠", "上海", "dog", "海", "cat", "run", "咖啡", "喝", "sister", "猫"]


@given(st.lists(st.sampled_from(_VOCABULARY), max_size=14, unique=True),
       st.dictionaries(st.sampled_from(_VOCABULARY), st.floats(0.01, 9)),
       st.lists(st.lists(st.sampled_from([*_VOCABULARY, "and", "我", "的", "?"]), min_size=1, max_size=9), max_size=6))
def test_a_query_s_relevance_measure_is_keyword_relevance_to_the_bit(terms: list[str], idf: dict[str, float],
                                                                     memories: list[list[str]]) -> None:
    """KeywordRelevance (the read path's: the query's side worked out once) gives what the function always gave,
    short queries and long context queries alike."""
    measure = KeywordRelevance(terms, idf)
    for words in memories:
        content = " ".join(words)
        assert measure(content) == _reference_relevance(terms, idf, content)
        assert keyword_relevance(terms, idf, MemoryRecord(content=content, scope=Scope("u"))) == measure(content)
