"""Two users and two characters never see each other's memories — in what reaches the LLM and in the scopes jiyi
stores — and a group chat keeps each member's memories under its own agent_id with the group in metadata."""

from __future__ import annotations

from typing import Any

from tests.sillytavern.browser import StUser
from tests.sillytavern.conftest import World
from tests.sillytavern.fake_llm import FakeLLM, system_text
from tests.sillytavern.services import JiyiServer

XIAOLIN = "xiaolin.png"  # alice and bob each have a 小林 with this avatar: the agent_id alone does not isolate them
AJIE = "ajie.png"


def _ask(user: StUser, llm: FakeLLM, avatar: str, question: str) -> str:
    """A new chat with `avatar`, one question; the system text of the LLM request for the reply."""
    user.select_character(avatar)
    user.new_chat()
    mark = llm.mark()
    llm.script_chat("嗯，让我想想。")
    user.send(question, expect_reply="让我想想")
    requests = llm.chat_requests(mark)
    assert len(requests) == 1
    return system_text(requests[0].body)


def test_two_users_and_two_characters_never_see_each_others_memories(alice: StUser, bob: StUser, llm: FakeLLM,
                                                                      jiyi: JiyiServer) -> None:
    alice.select_character(XIAOLIN)
    alice.new_chat()
    llm.script_chat("记住啦，下次带你去吃。")
    alice.send("我最爱吃火锅", expect_reply="记住啦")
    bob.select_character(XIAOLIN)
    bob.new_chat()
    llm.script_chat("好的，记住了。")
    bob.send("我住在杭州", expect_reply="记住了")
    hotpot = jiyi.wait_for_memory("alice", XIAOLIN, "火锅")
    hangzhou = jiyi.wait_for_memory("bob", XIAOLIN, "杭州")

    # What jiyi stores: each memory under its own user; nothing of one user in the other's scope.
    alice_memories, bob_memories = jiyi.memories("alice"), jiyi.memories("bob")
    assert {m["user_id"] for m in alice_memories} == {"alice"}
    assert {m["user_id"] for m in bob_memories} == {"bob"}
    assert hotpot["id"] not in {m["id"] for m in bob_memories}
    assert hangzhou["id"] not in {m["id"] for m in alice_memories}
    assert all("火锅" not in m["memory"] and "海鲜" not in m["memory"] for m in bob_memories)

    # What reaches the LLM. Positive controls first, so that the absences below mean something.
    alice_dinner = _ask(alice, llm, XIAOLIN, "晚饭推荐什么？")
    assert "用户最爱吃火锅" in alice_dinner
    bob_home = _ask(bob, llm, XIAOLIN, "你还记得我住在哪个城市吗？")
    assert "用户住在杭州" in bob_home
    assert bob.jiyi_last()["transport"] == "direct", "bob's extension calls jiyi from the browser (CORS)"

    bob_dinner = _ask(bob, llm, XIAOLIN, "晚饭推荐什么？")
    assert "火锅" not in bob_dinner and "海鲜" not in bob_dinner, bob_dinner
    alice_home = _ask(alice, llm, XIAOLIN, "你还记得我住在哪个城市吗？")
    assert "杭州" not in alice_home, alice_home
    # Another character of the same user: 阿杰 never heard about the hotpot (told to 小林).
    ajie_dinner = _ask(alice, llm, AJIE, "晚饭推荐什么？")
    assert "火锅" not in ajie_dinner, ajie_dinner
    assert not [m for m in jiyi.memories("alice", AJIE) if "火锅" in m["memory"]]


def _speaker(body: dict[str, Any]) -> str:
    text = system_text(body)
    if "小林是用户的老朋友" in text:
        return XIAOLIN
    if "阿杰是用户的室友" in text:
        return AJIE
    return "?"


GROUP_REPLIES = {XIAOLIN: "我是小林，我养了一只狗。", AJIE: "我是阿杰，我会弹钢琴。"}


def test_group_chat_keeps_each_members_memories_apart(world: World, alice: StUser, llm: FakeLLM,
                                                      jiyi: JiyiServer) -> None:
    group = world.groups["friends"]
    llm.chat_responder = lambda body: GROUP_REPLIES.get(_speaker(body), "？")
    alice.open_group(group["id"])
    chat_id = alice.chat_id()
    alice.send("我在学吉他", replies=2)
    replies = alice.chat()[-2:]
    assert sorted(m["original_avatar"] for m in replies) == sorted([XIAOLIN, AJIE]), replies

    # Each member's turn is written under its own agent_id: the user's fact for both, each persona for its own.
    dog = jiyi.wait_for_memory("alice", XIAOLIN, "小林养了一只狗")
    piano = jiyi.wait_for_memory("alice", AJIE, "阿杰会弹钢琴")
    guitar = {agent: jiyi.wait_for_memory("alice", agent, "用户在学吉他") for agent in (XIAOLIN, AJIE)}
    for memory in (dog, piano, *guitar.values()):
        assert memory["metadata"]["group_id"] == group["id"], memory
        assert memory["run_id"] == chat_id, memory
    assert not [m for m in jiyi.memories("alice", XIAOLIN) if "钢琴" in m["memory"]]
    assert not [m for m in jiyi.memories("alice", AJIE) if "狗" in m["memory"]]

    # Injection during group generation: each member gets its own memories, not the other's.
    mark = llm.mark()
    alice.send("你们还记得我在学什么乐器吗？", replies=2)
    requests = llm.chat_requests(mark)
    assert sorted(_speaker(r.body) for r in requests) == sorted([XIAOLIN, AJIE]), [r.body for r in requests]
    for request in requests:
        text = system_text(request.body)
        assert "用户在学吉他" in text, (_speaker(request.body), text)
        if _speaker(request.body) == XIAOLIN:
            assert "阿杰会弹钢琴" not in text, text
        else:
            assert "小林养了一只狗" not in text, text
    records = alice.jiyi_history()[-2:]
    assert all(not r["skipped"] and r["injectedIds"] for r in records), records
