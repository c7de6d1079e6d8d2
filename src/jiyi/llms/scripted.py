"""A scripted LLM: the test double for a hosted model, shipped so tests and demos register it the real way
(`llm="scripted"`, or `ScriptedLLM([...])` passed to Memory) instead of patching the client."""

from __future__ import annotations

import asyncio
import json
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from jiyi import tracing
from jiyi.llms.base import ChatMessages, LLMError

Reply = str | dict[str, Any] | list[Any] | BaseException | Callable[[ChatMessages], Any]


@dataclass(slots=True)
class ScriptedCall:
    messages: ChatMessages
    json_mode: bool | None
    reply: str | None = None
    error: str | None = None

    @property
    def prompt(self) -> str:
        return "\n".join(m.get("content", "") for m in self.messages)


@dataclass
class ScriptedLLM:
    """Answers from a queue of replies, then from `responder`. A reply is text, a JSON value (sent as its JSON
    text), an exception (raised, e.g. `LLMTimeout`), or a function of the messages returning one of those.
    `delay` seconds pass before each answer, as with a slow model."""

    replies: Iterable[Reply] = ()
    responder: Callable[[ChatMessages], Any] | None = None
    delay: float = 0.0
    model_id: str = "scripted"
    calls: list[ScriptedCall] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._queue: deque[Reply] = deque(self.replies)

    def script(self, *replies: Reply) -> None:
        self._queue.extend(replies)

    @property
    def pending(self) -> int:
        return len(self._queue)

    async def complete(
        self,
        messages: ChatMessages,
        *,
        json_mode: bool | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        timeout: float | None = None,
    ) -> str:
        with tracing.model_span("chat", self.model_id) as span:
            tracing.describe_chat(span, messages, max_tokens=max_tokens, temperature=temperature, json_mode=json_mode)
            text = await self._answer(messages, json_mode, timeout)
            tracing.describe_reply(span, text)
            return text

    async def _answer(self, messages: ChatMessages, json_mode: bool | None, timeout: float | None) -> str:
        call = ScriptedCall(messages=list(messages), json_mode=json_mode)
        self.calls.append(call)
        if self.delay:
            if timeout is not None and self.delay > timeout:
                await asyncio.sleep(timeout)
                call.error = "timeout"
                from jiyi.llms.base import LLMTimeout

                raise LLMTimeout(f"scripted LLM did not answer within {timeout:g} s")
            await asyncio.sleep(self.delay)
        if self._queue:
            reply: Any = self._queue.popleft()
        elif self.responder is not None:
            reply = self.responder
        else:
            call.error = "script exhausted"
            raise LLMError("the scripted LLM has no reply left for this call")
        if callable(reply) and not isinstance(reply, BaseException):
            reply = reply(call.messages)
        if isinstance(reply, BaseException):
            call.error = repr(reply)
            raise reply
        text = reply if isinstance(reply, str) else json.dumps(reply, ensure_ascii=False)
        call.reply = text
        return text

    async def aclose(self) -> None:
        return None
