"""A swiped-away reply must not stay in memory: the character's persona fact from the discarded reply is gone from jiyi
and from the next reply's memory block, and so are its words kept as evidence; the fact from the reply kept is there,
and the user's message, sent once, is kept once."""

from __future__ import annotations

import time

from tests.sillytavern.browser import StUser
from tests.sillytavern.fake_llm import FakeLLM, system_text
from tests.sillytavern.services import JiyiServer

DISCARDED = "小美最喜欢下雨天"
KEPT = "小美最喜欢晴天"


def test_a_swiped_away_reply_leaves_no_memory(alice: StUser, llm: FakeLLM, jiyi: JiyiServer) -> None:
    agent = "xiaomei.png"
    alice.select_character(agent)
    chat_id = alice.new_chat()
    llm.script_chat("我叫小美，我最喜欢下雨天，可以听雨声。")
    alice.send("你最喜欢什么天气？", expect_reply="下雨天")

    # jiyi keeps the character's own persona fact (agent_id set, an assistant reply).
    rainy = jiyi.wait_for_memory("alice", agent, DISCARDED)
    assert rainy["run_id"] == chat_id and rainy["metadata"]["source"] == "sillytavern"

    llm.script_chat("我叫小美，我最喜欢晴天，可以出去玩。")
    alice.swipe_right(expect_reply="晴天")
    chat = alice.chat()
    assert chat[-1]["swipes"] == 2 and "晴天" in chat[-1]["mes"]

    jiyi.wait_for_memory("alice", agent, KEPT)
    texts = jiyi.wait_gone("alice", agent, DISCARDED)
    assert DISCARDED not in texts and KEPT in texts, texts
    said = jiyi.wait_gone("alice", agent, "可以听雨声", messages=True)  # the discarded reply, word for word
    assert not any("可以听雨声" in text for text in said), said
    # The resent turn's messages are kept as evidence after its facts: wait for its reply to be kept, then count.
    deadline = time.monotonic() + 20
    while not any("可以出去玩" in text for text in said) and time.monotonic() < deadline:
        time.sleep(0.2)
        said = [m["memory"] for m in jiyi.memories("alice", agent, messages=True)]
    assert said.count("你最喜欢什么天气？") == 1, said  # the swipe re-sent it: kept once

    mark = llm.mark()
    llm.script_chat("当然记得。")
    alice.send("你还记得你喜欢什么天气吗？", expect_reply="当然记得")
    block = system_text(llm.chat_requests(mark)[0].body)
    assert KEPT in block, block
    assert DISCARDED not in block, block
    assert rainy["id"] not in alice.jiyi_last()["injectedIds"]

