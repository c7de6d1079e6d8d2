"""The harness itself, before anything of jiyi's: a message typed in SillyTavern reaches the fake LLM as a
non-streaming chat completion, and the LLM's answer is shown as the character's reply."""

from __future__ import annotations

from tests.sillytavern.browser import StUser
from tests.sillytavern.conftest import World
from tests.sillytavern.fake_llm import ST_MODEL, FakeLLM


def test_a_message_reaches_the_llm_and_its_reply_is_shown(world: World, llm: FakeLLM, alice: StUser) -> None:
    alice.select_character("default_Seraphina.png")
    alice.new_chat()
    mark = llm.mark()
    llm.script_chat("你好，旅行者。这是假模型的回答。")

    turn = alice.send("你好，你是谁？", expect_reply="这是假模型的回答")

    requests = llm.chat_requests(mark)
    assert len(requests) == 1, [r.body for r in requests]
    body = requests[0].body
    assert body["model"] == ST_MODEL
    assert not body.get("stream"), "SillyTavern must not stream to the fake LLM (stream_openai false)"
    assert body["messages"][-1] == {"role": "user", "content": "你好，你是谁？"} or \
        body["messages"][-1]["content"].endswith("你好，你是谁？"), body["messages"][-1]
    assert turn.reply == "你好，旅行者。这是假模型的回答。"
    assert alice.chat()[-1]["name"] == "Seraphina"
