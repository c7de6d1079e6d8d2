"""The lifecycle's judgement calls, made by the configured LLM: review (promote / keep / delete, with up to three
searches of related memories first), merging near-duplicates into one sentence, and abstraction to L2 / L3.

Each function raises LLMError when the model is unreachable or its answer is unusable; the maintenance pass then
falls back to its offline rules (lifecycle.py), so a pass never fails because of the model.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from jiyi.core import prompts
from jiyi.llms.base import LLM, LLMBadOutput, ask_json
from jiyi.records import MemoryRecord

MAX_SEARCHES = 3
Search = Callable[[str], Awaitable[list[str]]]


@dataclass(frozen=True, slots=True)
class Review:
    action: str  # PROMOTE, KEEP or DELETE
    reason: str
    searches: tuple[str, ...] = ()  # the queries the model looked up first


def _memory_json(record: MemoryRecord) -> dict[str, Any]:
    return {"text": record.content, "kinds": record.tags, "importance": round(record.importance, 2),
            "created_at": record.created_at.isoformat(timespec="minutes"),
            "last_used": record.last_accessed_at.isoformat(timespec="minutes") if record.last_accessed_at else None,
            "times_used": record.access_count}


async def review(llm: LLM, record: MemoryRecord, search: Search, *, promotion: bool,
                 timeout: float | None = None) -> Review:
    allowed = {"PROMOTE", "KEEP", "DELETE"} if promotion else {"KEEP", "DELETE"}
    messages: list[dict[str, str]] = [
        {"role": "system", "content": prompts.REVIEW},
        {"role": "user", "content": _json({"mode": "promote" if promotion else "forget",
                                           "memory": _memory_json(record)})},
    ]
    searches: list[str] = []
    for _ in range(MAX_SEARCHES + 1):
        answer = await ask_json(llm, messages, timeout=timeout)
        action = str(answer.get("action", "")).strip().upper()
        if action == "SEARCH" and len(searches) < MAX_SEARCHES:
            query = str(answer.get("query") or "").strip()[:200]
            if not query:
                raise LLMBadOutput("a SEARCH without a query")
            searches.append(query)
            messages += [{"role": "assistant", "content": _json(answer)},
                         {"role": "user", "content": _json({"query": query, "results": await search(query)})}]
            continue
        if action in allowed:
            return Review(action, str(answer.get("reason") or "").strip()[:300], tuple(searches))
        raise LLMBadOutput(f"review answered {action or 'nothing'!r}; expected one of {sorted(allowed)}")
    raise LLMBadOutput(f"no decision after {MAX_SEARCHES} searches")


async def merge(llm: LLM, texts: Sequence[str], *, timeout: float | None = None) -> str:
    answer = await ask_json(llm, [{"role": "system", "content": prompts.MERGE},
                                  {"role": "user", "content": _json({"memories": list(texts)})}], timeout=timeout)
    merged = answer.get("memory")
    if not isinstance(merged, str) or not merged.strip():
        raise LLMBadOutput('the merge answer has no "memory" text')
    merged = merged.strip().splitlines()[0]
    if len(merged) > 2 * sum(len(t) for t in texts):
        raise LLMBadOutput("the merged memory is longer than everything it merges")
    return merged


@dataclass(frozen=True, slots=True)
class Abstraction:
    text: str
    level: int
    sources: list[MemoryRecord]


async def abstract(llm: LLM, records: Sequence[MemoryRecord], level_of: Callable[[MemoryRecord], int], *,
                   timeout: float | None = None) -> list[Abstraction]:
    """L2 and L3 memories the model finds in `records` (the user's patterns and lasting facts). Ids shown to the model
    are small integers it cannot invent; an abstraction citing none of them is dropped."""
    shown = {i + 1: record for i, record in enumerate(records)}
    answer = await ask_json(llm, [
        {"role": "system", "content": prompts.ABSTRACT},
        {"role": "user", "content": _json({"memories": [{"id": i, "text": r.content, "level": level_of(r)}
                                                        for i, r in shown.items()]})},
    ], timeout=timeout)
    items = answer.get("abstractions")
    if not isinstance(items, list):
        raise LLMBadOutput('the abstraction answer has no "abstractions" list')
    known = {r.content for r in records}
    out = []
    for item in items:
        if not isinstance(item, dict):
            continue
        text, level = str(item.get("text") or "").strip(), item.get("level")
        sources = [shown[i] for i in item.get("sources") or [] if isinstance(i, int) and i in shown]
        if not text or text in known or level not in (2, 3) or not sources:
            continue
        if level == 3 and len(sources) < 2:
            continue
        out.append(Abstraction(text[:300], int(level), sources))
    return out


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)
