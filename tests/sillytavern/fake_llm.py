"""One fake OpenAI-compatible LLM on 127.0.0.1 for the whole SillyTavern suite, serving two clients:

- SillyTavern's chat completions (model `ST_MODEL`): replies scripted per test, every request logged, so a test reads
  exactly which messages reached the model (the memory block arrives as a system message);
- jiyi's own LLM (model `JIYI_MODEL`): fact extraction, decisions and query rewrites, answered by rules and tables
  written below, so what jiyi stores is known in advance and each kind of request can be counted.

A query rewrite is recognised by its input, whoever sends it (jiyi's rewrite stage, or the extension through
SillyTavern's generateRaw): the user message is the seed's JSON with "user_question".
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from jiyi.testing.fake_openai import FakeOpenAI, LoggedRequest, Reply

ST_MODEL = "st-chat-model"
JIYI_MODEL = "jiyi-extractor"
DEFAULT_CHAT_REPLY = "嗯嗯，我在听。"

# What jiyi's extraction learns from a user message containing the key: (fact, type, importance, category).
USER_FACTS: dict[str, tuple[str, str, float, str]] = {
    "海鲜过敏": ("用户对海鲜过敏", "health", 0.95, "core"),
    "昨晚又失眠": ("用户昨晚失眠了", "state", 0.6, "fact"),
    "钢琴考级": ("用户下周三要参加钢琴十级考试", "plan", 0.7, "fact"),
    "我养了一只猫": ("用户养了一只猫，叫团子", "relationship", 0.7, "fact"),
    "我喜欢喝乌龙茶": ("用户喜欢喝乌龙茶", "preference", 0.5, "fact"),
    "我在学吉他": ("用户在学吉他", "personal", 0.5, "fact"),
    "我最爱吃火锅": ("用户最爱吃火锅", "preference", 0.5, "fact"),
    "我住在杭州": ("用户住在杭州", "personal", 0.7, "core"),
    "我每周去游泳": ("用户每周去游泳", "personal", 0.5, "fact"),
}
# What jiyi learns about the character from its own reply containing the key.
AGENT_FACTS: dict[str, str] = {
    "我最喜欢下雨天": "小美最喜欢下雨天",
    "我最喜欢晴天": "小美最喜欢晴天",
    "我是阿杰，我会弹钢琴": "阿杰会弹钢琴",
    "我是小林，我养了一只狗": "小林养了一只狗",
}


@dataclass(frozen=True)
class Rewrite:
    """A scripted query rewrite: the answer for a question containing `question_contains`."""

    question_contains: str
    answer: str


class FakeLLM:
    """The FakeOpenAI server plus routing by model and prompt. Thread-safe: uvicorn answers from its own thread."""

    def __init__(self) -> None:
        self.server = FakeOpenAI(self._respond, model=ST_MODEL)
        self._lock = threading.Lock()
        self._chat_replies: list[Reply | str] = []
        self.chat_responder: Callable[[dict[str, Any]], Reply | str] = lambda body: DEFAULT_CHAT_REPLY
        self._rewrites: list[Rewrite] = []

    def __enter__(self) -> FakeLLM:
        self.server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.stop()

    @property
    def base_url(self) -> str:
        return self.server.base_url

    # ---- scripting ----------------------------------------------------------------------------------------------

    def script_chat(self, *replies: Reply | str) -> None:
        """SillyTavern's next chat completions answer these, in order (rewrites through SillyTavern excluded)."""
        with self._lock:
            self._chat_replies.extend(replies)

    def script_rewrite(self, question_contains: str, answer: str) -> None:
        with self._lock:
            self._rewrites.append(Rewrite(question_contains, answer))

    def reset_scripts(self) -> None:
        with self._lock:
            self._chat_replies.clear()
            self._rewrites.clear()
            self.chat_responder = lambda body: DEFAULT_CHAT_REPLY

    # ---- inspection ---------------------------------------------------------------------------------------------

    def mark(self) -> int:
        """A position in the request log; pass it to the accessors to see only later requests."""
        return len(self.server.requests)

    def _since(self, mark: int) -> list[LoggedRequest]:
        return [r for r in self.server.requests[mark:] if r.path == "/v1/chat/completions"]

    def chat_requests(self, mark: int = 0) -> list[LoggedRequest]:
        """SillyTavern's chat completions for replies (not its rewrites)."""
        return [r for r in self._since(mark) if r.body.get("model") == ST_MODEL and not is_rewrite(r.body)]

    def rewrite_requests(self, mark: int = 0, model: str | None = None) -> list[LoggedRequest]:
        return [r for r in self._since(mark) if is_rewrite(r.body) and (model is None or r.body.get("model") == model)]

    def extraction_requests(self, mark: int = 0) -> list[LoggedRequest]:
        return [r for r in self._since(mark) if r.body.get("model") == JIYI_MODEL and not is_rewrite(r.body)]

    # ---- answering ----------------------------------------------------------------------------------------------

    def _respond(self, body: dict[str, Any]) -> Reply | str:
        if is_rewrite(body):
            return self._rewrite(body)
        if body.get("model") == JIYI_MODEL:
            return _jiyi_answer(body)
        with self._lock:
            if self._chat_replies:
                return self._chat_replies.pop(0)
            responder = self.chat_responder
        return responder(body)

    def _rewrite(self, body: dict[str, Any]) -> str:
        question = str(_rewrite_input(body).get("user_question", ""))
        with self._lock:
            for rewrite in self._rewrites:
                if rewrite.question_contains in question:
                    return rewrite.answer
        return question  # an unscripted rewrite changes nothing


def _messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    messages = body.get("messages")
    return [m for m in messages if isinstance(m, dict)] if isinstance(messages, list) else []


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):  # OpenAI content parts
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return content if isinstance(content, str) else ""


def _rewrite_input(body: dict[str, Any]) -> dict[str, Any]:
    for message in reversed(_messages(body)):
        text = _text(message)
        start = text.find("{")
        if '"user_question"' in text and start >= 0:
            try:
                data = json.loads(text[start:text.rfind("}") + 1])
            except ValueError:
                continue
            if isinstance(data, dict):
                return data
    return {}


def is_rewrite(body: dict[str, Any]) -> bool:
    return bool(_rewrite_input(body))


def system_text(body: dict[str, Any]) -> str:
    """All system messages of a request, joined."""
    return "\n".join(_text(m) for m in _messages(body) if m.get("role") == "system")


def _jiyi_answer(body: dict[str, Any]) -> str:
    messages = _messages(body)
    system = _text(messages[0]) if messages else ""
    data = _text(messages[-1]) if messages else ""
    if "关于【用户】" in system or "about the USER" in system:
        return _facts(_said_by(data, "user"), {k: v for k, v in USER_FACTS.items()}, "user")
    if "【助理（角色）】" in system or "ASSISTANT (the character)" in system:
        return _facts(_said_by(data, "assistant"), {k: (v, "persona", 0.6, "fact") for k, v in AGENT_FACTS.items()},
                      "assistant")
    if "Existing memories:" in data and "New facts:" in data:
        return _decide(data)
    if '"summary"' in system:
        return json.dumps({"summary": "聊了日常"}, ensure_ascii=False)
    return "{}"


def _said_by(conversation: str, role: str) -> str:
    """The lines of jiyi's rendered conversation ("user (Alice): ...") spoken by `role`."""
    pattern = re.compile(rf"^{role}(?: \([^)]*\))?: (.*)$")
    return "\n".join(m.group(1) for line in conversation.splitlines() if (m := pattern.match(line)))


def _facts(said: str, table: dict[str, tuple[str, str, float, str]], about: str) -> str:
    facts = [{"text": text, "type": kind, "importance": importance, "category": category}
             for key, (text, kind, importance, category) in table.items() if key in said]
    return json.dumps({"facts": facts}, ensure_ascii=False)


def _decide(data: str) -> str:
    """ADD each new fact, NONE when a memory with the same text exists (the ids are jiyi's small integers)."""
    existing: list[dict[str, Any]] = []
    new: list[str] = []
    for line in data.splitlines():
        if line.startswith("Existing memories:"):
            existing = json.loads(line.removeprefix("Existing memories:").strip())
        elif line.startswith("New facts:"):
            new = json.loads(line.removeprefix("New facts:").strip())
    known = {item["text"]: item["id"] for item in existing}
    next_id = max((int(item["id"]) for item in existing), default=-1) + 1
    decisions = []
    for fact in new:
        if fact in known:
            decisions.append({"id": known[fact], "text": fact, "event": "NONE"})
        else:
            decisions.append({"id": str(next_id), "text": fact, "event": "ADD"})
            next_id += 1
    return json.dumps({"memory": decisions}, ensure_ascii=False)
