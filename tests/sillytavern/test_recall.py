"""The issue's cases A, B and C in a real SillyTavern: what a user said in one chat is written to jiyi when the chat is
saved, and reaches the LLM as a system message in a later chat with the same character — found by the question, by
the recent context, or by a rewrite when the switch is on."""

from __future__ import annotations

from typing import Any

from tests.sillytavern.browser import StUser
from tests.sillytavern.fake_llm import JIYI_MODEL, ST_MODEL, FakeLLM, system_text
from tests.sillytavern.services import JiyiServer


def _stages(record: dict[str, Any]) -> list[tuple[str, str]]:
    return [(s["stage"], s["outcome"]) for s in record.get("stages", [])]


def _non_system_text(body: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content")) for m in body["messages"] if m.get("role") != "system")


def test_case_a_allergy_said_in_one_chat_reaches_the_llm_in_the_next(alice: StUser, llm: FakeLLM,
                                                                       jiyi: JiyiServer) -> None:
    agent = "xiaolin.png"
    alice.select_character(agent)
    first_chat = alice.new_chat()
    llm.script_chat("好的，我记住了，以后不给你推荐海鲜。")
    alice.send("我海鲜过敏，别给我推荐海鲜", expect_reply="不给你推荐海鲜")

    # The plugin writes the turn when SillyTavern saves the chat; jiyi extracts the fact with its LLM.
    memory = jiyi.wait_for_memory("alice", agent, "海鲜过敏")
    assert memory["memory"] == "用户对海鲜过敏"
    assert memory["user_id"] == "alice" and memory["agent_id"] == agent
    assert memory["run_id"] == first_chat
    assert memory["metadata"]["source"] == "sillytavern"
    assert memory["metadata"]["character_name"] == "小林"
    assert memory["metadata"]["st_turn"].startswith(f"{first_chat}#")

    second_chat = alice.new_chat()
    assert second_chat != first_chat
    mark = llm.mark()
    llm.script_chat("今晚可以吃番茄炒蛋和青菜豆腐汤。")
    alice.send("晚饭推荐什么？", expect_reply="番茄炒蛋")

    requests = llm.chat_requests(mark)
    assert len(requests) == 1
    body = requests[0].body
    assert "用户对海鲜过敏" in system_text(body), body["messages"]
    assert "海鲜" not in _non_system_text(body), "the new chat's history must not carry the allergy itself"
    last = alice.jiyi_last()
    assert last["transport"] == "plugin"
    assert memory["id"] in last["injectedIds"]
    assert not last["degraded"] and not last["error"]


def test_case_b_weak_question_found_by_the_recent_context(alice: StUser, llm: FakeLLM, jiyi: JiyiServer) -> None:
    agent = "ajie.png"
    alice.select_character(agent)
    alice.new_chat()
    llm.script_chat("啊？那今天早点睡吧。")
    alice.send("我昨晚又失眠了", expect_reply="早点睡")
    memory = jiyi.wait_for_memory("alice", agent, "失眠")
    assert memory["memory"] == "用户昨晚失眠了"

    alice.new_chat()
    llm.script_chat("要不要喝点热牛奶？")
    alice.send("昨晚翻来覆去睡不着，今天好困", expect_reply="热牛奶")
    mark = llm.mark()
    llm.script_chat("你看起来没什么精神，是不是还没缓过来？")
    alice.send("你今天有什么不一样？", expect_reply="没什么精神")

    last = alice.jiyi_last()
    assert _stages(last)[:2] == [("question", "miss"), ("context", "hit")], last["stages"]
    assert memory["id"] in last["injectedIds"]
    body = llm.chat_requests(mark)[0].body
    assert "用户昨晚失眠了" in system_text(body), body["messages"]
    assert llm.rewrite_requests(mark) == [], "the rewrite switch is off"


def _chat_about_the_exam(alice: StUser, llm: FakeLLM, jiyi: JiyiServer, agent: str) -> dict[str, Any]:
    """An earlier chat where the user mentions the exam; then a new chat where an oblique question about it comes
    after context that does not name it."""
    alice.select_character(agent)
    alice.new_chat()
    llm.script_chat("加油，我们好好练。")
    alice.send("我下周三要参加钢琴考级", expect_reply="好好练")
    return jiyi.wait_for_memory("alice", agent, "钢琴")


def _oblique_question(alice: StUser, llm: FakeLLM) -> int:
    alice.new_chat()
    llm.script_chat("怎么啦？")
    alice.send("最近心里一直七上八下的", expect_reply="怎么啦")
    mark = llm.mark()
    llm.script_chat("放轻松，你已经准备得很充分了。")
    alice.send("你觉得我能过吗？", expect_reply="放轻松")
    return mark


REWRITTEN = "用户即将参加的钢琴考试准备得怎么样"


def test_case_c_rewrite_off_no_rewrite_call_and_nothing_found(alice: StUser, llm: FakeLLM, jiyi: JiyiServer) -> None:
    agent = "xiaoyu.png"
    memory = _chat_about_the_exam(alice, llm, jiyi, agent)
    alice.set_rewrite(False)
    llm.script_rewrite("你觉得我能过吗", REWRITTEN)
    mark = _oblique_question(alice, llm)

    assert llm.rewrite_requests(mark) == [], "rewrite is off: neither jiyi nor SillyTavern may ask for a rewrite"
    last = alice.jiyi_last()
    assert _stages(last) == [("question", "miss"), ("context", "miss")], last["stages"]
    assert last["injectedIds"] == []
    assert memory["memory"] not in system_text(llm.chat_requests(mark)[0].body)


def test_case_c_rewrite_by_jiyis_llm_finds_the_exam(alice: StUser, llm: FakeLLM, jiyi: JiyiServer) -> None:
    agent = "xiaoyu.png"
    memory = _chat_about_the_exam(alice, llm, jiyi, agent)
    alice.set_rewrite(True, source="jiyi")
    # The prompt textarea counts from the next generation on.
    alice.open_settings()
    custom_prompt = "把用户的问题改写成一句完整的检索句。只输出检索句。"
    alice.page.fill("#jiyi_memory_rewrite_prompt", custom_prompt)
    alice.close_settings()
    assert alice.jiyi_settings()["rewritePrompt"] == custom_prompt
    llm.script_rewrite("你觉得我能过吗", REWRITTEN)
    try:
        mark = _oblique_question(alice, llm)
    finally:
        alice.set_rewrite(False)
        alice.set_jiyi_settings(rewritePrompt="")

    rewrites = llm.rewrite_requests(mark)
    assert len(rewrites) == 1, [r.body for r in rewrites]
    assert rewrites[0].body["model"] == JIYI_MODEL
    assert rewrites[0].body["messages"][0] == {"role": "system", "content": custom_prompt}
    last = alice.jiyi_last()
    assert _stages(last) == [("question", "miss"), ("context", "miss"), ("rewrite", "hit")], last["stages"]
    assert last["stages"][2]["query"] == REWRITTEN
    assert last["injectedIds"] == [memory["id"]]
    assert memory["memory"] in system_text(llm.chat_requests(mark)[0].body)


def test_case_c_rewrite_by_sillytaverns_connection_finds_the_exam(alice: StUser, llm: FakeLLM,
                                                                   jiyi: JiyiServer) -> None:
    agent = "xiaoyu.png"
    memory = _chat_about_the_exam(alice, llm, jiyi, agent)
    alice.set_rewrite(True, source="sillytavern")
    custom_prompt = "Rewrite the user's question into one search query. Output the query only."
    alice.set_jiyi_settings(rewritePrompt=custom_prompt)
    llm.script_rewrite("你觉得我能过吗", REWRITTEN)
    try:
        mark = _oblique_question(alice, llm)
    finally:
        alice.set_rewrite(False, source="jiyi")
        alice.set_jiyi_settings(rewritePrompt="")

    rewrites = llm.rewrite_requests(mark)
    assert len(rewrites) == 1, [r.body for r in rewrites]
    assert rewrites[0].body["model"] == ST_MODEL, "the rewrite must go through SillyTavern's own connection"
    assert custom_prompt in system_text(rewrites[0].body), rewrites[0].body["messages"]
    assert llm.rewrite_requests(mark, model=JIYI_MODEL) == []
    last = alice.jiyi_last()
    assert ("st_rewrite", "done") in _stages(last), last["stages"]
    assert ("rewrite", "hit") in _stages(last), last["stages"]
    assert last["injectedIds"] == [memory["id"]]
    assert memory["memory"] in system_text(llm.chat_requests(mark)[0].body)
