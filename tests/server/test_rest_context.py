"""The seed's acceptance cases (sillytavern-memory-write-and-retrieval.md §6) end to end over REST, on a real jiyi
server with the default embedder (e5) and the offline extractor; the rewrite LLM is jiyi's real OpenAI-compatible
client talking to the fake OpenAI server, both on 127.0.0.1.

A: "我海鲜过敏，别推荐海鲜" on day 1; "晚饭推荐什么？" on day 2 → the allergy is injected.
B: insomnia in the recent conversation, then "你今天有什么不一样？" → found by the context query.
C: the question and the context both miss → with rewrite on, the LLM's rewrite finds it; with rewrite off, no LLM call.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from rest_helpers import ok
from tests.conftest import RunningServer

from jiyi import AsyncMemory, build_embedder, build_store
from jiyi.core import prompts
from jiyi.llms import build_llm
from jiyi.records import utcnow
from jiyi.testing.fake_openai import FakeOpenAI, Reply

SYSTEM = "你是小林，一个温柔体贴的陪伴型助手。"
REWRITE = "结合最近对话：用户昨晚失眠，询问今天状态有何变化"
DAY_1 = [  # what the user said yesterday, one turn each
    "我海鲜过敏，别推荐海鲜",
    "我在一家游戏公司做策划",
    "我养了一只橘猫，叫咪咪",
    "我妹妹叫小雨，在读大学",
    "我周末喜欢去爬山",
    "我昨晚失眠了，一直睡不着",
]


@pytest.fixture
def jiyi(make_server: Callable[..., RunningServer], tmp_path: Path, fake: FakeOpenAI) -> Iterator[httpx.Client]:
    """A server whose memories were written offline yesterday; its LLM (for rewrites) is the fake server."""
    store = build_store(f"sqlite:///{tmp_path / 'context.db'}")
    writer = AsyncMemory(store, build_embedder("e5"))  # no LLM: the offline extractor writes day 1
    yesterday = utcnow() - timedelta(days=1)

    async def day_one() -> None:
        when = yesterday.isoformat()
        for text in DAY_1:
            await writer.add([{"role": "user", "content": text}], user_id="xiaoyu", timestamp=when)
        await writer.add([{"role": "user", "content": "我对花生过敏"}], user_id="other", timestamp=when)

    asyncio.run(day_one())
    writer.write_path.close()
    writer.read_path.close()
    llm = build_llm("openai:fake-rewriter", base_url=fake.base_url, timeout=5.0, max_retries=0)
    server = make_server(AsyncMemory(store, build_embedder("e5"), llm=llm))
    with httpx.Client(base_url=server.url, timeout=30) as client:
        yield client


def context(client: httpx.Client, messages: list[dict[str, Any]], **options: Any) -> dict[str, Any]:
    return ok(client.post("/context", json={"messages": messages, "user_id": "xiaoyu", **options}))


def stage_outcomes(result: dict[str, Any]) -> list[tuple[str, str]]:
    return [(s["stage"], s["outcome"]) for s in result["stages"]]


def test_case_a_the_allergy_comes_with_a_dinner_recommendation(jiyi: httpx.Client, fake: FakeOpenAI) -> None:
    stored = ok(jiyi.get("/memories", params={"user_id": "xiaoyu"}))["results"]
    assert "用户对海鲜过敏" in [m["memory"] for m in stored]  # the offline extractor, in Chinese
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "晚饭推荐什么？"}]
    result = context(jiyi, messages, rewrite=True)
    assert not result["degraded"]
    assert stage_outcomes(result)[0] == ("question", "hit")
    block = result["memory_block"]
    assert block.startswith("Relevant long-term memory:\n- ") and "- 用户对海鲜过敏" in block.splitlines()
    assert "花生" not in block  # another user's allergy
    system = result["messages"][0]
    assert system["role"] == "system" and system["content"] == SYSTEM + "\n\n" + block  # appended, not replaced
    assert result["messages"][1:] == messages[1:]
    assert ["- " + m["memory"] for m in result["memories"]] == block.splitlines()[1:]
    assert fake.chat_requests == []  # the first stage was enough: no rewrite


def test_case_b_a_weak_question_is_answered_by_the_context_query(jiyi: httpx.Client, fake: FakeOpenAI) -> None:
    messages = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "我昨晚失眠了，翻来覆去到三点才睡着"},
        {"role": "assistant", "content": "抱抱你，那今天一定很困吧？中午要不要补个觉？"},
        {"role": "user", "content": "你今天有什么不一样？"},
    ]
    result = context(jiyi, messages, rewrite=True)
    assert stage_outcomes(result) == [("question", "miss"), ("context", "hit")]
    context_stage = result["stages"][1]
    assert "失眠" in context_stage["query"] and context_stage["query"].endswith("User question: 你今天有什么不一样？")
    assert any("失眠" in m["memory"] for m in result["memories"])
    assert "失眠" in result["messages"][0]["content"]
    assert fake.chat_requests == []


OBLIQUE = [
    {"role": "system", "content": SYSTEM},
    {"role": "user", "content": "唉，又是那样，烦死了"},
    {"role": "assistant", "content": "又是那样？发生什么事了呀"},
    {"role": "user", "content": "就老毛病呗，不想多说"},
    {"role": "assistant", "content": "好，那我不多问，陪着你"},
    {"role": "user", "content": "你今天有什么不一样？"},
]


def test_case_c_the_rewrite_finds_what_the_question_and_context_missed(jiyi: httpx.Client,
                                                                       fake: FakeOpenAI) -> None:
    fake.script(Reply(content=f'"{REWRITE}"\n'))  # quoted and with a newline: jiyi cleans it
    result = context(jiyi, OBLIQUE, rewrite=True, user_name="小雨", char_name="小林")
    assert stage_outcomes(result) == [("question", "miss"), ("context", "miss"), ("rewrite", "hit")]
    assert result["stages"][2]["query"] == REWRITE
    assert any("失眠" in m["memory"] for m in result["memories"])
    assert "失眠" in result["messages"][0]["content"]
    [request] = fake.chat_requests
    system, user = request.body["messages"]
    assert system == {"role": "system", "content": prompts.REWRITE}
    payload = json.loads(user["content"])
    assert payload["user_question"] == "你今天有什么不一样？"
    assert payload["user_name"] == "小雨" and payload["char_name"] == "小林"
    assert "老毛病" in payload["recent_conversation"]


def test_case_c_with_rewrite_off_makes_no_llm_call(jiyi: httpx.Client, fake: FakeOpenAI) -> None:
    result = context(jiyi, OBLIQUE, rewrite=False)
    assert stage_outcomes(result) == [("question", "miss"), ("context", "miss"), ("rewrite", "skipped")]
    assert result["memories"] == [] and result["memory_block"] == ""
    assert result["messages"] == OBLIQUE and not result["degraded"]
    assert fake.chat_requests == []


def test_a_custom_rewrite_prompt_is_used(jiyi: httpx.Client, fake: FakeOpenAI) -> None:
    fake.script(REWRITE)
    result = context(jiyi, OBLIQUE, rewrite=True, rewrite_prompt="把问题改写成一句完整的检索语句。")
    assert stage_outcomes(result)[-1] == ("rewrite", "hit")
    assert fake.chat_requests[0].body["messages"][0]["content"] == "把问题改写成一句完整的检索语句。"


def test_a_slow_rewrite_is_abandoned_within_the_deadline(jiyi: httpx.Client, fake: FakeOpenAI) -> None:
    fake.script(Reply(content=REWRITE, delay=5.0))
    result = context(jiyi, OBLIQUE, rewrite=True, deadline_ms=1500)
    assert result["elapsed_ms"] < 1600
    assert stage_outcomes(result)[-1] == ("rewrite", "timeout")
    assert result["messages"] == OBLIQUE and not result["degraded"]  # nothing found is not a failure


def test_a_failing_rewrite_keeps_the_chain_quiet(jiyi: httpx.Client, fake: FakeOpenAI) -> None:
    fake.script(Reply(status=500, error="model overloaded"))
    result = context(jiyi, OBLIQUE, rewrite=True)
    assert stage_outcomes(result)[-1] == ("rewrite", "error")
    assert "500" in result["stages"][-1]["detail"] and result["messages"] == OBLIQUE


def test_a_rewrite_made_by_the_caller_needs_no_llm(jiyi: httpx.Client, fake: FakeOpenAI) -> None:
    result = context(jiyi, OBLIQUE, rewrite=True, rewritten_query=REWRITE)
    assert stage_outcomes(result)[-1] == ("rewrite", "hit")
    assert fake.chat_requests == []


def test_injected_memories_count_as_reviewed(jiyi: httpx.Client) -> None:
    messages = [{"role": "user", "content": "晚饭推荐什么？"}]
    first = context(jiyi, messages)
    allergy = next(m for m in first["memories"] if m["memory"] == "用户对海鲜过敏")
    before = ok(jiyi.get(f"/memories/{allergy['id']}"))["access_count"]
    context(jiyi, messages)
    assert ok(jiyi.get(f"/memories/{allergy['id']}"))["access_count"] == before + 1
