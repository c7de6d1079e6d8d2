"""The runnable examples of integrations/sillytavern/README.md, run as written: the curl check finds what a chat with
SillyTavern's default character wrote (its real id, default_Seraphina.png), and the fake OpenAI server command
streams a reply as SillyTavern asks for it and prints each request."""

from __future__ import annotations

import json
import queue
import re
import subprocess
import sys
import threading
from pathlib import Path

import httpx

from tests.sillytavern.browser import StUser
from tests.sillytavern.fake_llm import FakeLLM
from tests.sillytavern.services import REPO, JiyiServer, free_port

README = (REPO / "integrations" / "sillytavern" / "README.md").read_text(encoding="utf-8")


def _block(language: str, containing: str) -> str:
    [found] = [b for b in re.findall(rf"```{language}\n(.*?)```", README, re.S) if containing in b]
    return found


def test_the_check_command_finds_what_a_chat_with_seraphina_wrote(alice: StUser, llm: FakeLLM,
                                                                  jiyi: JiyiServer) -> None:
    command = _block("bash", "/memories?user_id=default-user")
    assert "agent_id=default_Seraphina.png" in command
    alice.select_character("default_Seraphina.png")  # the character every SillyTavern user starts with
    alice.new_chat()
    llm.script_chat("杭州是个好地方。")
    alice.send("我住在杭州", expect_reply="好地方")
    jiyi.wait_for_memory("alice", "default_Seraphina.png", "用户住在杭州")

    # The suite's SillyTavern has user accounts: its user is alice, where a single-user install has default-user.
    script = (command.strip().replace("127.0.0.1:8888", f"127.0.0.1:{jiyi.port}")
              .replace("user_id=default-user", "user_id=alice"))
    result = subprocess.run(["bash", "-ec", script], capture_output=True, text=True, timeout=30, check=True)
    found = json.loads(result.stdout)["results"]
    assert "用户住在杭州" in [m["memory"] for m in found]
    assert {m["agent_id"] for m in found} == {"default_Seraphina.png"}


def _lines(stream: object) -> queue.Queue[str]:
    lines: queue.Queue[str] = queue.Queue()

    def read() -> None:
        for line in stream:  # type: ignore[attr-defined]
            lines.put(line)

    threading.Thread(target=read, daemon=True).start()
    return lines


def test_the_fake_server_command_streams_and_prints_each_request(tmp_path: Path) -> None:
    command = _block("bash", "jiyi.testing.fake_openai").strip()
    port = free_port()
    argv = command.replace(".venv/bin/python", sys.executable).replace("--port 5001", f"--port {port}")
    process = subprocess.Popen(["bash", "-c", f"exec {argv}"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, cwd=tmp_path)
    try:
        output = _lines(process.stdout)
        assert output.get(timeout=60).strip() == f"fake OpenAI server at http://127.0.0.1:{port}/v1"
        # What SillyTavern sends with streaming on (its default).
        request = {"model": "any", "stream": True, "messages": [
            {"role": "system", "content": "Relevant long-term memory:\n- 用户对海鲜过敏"},
            {"role": "user", "content": "晚饭吃什么？"}]}
        with httpx.stream("POST", f"http://127.0.0.1:{port}/v1/chat/completions", json=request, timeout=10) as answer:
            assert answer.headers["content-type"].startswith("text/event-stream")
            events = [line.removeprefix("data: ") for line in answer.iter_lines() if line.startswith("data: ")]
        assert events[-1] == "[DONE]"
        chunks = [json.loads(event) for event in events[:-1]]
        assert {chunk["object"] for chunk in chunks} == {"chat.completion.chunk"}
        assert len(chunks) > 3, "the reply comes in pieces"
        text = "".join(chunk["choices"][0]["delta"].get("content", "") for chunk in chunks)
        assert text == "I will remember that."
        assert chunks[-1]["choices"][0]["finish_reason"] == "stop"

        logged = json.loads(output.get(timeout=10))
        assert logged["path"] == "/v1/chat/completions"
        assert logged["body"] == request
    finally:
        process.terminate()
        process.wait(10)
