"""The LLM contract: one async chat call that returns text. Extraction, decisions, summaries and query rewriting
all go through it, so any backend that can chat can drive them."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from jiyi.errors import BackendUnavailable

ChatMessages = list[dict[str, str]]


class LLMError(BackendUnavailable):
    """The LLM could not be used for this call. The write path keeps the turn and retries it later."""


class LLMTimeout(LLMError):
    """No answer within the timeout."""


class LLMRateLimited(LLMError):
    """HTTP 429 after every retry."""


class LLMBadOutput(LLMError):
    """An answer came, but nothing usable could be read from it."""


@runtime_checkable
class LLM(Protocol):
    model_id: str

    async def complete(
        self,
        messages: ChatMessages,
        *,
        json_mode: bool | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        timeout: float | None = None,
    ) -> str:
        """The assistant's reply text. `json_mode` asks the server for a JSON object where it supports that."""
        ...

    async def aclose(self) -> None:
        ...


async def ask_json(llm: LLM, messages: ChatMessages, **options: Any) -> dict[str, Any]:
    """Complete in JSON mode and read the JSON object out of whatever came back (fences, chatter, truncation)."""
    from jiyi.llms.jsonparse import parse_json_object

    return parse_json_object(await llm.complete(messages, json_mode=True, **options))
