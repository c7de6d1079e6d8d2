"""What the closing note reports: the latency the extension adds per turn over 20 turns (its own measurement,
jiyiMemory.history addedMs), and screenshots of a chat and of the settings panel, saved to artifacts/sillytavern/."""

from __future__ import annotations

import json
import math
import statistics

from tests.sillytavern.browser import StUser
from tests.sillytavern.conftest import artifacts
from tests.sillytavern.fake_llm import FakeLLM, system_text
from tests.sillytavern.services import JiyiServer

AGENT = "latency.png"
SEEDED = ["用户在一家游戏公司做策划", "用户每天早上跑步五公里", "用户的妹妹叫小雨，在读大学", "用户不吃香菜",
          "用户喜欢科幻小说，最爱《三体》", "用户下个月要去成都出差", "用户养了一只橘猫叫团子", "用户对花粉过敏",
          "用户周末常去爬山", "用户最近在学日语"]
QUESTIONS = ["早上好，今天有什么安排？", "我今天跑步跑得好累", "推荐一本书给我吧", "晚饭推荐什么？",
             "团子今天又把杯子打翻了", "周末去哪玩比较好？", "我妹妹最近怎么样你还记得吗", "出差要准备什么？",
             "日语好难啊", "春天出门要注意什么？", "今天工作好忙", "给我讲个笑话", "你觉得我该换工作吗", "最近睡得还行",
             "下雨了，心情一般", "明天要开会", "我想学做饭", "有什么好看的电影", "今天吃了火锅", "晚安"]


def _percentile(values: list[float], share: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


def test_latency_the_extension_adds_per_turn(alice: StUser, llm: FakeLLM, jiyi: JiyiServer) -> None:
    for text in SEEDED:
        jiyi.add(text, user_id="alice", agent_id=AGENT)
    alice.select_character(AGENT)
    alice.new_chat()
    llm.chat_responder = lambda body: "好的，我记下了。"
    mark = llm.mark()
    turns = [alice.send(question, expect_reply="我记下了") for question in QUESTIONS]

    records = alice.jiyi_history()[-len(QUESTIONS):]
    assert [r["type"] for r in records] == ["normal"] * len(QUESTIONS)
    assert all(not r["skipped"] and not r["degraded"] and not r["error"] for r in records), records
    assert all(r["transport"] == "plugin" for r in records)
    injected = sum(1 for r in records if r["injectedIds"])
    assert injected >= 5, f"only {injected} of {len(records)} turns got memories: recall is not really exercised"
    requests = llm.chat_requests(mark)
    assert len(requests) == len(records)
    for record, request in zip(records, requests, strict=True):
        if record["block"]:
            assert record["block"] in system_text(request.body)  # what was recalled is what the LLM got

    added = [float(r["addedMs"]) for r in records]
    turn_s = [t.elapsed_s for t in turns]
    deadline_ms = alice.jiyi_settings()["deadlineMs"]
    summary = {
        "turns": len(records), "transport": "plugin", "memories_of_the_character": len(SEEDED),
        "turns_with_memories": injected, "deadline_ms": deadline_ms,
        "added_ms": {"median": round(statistics.median(added), 1), "p95": round(_percentile(added, 0.95), 1),
                     "max": round(max(added), 1), "values": added},
        "turn_s": {"median": round(statistics.median(turn_s), 3), "p95": round(_percentile(turn_s, 0.95), 3)},
    }
    (artifacts() / "latency.json").write_text(json.dumps(summary, ensure_ascii=False, indent=2) + "\n")
    print(f"\nlatency the extension adds per turn over {len(records)} turns: median {summary['added_ms']['median']} ms,"
          f" p95 {summary['added_ms']['p95']} ms (whole turn, click to reply shown: median "
          f"{summary['turn_s']['median']} s)")
    assert summary["added_ms"]["p95"] < deadline_ms


def test_screenshots_of_a_chat_and_of_the_settings_panel(alice: StUser, llm: FakeLLM, jiyi: JiyiServer) -> None:
    agent = "xiaoxue.png"
    alice.select_character(agent)
    alice.new_chat()
    llm.script_chat("好的，我记住了：你对海鲜过敏，以后不给你推荐海鲜。")
    alice.send("我海鲜过敏，别给我推荐海鲜", expect_reply="以后不给你推荐海鲜")
    jiyi.wait_for_memory("alice", agent, "海鲜过敏")
    alice.new_chat()
    llm.script_chat("你对海鲜过敏，那今晚来份番茄炒蛋配青菜豆腐汤吧。")
    alice.send("晚饭推荐什么？", expect_reply="番茄炒蛋")
    assert "用户对海鲜过敏" in alice.jiyi_last().get("block", "")
    chat = alice.screenshot(artifacts() / "chat.png")

    # A tall window, so the whole panel fits in SillyTavern's scrolling extensions drawer.
    alice.page.set_viewport_size({"width": 1280, "height": 1900})
    alice.open_settings()
    panel = alice.page.locator("#jiyi_memory_settings")
    # SillyTavern follows the browser's language (zh-CN here) when no UI language is chosen; so does the panel.
    assert alice.page.evaluate("() => jiyiMemory.language") == "zh"
    assert "jiyi 记忆" in panel.inner_text()
    status = alice.page.inner_text("#jiyi_memory_status")
    assert "服务器插件" in status and "jiyi 可以访问" in status, status
    assert alice.page.input_value("#jiyi_memory_url") == jiyi.url
    # Through the plugin the field shows the plugin's own address, read-only, saying where that is set.
    assert not alice.page.is_editable("#jiyi_memory_url")
    assert "JIYI_URL" in (alice.page.get_attribute("#jiyi_memory_url", "title") or "")
    assert alice.page.input_value("#jiyi_memory_rewrite_prompt").strip(), "the rewrite prompt has a default"
    settings = alice.screenshot(artifacts() / "settings.png", "#jiyi_memory_settings")
    page = alice.screenshot(artifacts() / "settings-page.png")
    alice.close_settings()
    alice.page.set_viewport_size({"width": 1280, "height": 900})
    for path in (chat, settings, page):
        assert path.stat().st_size > 10_000, f"{path} looks empty"
