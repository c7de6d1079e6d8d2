"""jiyi stopped, or hanging (a server that accepts connections and never answers): the reply still arrives, within
the extension's deadline + 1 s of the click on send, for a user going through the plugin (alice) and one calling jiyi
straight from the browser (bob), and the reply carries a note that says why it has no memories, blaming jiyi (down:
unreachable; hanging: a timeout), never the plugin. Then jiyi starts again on the same port: recall works again, and
what was said during the outage is written after all (nothing is lost)."""

from __future__ import annotations

from tests.sillytavern.browser import StUser
from tests.sillytavern.conftest import artifacts
from tests.sillytavern.fake_llm import FakeLLM
from tests.sillytavern.services import HangingServer, JiyiServer

AGENTS = {"alice": "laowang.png", "bob": "xiaolin.png"}


def _assert_problem_note(user: StUser, kind: str) -> None:
    """The reply's note says it got no memories, and why: `kind` names the part that failed."""
    note = user.note()
    assert note is not None and note["kind"] == "problem", note
    assert note["problem"] == kind, f"{user.handle}: the note blames {note['problem']!r}, not {kind!r}"
    assert note["open"] is False
    status = user.page.text_content("#jiyi_memory_status") or ""
    assert "插件没有应答" not in status and "plugin did not answer" not in status, status


def _turn(user: StUser, llm: FakeLLM, text: str, reply: str) -> float:
    llm.script_chat(reply)
    return user.send(text, expect_reply=reply).elapsed_s


def test_replies_arrive_in_time_with_jiyi_stopped_or_hanging(alice: StUser, bob: StUser, llm: FakeLLM,
                                                             jiyi: JiyiServer) -> None:
    users = (alice, bob)
    limit = {}
    for user in users:
        user.select_character(AGENTS[user.handle])
        user.new_chat()
        limit[user.handle] = user.jiyi_settings()["deadlineMs"] / 1000 + 1.0
        baseline = _turn(user, llm, "今天天气不错", "是啊，适合散步。")
        last = user.jiyi_last()
        assert not last["skipped"] and not last["degraded"], last
        print(f"\n{user.handle} ({last['transport']}): baseline turn {baseline:.2f} s")

    jiyi.stop()
    try:
        for user in users:
            elapsed = _turn(user, llm, "我喜欢喝乌龙茶", "乌龙茶不错。")
            last = user.jiyi_last()
            assert last["degraded"] and last["unreachable"] and last["error"], last
            assert elapsed <= limit[user.handle], f"{user.handle}: {elapsed:.2f} s with jiyi stopped"
            assert last["problem"]["kind"] == "unreachable", last["problem"]
            assert last["problem"]["via"] == ("plugin" if user.handle == "alice" else "direct")
            _assert_problem_note(user, "unreachable")
            # A toast says it once, when recall starts failing (SillyTavern shows it at the top of the page).
            toast = user.page.wait_for_selector("#toast-container .toast-warning", timeout=5_000)
            assert toast is not None and "jiyi" in toast.inner_text()
            if user.handle == "alice":
                user.page.click("#chat .last_mes .jiyi-memory-note summary")
                user.page.wait_for_timeout(200)
                user.screenshot(artifacts() / "note-unreachable.png", "#chat .last_mes")
            print(f"{user.handle}: jiyi stopped, turn {elapsed:.2f} s, extension {last['addedMs']} ms: {last['error']}")

        with HangingServer(jiyi.port) as hanging:
            for user in users:
                accepted = hanging.accepted
                elapsed = _turn(user, llm, "我每周去游泳", "游泳很健康。")
                last = user.jiyi_last()
                assert hanging.accepted > accepted, "the recall never reached the hanging server"
                assert last["degraded"] and last["unreachable"] and last["error"], last
                assert elapsed <= limit[user.handle], f"{user.handle}: {elapsed:.2f} s with jiyi hanging"
                # Frozen jiyi: a timeout of jiyi, not "unreachable", and not the plugin's fault.
                _assert_problem_note(user, "timeout")
                print(f"{user.handle}: jiyi hanging, turn {elapsed:.2f} s, extension {last['addedMs']} ms: "
                      f"{last['error']}")
    finally:
        if not jiyi.running:
            jiyi.start()

    for user in users:
        _turn(user, llm, "我回来了", "欢迎回来。")
        last = user.jiyi_last()
        assert not last["degraded"] and not last["error"], last
        note = user.note()
        assert note is not None and note["kind"] in ("used", "none"), note  # memories, or the quiet "none" line
        # The turns said while jiyi was away are caught up on the next save.
        jiyi.wait_for_memory(user.handle, AGENTS[user.handle], "用户喜欢喝乌龙茶")
        jiyi.wait_for_memory(user.handle, AGENTS[user.handle], "用户每周去游泳")
