from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from jiyi.text import analyze_for_index, query_terms, stem


def test_chinese_is_segmented_and_stop_words_dropped() -> None:
    assert query_terms("我昨晚失眠了吗？") == ["昨晚", "失眠"]
    assert query_terms("你还记得我住在哪里吗") == ["住"]


def test_english_is_lower_cased_without_stop_words() -> None:
    assert query_terms("Where does my SISTER live?") == ["sister", "live"]


def test_full_width_forms_are_folded() -> None:
    assert query_terms("ＧＰＴ４") == ["gpt4"]


def test_index_keeps_cjk_characters_for_substring_matches() -> None:
    indexed = analyze_for_index("我最喜欢吃油焖大虾")
    assert "虾" in indexed.chars.split()
    assert "喜欢" in indexed.terms.split()


def test_words_stemmed_on_many_threads_at_once_stem_as_on_one() -> None:
    words = [f"{root}{ending}" for root in ("walk", "remember", "hike", "travel", "cook", "paint", "run", "swim")
             for ending in ("", "s", "ed", "ing", "ingly", "ement", "ations", "fulness")]
    stem_uncached = stem.__wrapped__  # past the cache: the stemmer itself
    expected = [stem_uncached(w) for w in words]

    def stem_all(_: int) -> list[list[str]]:
        return [[stem_uncached(w) for w in words] for _ in range(20)]

    with ThreadPoolExecutor(8) as pool:
        rounds = [stemmed for result in pool.map(stem_all, range(32)) for stemmed in result]
    assert len(rounds) == 640 and all(stemmed == expected for stemmed in rounds)
