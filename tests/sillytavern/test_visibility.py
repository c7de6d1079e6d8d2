"""What a user sees of jiyi in SillyTavern: a note under each reply listing the memories injected for it (the same ones
the LLM got, saved with the chat), the panel "jiyi Memory" in SillyTavern's language with one-line buttons and a link
to the console page of this user and character, and a reply streamed by the fake server (SillyTavern's default)."""

from __future__ import annotations

import json
import time
from typing import Any

from tests.sillytavern.browser import StUser
from tests.sillytavern.conftest import World, artifacts
from tests.sillytavern.fake_llm import FakeLLM, system_text
from tests.sillytavern.services import JiyiServer

NOTE_AGENT = "xiaozhu.png"
STREAM_AGENT = "ahua.png"


def _saved_chat(world: World, handle: str, chat_id: str, timeout: float = 10) -> list[dict[str, Any]]:
    """The chat file SillyTavern saved (one JSON object a line), once its last message carries jiyi's note."""
    deadline = time.monotonic() + timeout
    while True:
        files = list((world.st.user_dir(handle) / "chats").glob(f"*/{chat_id}.jsonl"))
        lines = [json.loads(line) for line in files[0].read_text().splitlines() if line.strip()] if files else []
        if lines and "jiyi_memory" in (lines[-1].get("extra") or {}):
            return lines
        if time.monotonic() > deadline:
            raise AssertionError(f"the chat {chat_id} was not saved with jiyi's note: {lines[-1:] if lines else files}")
        time.sleep(0.2)


def test_the_note_on_a_reply_lists_the_memories_injected_for_it(world: World, alice: StUser, llm: FakeLLM,
                                                                 jiyi: JiyiServer) -> None:
    allergy = jiyi.add("用户对猫毛过敏", user_id="alice", agent_id=NOTE_AGENT)
    jiyi.add("用户住在杭州西湖边", user_id="alice", agent_id=NOTE_AGENT)
    alice.select_character(NOTE_AGENT)
    chat_id = alice.new_chat()
    assert alice.note() is None, "the greeting got no note: no recall was made for it"
    mark = llm.mark()
    llm.script_chat("你对猫毛过敏，养猫前最好先去医院做个过敏测试。")
    alice.send("我想养一只猫，会不会过敏？", expect_reply="过敏测试")

    injected = alice.jiyi_last()["injected"]
    assert allergy in [m["id"] for m in injected], injected
    sent = system_text(llm.chat_requests(mark)[0].body)
    assert all(m["memory"] in sent for m in injected), "the note must list what the LLM really got"
    note = alice.note()
    assert note is not None
    assert note["kind"] == "used" and note["open"] is False, note  # one collapsed line until opened
    assert note["items"] == [m["memory"] for m in injected]
    assert note["ids"] == [m["id"] for m in injected]
    assert note["links"] == [f"{jiyi.url}/ui/memories/{m['id']}" for m in injected]
    # The browser's language is Chinese (zh-CN) and SillyTavern follows it when no UI language is chosen.
    assert alice.page.evaluate("() => jiyiMemory.language") == "zh"
    assert note["summary"] == f"jiyi：用了 {len(injected)} 条记忆", note["summary"]

    # Saved with the reply (SillyTavern writes message.extra into the chat file), so it is still there after a reload.
    saved = _saved_chat(world, "alice", chat_id)[-1]["extra"]["jiyi_memory"]
    assert [m["id"] for m in saved["memories"]] == note["ids"]

    alice.page.click("#chat .last_mes .jiyi-memory-note summary")
    alice.page.wait_for_timeout(200)
    opened = alice.note()
    assert opened is not None and opened["open"] is True
    shot = alice.screenshot(artifacts() / "note-used.png", "#chat .last_mes")
    assert shot.stat().st_size > 5_000

    alice.reload()
    alice.select_character(NOTE_AGENT)
    assert alice.chat_id() == chat_id
    again = alice.note()
    assert again is not None and again["ids"] == note["ids"], again


def test_a_streamed_reply_comes_through_the_fake_server_and_gets_its_note(alice: StUser, llm: FakeLLM,
                                                                           jiyi: JiyiServer) -> None:
    memory = jiyi.add("用户下个月要去云南旅游", user_id="alice", agent_id=STREAM_AGENT)
    alice.select_character(STREAM_AGENT)
    alice.new_chat()
    alice.set_streaming(True)
    try:
        mark = llm.mark()
        reply = "云南很好玩！记得带防晒霜，大理和丽江都值得去。"
        llm.script_chat(reply)
        turn = alice.send("下个月的旅行要准备什么？", expect_reply="丽江都值得去")
    finally:
        alice.set_streaming(False)

    [request] = llm.chat_requests(mark)
    assert request.body.get("stream") is True, "SillyTavern did not ask for a stream"
    assert turn.reply == reply, "the streamed pieces make the whole reply"
    assert memory in alice.jiyi_last()["injectedIds"]
    note = alice.note()
    assert note is not None and note["kind"] == "used" and memory in note["ids"], note


def _buttons_on_one_line(user: StUser) -> list[str]:
    """The labels of the panel's buttons that wrap onto more than one line."""
    return list(user.page.evaluate("""() => [...document.querySelectorAll('#jiyi_memory_settings .menu_button span')]
        .filter(span => span.offsetParent !== null && span.getClientRects().length !== 1)
        .map(span => span.textContent)"""))


PANEL_TEXTS = {
    "zh-cn": {"title": "jiyi 记忆", "budget": "记忆块长度（字符数）", "enhancement": "查询增强",
              "status": "jiyi 可以访问", "button": "检查连接", "console": "在 jiyi 控制台查看"},
    "en": {"title": "jiyi Memory", "budget": "Memory block length (characters)", "enhancement": "Query enhancement",
           "status": "jiyi is reachable", "button": "Check connection", "console": "Open in jiyi console"},
}


def test_the_panel_speaks_sillytaverns_language_and_links_to_the_console(alice: StUser, jiyi: JiyiServer) -> None:
    agent = "xiaolin.png"
    alice.page.set_viewport_size({"width": 1280, "height": 1900})  # the whole panel in view for the screenshots
    try:
        for locale, texts in PANEL_TEXTS.items():
            alice.set_language(locale)
            assert alice.page.evaluate("() => SillyTavern.getContext().getCurrentLocale()") == locale
            alice.select_character(agent)
            alice.open_settings()
            alice.page.wait_for_function(
                "() => !/…|\\.\\.\\./.test(document.querySelector('#jiyi_memory_status').textContent)")
            panel = alice.page.locator("#jiyi_memory_settings")
            text = panel.inner_text()
            for key in ("title", "budget", "enhancement", "button", "console"):
                assert texts[key] in text, f"{locale}: {texts[key]!r} is not in the panel:\n{text}"
            assert "Mem0" not in text and "Characters (budget)" not in text
            status = alice.page.inner_text("#jiyi_memory_status")
            assert texts["status"] in status, status
            assert _buttons_on_one_line(alice) == [], f"{locale}: wrapped buttons"
            href = alice.page.get_attribute("#jiyi_memory_console", "href") or ""
            assert href == f"{jiyi.url}/ui/users/alice?agent_id={agent}", href
            name = "settings-zh.png" if locale.startswith("zh") else "settings-en.png"
            alice.screenshot(artifacts() / name, "#jiyi_memory_settings")
            alice.close_settings()
    finally:
        alice.set_language(None)
        alice.page.set_viewport_size({"width": 1280, "height": 900})

    # The link opens the console page of alice, narrowed to this character.
    console = alice.context.new_page()
    try:
        response = console.goto(href)
        assert response is not None and response.status == 200, response and response.status
        assert agent in console.content()
        console.screenshot(path=str(artifacts() / "console-from-panel.png"))
    finally:
        console.close()

