"""The Memory facade with mem0's names and arguments from both generations, sync and async."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jiyi import AsyncMemory, InvalidInput, Memory, NotFound, Scope, build_embedder, build_store


def contents(result: dict) -> list[str]:
    return [item["memory"] for item in result["results"]]


def test_add_accepts_str_dict_and_list(memory: Memory) -> None:
    memory.add("plain string", user_id="u", infer=False)
    memory.add({"role": "user", "content": "one dict"}, user_id="u", infer=False)
    out = memory.add([{"role": "system", "content": "you are kind"}, {"role": "user", "content": "first"},
                      {"role": "assistant", "content": "second", "name": "Xiao"}], user_id="u", infer=False)
    assert [(r["memory"], r["event"], r["role"]) for r in out["results"]] == [
        ("first", "ADD", "user"), ("second", "ADD", "assistant")]
    assert out["results"][1]["actor_id"] == "Xiao"
    assert sorted(contents(memory.get_all(user_id="u"))) == ["first", "one dict", "plain string", "second"]


def test_add_keeps_raw_messages_and_provenance(memory: Memory) -> None:
    said = "2026-01-03T18:00:00+08:00"
    out = memory.add([{"role": "user", "content": "我下周三面试", "id": "D1:3"}], user_id="u", infer=False,
                     timestamp=said)
    item = memory.get(out["results"][0]["id"])
    assert item["event_time"] == datetime.fromisoformat(said).astimezone(UTC).isoformat()
    [ref] = item["provenance"]
    assert ref["external_id"] == "D1:3" and ref["role"] == "user"
    [raw] = memory.store.list_messages(Scope("u"))
    assert raw.id == ref["message_id"] and raw.content == "我下周三面试"


def test_infer_true_stores_the_extracted_fact_not_the_raw_turn(memory: Memory) -> None:
    out = memory.add("I love green tea", user_id="u")
    assert [r["memory"] for r in out["results"]] == ["User loves green tea"]
    assert [m["memory"] for m in memory.get_all(user_id="u")["results"]] == ["User loves green tea"]
    assert [m.content for m in memory.store.list_messages(Scope("u"))] == ["I love green tea"]


@pytest.mark.parametrize("kwargs, message", [
    ({}, "at least one of user_id"),
    ({"user_id": ""}, "user_id must be a non-empty string"),
    ({"user_id": "u", "metadata": ["x"]}, "metadata must be an object"),
    ({"user_id": "u", "timestamp": "soon"}, "not an ISO 8601"),
    ({"user_id": "u", "memory_type": "dream"}, "memory_type must be one of"),
])
def test_add_rejects_bad_arguments(memory: Memory, kwargs: dict, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        memory.add("x", infer=False, **kwargs)


@pytest.mark.parametrize("messages, message", [
    ([], "non-empty"), (42, "non-empty"), ([{"role": "robot", "content": "x"}], "role must be one of"),
    ([{"role": "user"}], "has no content"), (["x"], "must be an object"),
])
def test_add_rejects_bad_messages(memory: Memory, messages: object, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        memory.add(messages, user_id="u", infer=False)


def test_search_v1_and_v2_argument_styles_agree(memory: Memory) -> None:
    for text in ["I am allergic to peanuts", "I live in Shanghai", "My cat is called Mochi"]:
        memory.add(text, user_id="u", infer=False)
    memory.add("I live in Beijing", user_id="other", infer=False)
    v1 = memory.search("where do I live", user_id="u", limit=2)
    v2 = memory.search("where do I live", filters={"user_id": "u"}, top_k=2)
    assert contents(v1) == contents(v2)
    assert contents(v1)[0] == "I live in Shanghai"
    assert "I live in Beijing" not in contents(memory.search("live", user_id="u", top_k=10))
    assert all(0 <= item["score"] <= 1 for item in v1["results"])


def test_search_threshold_explain_and_filters(memory: Memory) -> None:
    memory.add("likes spicy hotpot", user_id="u", metadata={"topic": "food"}, infer=False)
    memory.add("works as a nurse", user_id="u", metadata={"topic": "work"}, infer=False)
    explained = memory.search("spicy hotpot", user_id="u", explain=True)["results"][0]
    assert explained["memory"] == "likes spicy hotpot"
    assert set(explained["score_details"]["paths"]) == {"vector", "keyword"}
    assert contents(memory.search("hotpot", user_id="u", threshold=0.99)) == []
    assert contents(memory.search("nurse", filters={"user_id": "u", "topic": {"in": ["food"]}})) == [
        "likes spicy hotpot"]


@pytest.mark.parametrize("kwargs, message", [
    ({"user_id": "u", "top_k": 0}, "between 1 and"), ({"user_id": "u", "limit": "3"}, "must be an integer"),
    ({"user_id": "u", "threshold": 1.5}, "between 0 and 1"), ({}, "at least one of"),
    ({"user_id": "u", "limit": 2, "top_k": 3}, "once"),
    ({"user_id": "u", "filters": {"x": {"regex": "a"}}}, "unknown operator"),
])
def test_search_rejects_bad_arguments(memory: Memory, kwargs: dict, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        memory.search("q", **kwargs)


def test_update_v1_and_v2_and_history(memory: Memory) -> None:
    mid = memory.add("Has a sister", user_id="u", infer=False)["results"][0]["id"]
    assert memory.update(mid, "Has a sister named Jesica") == {"message": "Memory updated successfully!"}
    memory.update(mid, text="Has a sister named Jesica who lives in Paris", metadata={"k": 1})
    item = memory.get(mid)
    assert item["memory"] == "Has a sister named Jesica who lives in Paris" and item["metadata"] == {"k": 1}
    rows = memory.history(mid)
    assert [(r["event"], r["old_memory"], r["new_memory"]) for r in rows] == [
        ("ADD", None, "Has a sister"),
        ("UPDATE", "Has a sister", "Has a sister named Jesica"),
        ("UPDATE", "Has a sister named Jesica", "Has a sister named Jesica who lives in Paris"),
    ]
    assert contents(memory.search("Paris", user_id="u"))[0].endswith("Paris")
    with pytest.raises(NotFound):
        memory.update("missing", "x")
    with pytest.raises(InvalidInput):
        memory.update(mid, "   ")


def test_expiration_hides_and_update_can_clear_it(memory: Memory) -> None:
    yesterday = (datetime.now(UTC) - timedelta(days=1)).date().isoformat()
    mid = memory.add("coupon code 1234", user_id="u", infer=False, expiration_date=yesterday)["results"][0]["id"]
    assert contents(memory.search("coupon", user_id="u")) == []
    assert contents(memory.search("coupon", user_id="u", show_expired=True)) == ["coupon code 1234"]
    memory.update(mid, expiration_date=None)
    assert contents(memory.search("coupon", user_id="u")) == ["coupon code 1234"]


def test_delete_and_delete_all_are_soft_and_audited(memory: Memory) -> None:
    a = memory.add("keep me", user_id="u", infer=False)["results"][0]["id"]
    b = memory.add("drop me", user_id="u", infer=False)["results"][0]["id"]
    memory.add("other user", user_id="v", infer=False)
    assert memory.delete(b) == {"message": "Memory deleted successfully"}
    with pytest.raises(NotFound):
        memory.get(b)
    assert memory.history(b)[-1]["event"] == "DELETE" and memory.history(b)[-1]["is_deleted"] is True
    memory.delete_all(user_id="u")
    assert memory.get_all(user_id="u")["results"] == []
    assert contents(memory.get_all(user_id="v")) == ["other user"]
    assert memory.history(a)[-1]["event"] == "DELETE"
    with pytest.raises(InvalidInput):
        memory.delete_all()
    with pytest.raises(NotFound):
        memory.history("never-existed")


def test_reset_keeps_working_afterwards(memory: Memory) -> None:
    memory.add("x", user_id="u", infer=False)
    assert memory.reset() == {"message": "All memories reset"}
    assert memory.get_all(user_id="u")["results"] == []
    memory.add("after reset", user_id="u", infer=False)
    assert contents(memory.search("reset", user_id="u")) == ["after reset"]


def test_async_memory_runs_concurrently(amemory: AsyncMemory) -> None:
    async def scenario() -> list[str]:
        await asyncio.gather(*(amemory.add(f"fact number {i}", user_id="u", infer=False) for i in range(20)))
        results = await asyncio.gather(*(amemory.search(f"fact number {i}", user_id="u", top_k=1) for i in range(20)))
        return [r["results"][0]["memory"] for r in results]

    assert asyncio.run(scenario()) == [f"fact number {i}" for i in range(20)]


def test_sync_memory_works_inside_a_running_event_loop(memory: Memory) -> None:
    async def inside() -> dict:
        memory.add("called from async code", user_id="u", infer=False)
        return memory.search("async code", user_id="u")

    assert contents(asyncio.run(inside())) == ["called from async code"]


def test_from_config_jiyi_and_mem0_dicts(tmp_path) -> None:
    ours = Memory.from_config({"store": f"sqlite:///{tmp_path / 'a.db'}", "embedder": "hashing"})
    assert ours.store.url.endswith("a.db") and ours.embedder.model_id.startswith("hashing")
    ours.close()
    mem0 = Memory.from_config({"history_db_path": str(tmp_path / "h.db"), "version": "v1.1",
                               "embedder": {"provider": "jiyi", "config": {"model": "hashing"}},
                               "custom_fact_extraction_prompt": "Extract facts"})
    assert mem0.store.url.endswith("h.db")
    assert mem0.aio.config["custom_fact_extraction_prompt"] == "Extract facts"
    mem0.close()


def test_reopening_with_another_embedder_is_refused(tmp_path) -> None:
    path = f"sqlite:///{tmp_path / 'm.db'}"
    Memory(build_store(path), build_embedder("hashing", dims=64)).close()
    from jiyi import EmbeddingMismatch

    with pytest.raises(EmbeddingMismatch, match="configured embedder"):
        Memory(build_store(path), build_embedder("hashing", dims=128))


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from(["alice", "bob", "carol"]), min_size=1, max_size=12),
       st.sampled_from(["alice", "bob", "carol"]))
def test_one_user_never_sees_another(owners: list[str], reader: str) -> None:
    memory = Memory(build_store("sqlite://:memory:"), build_embedder("hashing"))
    for index, owner in enumerate(owners):
        memory.add(f"{owner} secret number {index} about tea", user_id=owner, infer=False)
    seen = memory.search("secret tea", user_id=reader, top_k=50)["results"] + \
        memory.get_all(user_id=reader)["results"]
    assert all(item["user_id"] == reader and item["memory"].startswith(reader) for item in seen)
    assert len(memory.get_all(user_id=reader)["results"]) == owners.count(reader)
    memory.close()
