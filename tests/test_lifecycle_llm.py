"""The lifecycle's judgement calls made by a real OpenAI-compatible client against the fake LLM server on 127.0.0.1:
reviews that search first, merges, L2/L3 abstraction, and the offline rules standing in when the model fails."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from jiyi import AsyncMemory, Memory, build_embedder, build_store, lifecycle
from jiyi.core import llm_lifecycle
from jiyi.llms.openai import OpenAICompatibleLLM
from jiyi.records import Category, Event, HistoryEvent, utcnow
from jiyi.testing.fake_openai import FakeOpenAI, Reply
from tests.test_lifecycle import SimClock, events, only_id, set_fields


@pytest.fixture
def clock() -> SimClock:
    return SimClock()


@pytest.fixture
def memory(tmp_path: Path, clock: SimClock, fake: FakeOpenAI) -> Iterator[Memory]:
    llm = OpenAICompatibleLLM("fake-chat", base_url=fake.base_url, api_key="sk-test", retry_backoff=0.01,
                              timeout=5.0, max_retries=0)
    with Memory(_async=AsyncMemory(build_store(f"sqlite:///{tmp_path / 'llm-life.db'}"), build_embedder("hashing"),
                                   llm=llm, clock=clock)) as m:
        yield m


def system_prompts(fake: FakeOpenAI) -> list[str]:
    return [r.body["messages"][0]["content"] for r in fake.chat_requests]


def raw(memory: Memory, text: str, **fields: Any) -> str:
    memory_id = only_id(memory.add(text, user_id="u", infer=False))
    set_fields(memory, memory_id, **fields)
    return memory_id


def test_a_promotion_review_may_search_first_then_promotes(memory: Memory, fake: FakeOpenAI) -> None:
    raw(memory, "用户每年夏天都去青岛看海", tags=["preference"])
    mango = raw(memory, "用户最喜欢的水果是芒果", tags=["preference"], importance=2.6)
    fake.script('{"action": "SEARCH", "query": "水果 喜好"}',
                '{"action": "PROMOTE", "reason": "a lasting preference"}')
    stats = memory.maintain(user_id="u")
    assert stats["promoted"] == 1 and stats["llm_calls"] == 1 and stats["llm_failures"] == 0
    assert memory.store.get(mango).category is Category.CORE  # type: ignore[union-attr]
    event, reason = events(memory, mango)[-1]
    assert event == "PROMOTE" and reason is not None
    assert reason.endswith("reviewed: a lasting preference (looked up: 水果 喜好) [LLM]")
    first, second = fake.chat_requests
    assert first.body["messages"][0]["content"].startswith("You look after the long-term memory")
    asked = json.loads(first.body["messages"][1]["content"])
    assert asked["mode"] == "promote" and asked["memory"]["text"] == "用户最喜欢的水果是芒果"
    results = json.loads(second.body["messages"][-1]["content"])
    assert results["query"] == "水果 喜好" and "用户每年夏天都去青岛看海" in results["results"]
    assert "用户最喜欢的水果是芒果" not in results["results"]  # the memory under review is not its own evidence


def test_a_promotion_review_can_delete_and_a_forgetting_review_can_keep(memory: Memory, fake: FakeOpenAI,
                                                                         clock: SimClock) -> None:
    wrong = raw(memory, "用户说自己是外星人", tags=["personal"], importance=2.6)
    faded = raw(memory, "用户在学吉他", tags=["other"], importance=0.6)
    clock.advance(days=40)  # 0.6 x 0.95^~4.7 < 0.5: the forgetting review
    fake.script('{"action": "DELETE", "reason": "a joke, not a fact"}', '{"action": "KEEP", "reason": "still true"}')
    stats = memory.maintain(user_id="u")
    assert stats["reviewed"] == 2 and stats["kept"] == 1 and memory.store.get(wrong) is None
    assert memory.store.get(faded) is not None
    assert events(memory, wrong)[-1][1].endswith("reviewed: a joke, not a fact [LLM]")  # type: ignore[union-attr]
    modes = [json.loads(r.body["messages"][1]["content"])["mode"] for r in fake.chat_requests]
    assert sorted(modes) == ["forget", "promote"]


@pytest.mark.parametrize("failure", [Reply(status=500, error="overloaded"), '{"action": "MAYBE"}',
                                     '{"action": "SEARCH", "query": "a"}'])
def test_a_failing_model_leaves_the_decision_to_the_offline_rules(memory: Memory, fake: FakeOpenAI,
                                                                  failure: Reply | str) -> None:
    mango = raw(memory, "用户最喜欢的水果是芒果", tags=["preference"], importance=2.6)
    fake.responder = lambda body: failure
    stats = memory.maintain(user_id="u")
    assert stats["llm_failures"] == 1 and stats["promoted"] == 1  # offline: a stable preference is promoted
    event, reason = events(memory, mango)[-1]
    assert event == "PROMOTE" and reason is not None and "[LLM]" not in reason


def test_near_duplicates_are_merged_into_the_sentence_the_model_writes(memory: Memory, fake: FakeOpenAI,
                                                                       clock: SimClock) -> None:
    texts = ["User likes green tea", "User likes green tea a lot", "user likes green tea!"]
    ids = [raw(memory, text, tags=["preference"]) for text in texts]
    fake.script('{"memory": "User likes green tea very much"}')
    clock.advance(hours=1)
    stats = memory.maintain(user_id="u")
    assert stats["merged"] == 2 and stats["llm_calls"] == 1
    [kept] = memory.get_all(user_id="u")["results"]
    assert kept["memory"] == "User likes green tea very much" and kept["id"] in ids
    assert [e for e in events(memory, kept["id"]) if e[0] != "ADD"] == [
        ("UPDATE", "3 similar memories merged [LLM]"), ("MERGE", "consolidated 3 similar memories")]
    sent = json.loads(fake.chat_requests[0].body["messages"][1]["content"])["memories"]
    assert sorted(sent) == sorted(texts)
    found = memory.search("green tea very much", user_id="u")["results"]
    assert found[0]["id"] == kept["id"]  # re-embedded with its new text


def test_a_memory_the_user_changes_while_the_model_merges_keeps_the_users_text(
        memory: Memory, fake: FakeOpenAI, clock: SimClock, monkeypatch: pytest.MonkeyPatch) -> None:
    """The user edits the cluster's memories while the model writes their merge: the edits stand, nothing is merged
    or forgotten as merged, and the next pass may merge what is there then."""
    texts = ["User likes green tea", "User likes green tea a lot", "user likes green tea!"]
    ids = [raw(memory, text, tags=["preference"]) for text in texts]
    store = memory.aio.store
    real_merge = llm_lifecycle.merge

    async def merge_while_the_user_edits(*args: Any, **kwargs: Any) -> str:
        written = await real_merge(*args, **kwargs)
        for i, memory_id in enumerate(ids):  # as a PUT from another process lands meanwhile
            record = store.get(memory_id)
            assert record is not None
            text = f"User switched to coffee, cup {i}"
            store.update(record.with_content(text), memory.aio.embedder.embed_documents([text])[0],
                         HistoryEvent(memory_id, Event.UPDATE, record.content, text))
        return written

    monkeypatch.setattr(llm_lifecycle, "merge", merge_while_the_user_edits)
    fake.script('{"memory": "User likes green tea very much"}')
    clock.advance(hours=1)
    stats = memory.maintain(user_id="u")
    assert stats["llm_calls"] == 1 and stats["merged"] == 0
    kept = {m["id"]: m["memory"] for m in memory.get_all(user_id="u")["results"]}
    assert kept == {memory_id: f"User switched to coffee, cup {i}" for i, memory_id in enumerate(ids)}
    assert all(e[0] in ("ADD", "UPDATE") for memory_id in ids for e in events(memory, memory_id))


def test_the_model_abstracts_patterns_to_l2_once(memory: Memory, fake: FakeOpenAI, clock: SimClock) -> None:
    for text in ["用户今天又去楼下买了两杯美式", "用户昨天去楼下买了两杯美式", "用户下午去楼下买了两杯美式"]:
        raw(memory, text, tags=["event"])
        clock.advance(days=2)
    fake.script('{"abstractions": [{"text": "用户喜欢喝美式咖啡", "level": 2, "sources": [1]},'
                ' {"text": "用户是外星人", "level": 3, "sources": [99]}]}')
    stats = memory.maintain(user_id="u")
    live = {m["memory"]: m for m in memory.get_all(user_id="u")["results"]}
    assert "用户经常去楼下买两杯美式" in live and "用户喜欢喝美式咖啡" in live and "用户是外星人" not in live
    l2 = live["用户喜欢喝美式咖啡"]
    assert "level:2" in l2["tags"] and stats["abstracted"] == 2  # the L1 pattern and the L2 preference
    record = memory.store.get(l2["id"])
    assert record is not None and record.compression_source_ids == [live["用户经常去楼下买两杯美式"]["id"]]
    assert events(memory, l2["id"]) == [("ADD", "L2 abstraction of 1 memories [LLM]")]
    shown = json.loads(fake.chat_requests[-1].body["messages"][1]["content"])["memories"]
    assert {"id": 1, "text": "用户经常去楼下买两杯美式", "level": 1} in shown
    calls = len(fake.chat_requests)
    clock.advance(days=1)
    memory.maintain(user_id="u")
    assert len(fake.chat_requests) == calls  # nothing new to abstract: the model is not asked again


def test_a_pass_slower_than_its_lease_keeps_its_user_from_other_passes(memory: Memory, fake: FakeOpenAI,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lifecycle, "MAINTAIN_LEASE", 0.6)  # seconds; the pass renews it while it runs
    mango = raw(memory, "用户最喜欢的水果是芒果", tags=["preference"], importance=2.6)
    fake.script(Reply('{"action": "PROMOTE", "reason": "a lasting preference"}', delay=2.0))  # a slow review
    results: list[dict[str, Any]] = []
    passing = threading.Thread(target=lambda: results.append(memory.maintain(user_id="u")), daemon=True)
    passing.start()
    deadline = time.monotonic() + 10
    while not fake.chat_requests and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(1.2)  # two of its leases
    later = utcnow() + timedelta(minutes=1)
    taken_meanwhile = memory.store.try_lock("maintain:user_id=u", "another process", later)
    passing.join(10)
    assert not taken_meanwhile  # the pass still held its user
    assert results and results[0]["promoted"] == 1 and results[0]["llm_failures"] == 0
    assert memory.store.get(mango).category is Category.CORE  # type: ignore[union-attr]
    assert memory.store.try_lock("maintain:user_id=u", "another process", later)  # let go when it ended
