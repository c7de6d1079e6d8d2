from __future__ import annotations

from jiyi.text import analyze_for_index, query_terms


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
