"""Any OpenAI-compatible chat-completions endpoint: OpenAI, Zhipu GLM, DeepSeek, Qwen (DashScope compatible mode),
Ollama, vLLM, llama.cpp server, LM Studio."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import httpx

from jiyi import tracing
from jiyi._http import ClientPerLoop
from jiyi.errors import ConfigError
from jiyi.llms.base import ChatMessages, LLMBadOutput, LLMError, LLMRateLimited, LLMTimeout
from jiyi.llms.jsonparse import strip_reasoning

log = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://api.openai.com/v1"
MAX_RETRY_AFTER = 10.0  # seconds; a longer Retry-After fails the call, and the turn waits in the pending queue


class OpenAICompatibleLLM:
    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        temperature: float = 0.1,
        max_tokens: int = 1024,
        top_p: float | None = None,
        timeout: float = 20.0,
        max_retries: int = 2,
        retry_backoff: float = 0.5,
        json_mode: bool = True,
        extra_headers: dict[str, str] | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        if not model:
            raise ConfigError("an OpenAI-compatible LLM needs a model name")
        self.model = model
        self.base_url = (base_url or DEFAULT_BASE_URL).rstrip("/")
        self.model_id = f"openai:{model}@{self.base_url}"
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.top_p = top_p
        self.timeout = timeout
        self.max_retries = max_retries
        self.retry_backoff = retry_backoff
        # Some servers (older vLLM, llama.cpp builds, several hosted APIs) reject response_format. We learn that
        # from their first 400 and stop sending it; the JSON parser copes with free-form answers.
        self.json_mode_supported = json_mode
        headers = dict(extra_headers or {})
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self._headers = headers
        self._transport = transport
        self._api_key = api_key
        # One connection pool per event loop: the sync facade and the server each run their own (see jiyi/_http.py).
        self._clients = ClientPerLoop(lambda: httpx.AsyncClient(headers=self._headers, transport=self._transport),
                                      name="jiyi-llm-pool-watcher")

    def __repr__(self) -> str:  # never print the key
        return f"OpenAICompatibleLLM(model={self.model!r}, base_url={self.base_url!r})"

    async def complete(
        self,
        messages: ChatMessages,
        *,
        json_mode: bool | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        timeout: float | None = None,
    ) -> str:
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": self.temperature if temperature is None else temperature,
            "max_tokens": max_tokens or self.max_tokens,
            "stream": False,
        }
        if self.top_p is not None:
            payload["top_p"] = self.top_p
        wants_json = json_mode if json_mode is not None else False
        if wants_json and self.json_mode_supported:
            payload["response_format"] = {"type": "json_object"}
        with tracing.model_span("chat", self.model_id) as span:
            tracing.describe_chat(span, messages, max_tokens=payload["max_tokens"],
                                  temperature=payload["temperature"], json_mode=wants_json)
            response = await self._post(payload, self.timeout if timeout is None else timeout)
            content = self._content(response)
            if span.is_recording():  # read the body again only for a span that is kept
                body = response.json()
                tracing.describe_reply(span, content, body.get("usage"), body)
            return content

    async def _post(self, payload: dict[str, Any], timeout: float) -> httpx.Response:
        url = f"{self.base_url}/chat/completions"
        attempt = 0
        while True:
            started = time.perf_counter()
            try:
                response = await self._clients.get().post(url, json=payload, timeout=timeout)
            except httpx.TimeoutException as exc:
                # Not retried: the caller has its own deadline, and the write path retries the turn later.
                raise LLMTimeout(f"LLM at {self.base_url} did not answer within {timeout:g} s") from exc
            except httpx.HTTPError as exc:
                if attempt < self.max_retries:
                    attempt += 1
                    await asyncio.sleep(self.retry_backoff * 2 ** (attempt - 1))
                    continue
                raise LLMError(f"LLM at {self.base_url} unreachable: {type(exc).__name__}") from exc
            log.debug("LLM %s answered HTTP %s in %.0f ms", self.model, response.status_code,
                      (time.perf_counter() - started) * 1000)
            if response.status_code == 200:
                return response
            if response.status_code in (400, 422) and "response_format" in payload \
                    and "response_format" in response.text:
                log.info("LLM %s rejects response_format; continuing without JSON mode", self.model)
                self.json_mode_supported = False
                payload = {k: v for k, v in payload.items() if k != "response_format"}
                continue
            retryable = response.status_code == 429 or response.status_code >= 500
            if retryable and attempt < self.max_retries:
                retry_after = self._retry_after(response)
                wait = retry_after if retry_after is not None else self.retry_backoff * 2 ** attempt
                if wait <= MAX_RETRY_AFTER:
                    attempt += 1
                    await asyncio.sleep(wait)
                    continue
            detail = _error_message(response)
            if self._api_key:  # some gateways quote the key they rejected
                detail = detail.replace(self._api_key, "***")
            if response.status_code == 429:
                raise LLMRateLimited(f"LLM at {self.base_url} is rate limiting (HTTP 429): {detail}")
            raise LLMError(f"LLM at {self.base_url} answered HTTP {response.status_code}: {detail}")

    @staticmethod
    def _retry_after(response: httpx.Response) -> float | None:
        value = response.headers.get("retry-after")
        try:
            return max(0.0, float(value)) if value is not None else None
        except ValueError:
            return None  # an HTTP date; fall back to our own backoff

    def _content(self, response: httpx.Response) -> str:
        try:
            body = response.json()
            choice = body["choices"][0]
            content = choice["message"].get("content")
        except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
            raise LLMBadOutput(f"LLM at {self.base_url} sent a body that is not a chat completion") from exc
        if not isinstance(content, str):
            raise LLMBadOutput(f"LLM at {self.base_url} sent no message content")
        return strip_reasoning(content)

    async def aclose(self) -> None:
        await self._clients.aclose()


def _error_message(response: httpx.Response) -> str:
    try:
        error = response.json().get("error")
        message = error.get("message") if isinstance(error, dict) else error
        return str(message)[:200] if message else response.text[:200]
    except (ValueError, AttributeError):
        return response.text[:200]
