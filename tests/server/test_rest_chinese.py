"""Chinese memories over HTTP: short query words (失眠, 上海, 虾) find their memory first among look-alikes."""

from __future__ import annotations

import httpx
import pytest
from rest_helpers import add_all, get_memory, md5, search

TARGETS = {"失眠": "我昨晚又失眠了", "上海": "我住在上海浦东", "虾": "我最喜欢吃油焖大虾"}
# Distractors share characters or topics with the targets (眠, 海, 上, 吃, 住) but not the query word.
DISTRACTORS = [
    "我的睡眠质量一直不错",
    "上周末我去海边玩了",
    "我对海鲜过敏",
    "我最喜欢吃北京烤鸭",
    "我住在杭州西湖边",
    "今天上午开了三个会",
]


@pytest.fixture
def chinese(client: httpx.Client) -> httpx.Client:
    add_all(client, [*DISTRACTORS[:3], *TARGETS.values(), *DISTRACTORS[3:]], user_id="xiaoming")
    add_all(client, list(TARGETS.values()), user_id="xiaohong")  # same texts, other user
    return client


@pytest.mark.parametrize("query", list(TARGETS))
def test_short_chinese_word_finds_its_memory_first(chinese: httpx.Client, query: str) -> None:
    results = search(chinese, query, user_id="xiaoming")
    assert results, query
    assert results[0]["memory"] == TARGETS[query]
    assert results[0]["user_id"] == "xiaoming"
    if len(results) > 1:
        assert results[0]["score"] > results[1]["score"]


@pytest.mark.parametrize("query", list(TARGETS))
def test_short_chinese_word_with_v2_filters(chinese: httpx.Client, query: str) -> None:
    results = search(chinese, query, filters={"user_id": "xiaohong"}, top_k=1)
    assert [r["memory"] for r in results] == [TARGETS[query]]


def test_chinese_text_is_stored_verbatim(chinese: httpx.Client) -> None:
    result = search(chinese, "上海浦东", user_id="xiaoming")[0]
    stored = get_memory(chinese, result["id"])
    assert stored["memory"] == "我住在上海浦东"
    assert stored["hash"] == md5("我住在上海浦东")


def test_chinese_sentence_query_ranks_the_matching_memory_first(chinese: httpx.Client) -> None:
    assert search(chinese, "我晚上睡不着，总是失眠怎么办", user_id="xiaoming")[0]["memory"] == "我昨晚又失眠了"
