"""Any server speaking the de-facto `/rerank` protocol: Jina, Cohere, SiliconFlow, vLLM, llama.cpp server, Infinity,
and HuggingFace text-embeddings-inference (TEI)."""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Sequence
from typing import Any, Literal

import httpx

from jiyi._http import ClientPerLoop
from jiyi.errors import ConfigError
from jiyi.rerankers.base import RerankError

log = logging.getLogger(__name__)

RequestFormat = Literal["cohere", "tei"]


class HttpReranker:
    """POST {base_url}/rerank. `request_format="cohere"` sends {"model", "query", "documents", "top_n"} (Cohere,
    Jina, SiliconFlow, vLLM, llama.cpp); "tei" sends TEI's {"query", "texts"}. Both answer shapes are read either way.

    `logits`: None maps an answer's scores through a sigmoid when any of them falls outside [0, 1] (servers that send
    raw cross-encoder logits); True always does, which keeps scores comparable across calls on such servers; False
    clamps to [0, 1]. No retries: a reranker sits on the search path, and its caller keeps the first-stage order."""

    def __init__(
        self,
        model: str,
        base_url: str,
        *,
        api_key: str | None = None,
        timeout: float = 3.0,
        logits: bool | None = None,
        request_format: RequestFormat = "cohere",
        extra_headers: dict[str, str] | None = None,
        extra_body: dict[str, Any] | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        if not base_url:
            raise ConfigError("an HTTP reranker needs a base_url (the /rerank endpoint is {base_url}/rerank)")
        if request_format not in ("cohere", "tei"):
            raise ConfigError(f"unknown rerank request_format {request_format!r}; choose 'cohere' or 'tei'")
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.model_id = f"http:{model}@{self.base_url}" if model else f"http:{self.base_url}"
        self.timeout = timeout
        self.logits = logits
        self.request_format = request_format
        self._extra_body = dict(extra_body or {})
        headers = dict(extra_headers or {})
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self._api_key = api_key
        self._clients = ClientPerLoop(lambda: httpx.AsyncClient(headers=headers, transport=transport),
                                      name="jiyi-rerank-pool-watcher")

    def __repr__(self) -> str:  # never print the key
        return f"HttpReranker(model={self.model!r}, base_url={self.base_url!r})"

    async def rerank(self, query: str, documents: Sequence[str], *, timeout: float | None = None) -> list[float]:
        documents = list(documents)
        if not documents:
            return []
        deadline = self.timeout if timeout is None else timeout
        url = f"{self.base_url}/rerank"
        started = time.perf_counter()
        try:
            # httpx's timeout applies to each phase; the total budget is what the search path cares about.
            async with asyncio.timeout(deadline):
                response = await self._clients.get().post(url, json=self._payload(query, documents), timeout=deadline)
        except (TimeoutError, httpx.TimeoutException) as exc:
            raise RerankError(f"reranker at {self.base_url} did not answer within {deadline:g} s") from exc
        except httpx.HTTPError as exc:
            raise RerankError(f"reranker at {self.base_url} unreachable: {type(exc).__name__}") from exc
        log.debug("reranker %s scored %d documents, HTTP %s in %.0f ms", self.model or self.base_url, len(documents),
                  response.status_code, (time.perf_counter() - started) * 1000)
        if response.status_code != 200:
            detail = _error_message(response)
            if self._api_key:  # some gateways quote the key they rejected
                detail = detail.replace(self._api_key, "***")
            raise RerankError(f"reranker at {self.base_url} answered HTTP {response.status_code}: {detail}")
        try:
            body = response.json()
        except ValueError as exc:
            raise RerankError(f"reranker at {self.base_url} sent a body that is not JSON") from exc
        raw = _read_scores(body, len(documents), self.base_url)
        return normalize_scores(raw, self.logits)

    def _payload(self, query: str, documents: list[str]) -> dict[str, Any]:
        if self.request_format == "tei":
            payload: dict[str, Any] = {"query": query, "texts": documents}
        else:
            payload = {"query": query, "documents": documents, "top_n": len(documents)}
            if self.model:
                payload["model"] = self.model
        return {**payload, **self._extra_body}

    async def aclose(self) -> None:
        await self._clients.aclose()


def _read_scores(body: Any, count: int, base_url: str) -> list[float | None]:
    """Scores by document index from {"results": [...]} (Cohere, Jina, vLLM) or a bare list (TEI); None where the
    answer left a document out."""
    items = body.get("results") if isinstance(body, dict) else body
    if not isinstance(items, list):
        raise RerankError(f"reranker at {base_url} sent neither {{\"results\": [...]}} nor a list of scores")
    scores: list[float | None] = [None] * count
    for item in items:
        index = item.get("index") if isinstance(item, dict) else None
        score = item.get("relevance_score", item.get("score")) if isinstance(item, dict) else None
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < count:
            raise RerankError(f"reranker at {base_url} sent a result without a valid index "
                              f"(0..{count - 1}): {str(item)[:120]}")
        if isinstance(score, bool) or not isinstance(score, int | float):
            raise RerankError(f"reranker at {base_url} sent a result without a numeric relevance_score: "
                              f"{str(item)[:120]}")
        if not math.isnan(score) and scores[index] is None:
            scores[index] = float(score)
    return scores


def normalize_scores(scores: Sequence[float | None], logits: bool | None = None) -> list[float]:
    """Map scores into [0, 1], keeping their order; missing ones become 0. See HttpReranker for `logits`."""
    present = [s for s in scores if s is not None]
    if logits is None:
        logits = any(not 0.0 <= s <= 1.0 for s in present)
    if logits:
        return [0.0 if s is None else _sigmoid(s) for s in scores]
    return [0.0 if s is None else min(1.0, max(0.0, s)) for s in scores]


def _sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)  # never overflows for x < 0
    return z / (1.0 + z)


def _error_message(response: httpx.Response) -> str:
    """The server's own words: {"error": {"message"}} (OpenAI, vLLM), {"error": "..."} (TEI), {"message"} (Cohere,
    SiliconFlow), {"detail"} (Jina, FastAPI), else the start of the body."""
    try:
        body = response.json()
    except ValueError:
        return response.text[:200]
    message: Any = None
    if isinstance(body, dict):
        error = body.get("error")
        message = error.get("message") if isinstance(error, dict) else error
        message = message or body.get("message") or body.get("detail")
    return str(message)[:200] if message else response.text[:200]
