"""Rerank with any chat LLM: one JSON-mode call that scores every numbered document from 0 to 10."""

from __future__ import annotations

import asyncio
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from jiyi.errors import JiyiError
from jiyi.llms.base import LLM, ask_json
from jiyi.rerankers.base import RerankError

SYSTEM_PROMPT = """You rate how relevant each numbered document is to a search query.
Score each one from 0 to 10: 10 = directly answers or is exactly about what the query asks; 5 = same topic, partly \
useful; 0 = unrelated.
Texts may be Chinese, English or mixed: judge meaning across languages, not shared words.
Answer with JSON only, one entry per document: {"scores": {"1": <score>, "2": <score>, ...}}"""

_NUMBER = re.compile(r"\d+")
_DECIMAL = re.compile(r"-?\d+(?:\.\d+)?")


class LLMReranker:
    """`max_chars` cuts each document in the prompt. The LLM is the caller's (often shared with extraction), so
    `aclose` leaves it open unless `close_llm`."""

    def __init__(self, llm: LLM, *, max_chars: int = 1000, close_llm: bool = False) -> None:
        self.llm = llm
        self.model_id = f"llm:{llm.model_id}"
        self.max_chars = max_chars
        self.close_llm = close_llm

    def __repr__(self) -> str:
        return f"LLMReranker(llm={self.llm.model_id!r})"

    def messages(self, query: str, documents: Sequence[str]) -> list[dict[str, str]]:
        lines = [f"[{i}] {' '.join(doc.split())[:self.max_chars]}" for i, doc in enumerate(documents, 1)]
        user = f"Query: {' '.join(query.split())}\n\nDocuments:\n" + "\n".join(lines)
        return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]

    async def rerank(self, query: str, documents: Sequence[str], *, timeout: float | None = None) -> list[float]:
        documents = list(documents)
        if not documents:
            return []
        try:
            # The LLM client may retry within its own timeout; the caller's budget is for the whole call.
            async with asyncio.timeout(timeout):
                answer = await ask_json(self.llm, self.messages(query, documents), temperature=0.0, timeout=timeout)
        except TimeoutError as exc:
            within = f" within {timeout:g} s" if timeout is not None else ""
            raise RerankError(f"LLM reranker ({self.llm.model_id}) did not answer{within}") from exc
        except JiyiError as exc:
            raise RerankError(f"LLM reranker ({self.llm.model_id}) failed: {exc}") from exc
        return [score / 10 for score in read_scores(answer, len(documents))]

    async def aclose(self) -> None:
        if self.close_llm:
            await self.llm.aclose()


def read_scores(answer: Mapping[str, Any], count: int) -> list[float]:
    """Scores 0..10 for documents 1..count from what models send: {"scores": {"1": 7}}, {"scores": [7, 0]},
    {"scores": [{"id": 1, "score": 7}]}, or the mapping without its "scores" wrapper. Missing or invalid: 0."""
    found: Any = answer.get("scores", answer)
    if len(answer) == 1 and "scores" not in answer:
        [(key, value)] = answer.items()
        if _number(key) is None and isinstance(value, Mapping | list):
            found = value  # {"items": [...]} from a bare list, or the model's own name for "scores"
    scores = [0.0] * count
    if isinstance(found, Mapping):
        pairs: list[tuple[Any, Any]] = list(found.items())
    elif isinstance(found, list):
        if all(not isinstance(item, Mapping) for item in found):
            pairs = list(enumerate(found, 1))
        else:
            pairs = [(_item_number(item), item.get("score", item.get("relevance"))) for item in found
                     if isinstance(item, Mapping)]
    else:
        return scores
    for key, value in pairs:
        number, score = _number(key), _score(value)
        if number is not None and 1 <= number <= count and score is not None:
            scores[number - 1] = score
    return scores


def _item_number(item: Mapping[str, Any]) -> Any:
    for key in ("id", "doc", "document", "index", "n", "number"):
        if key in item:
            return item[key]
    return None


def _number(key: Any) -> int | None:
    if isinstance(key, int) and not isinstance(key, bool):
        return key
    match = _NUMBER.search(key) if isinstance(key, str) else None
    return int(match.group()) if match else None


def _score(value: Any) -> float | None:
    if isinstance(value, Mapping):
        value = value.get("score")
    if isinstance(value, bool):
        return None
    if isinstance(value, str):  # "8", "8/10"
        match = _DECIMAL.search(value)
        if match is None:
            return None
        value = float(match.group())
    if not isinstance(value, int | float) or math.isnan(value):
        return None
    return min(10.0, max(0.0, float(value)))
