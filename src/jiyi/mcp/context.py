"""memory.get_context: the user's core profile, then what is relevant to the recent conversation, within a budget.

Core and system memories are always worth having (who the person is, allergies, lasting preferences), so they come
first whatever the conversation is about; the read path's recall (AsyncMemory.context: the last user message, then
the recent conversation) adds what this conversation needs. Without a conversation the latest memories stand in.
"""

from __future__ import annotations

import math
from typing import Any

from jiyi.memory import AsyncMemory
from jiyi.requests import ContextRequest, ListRequest

PROFILE_FILTER = {"jiyi.category": {"in": ["core", "system"]}}
PROFILE_LIMIT = 50
RELEVANT_TOP_K = 8
RECENT_LIMIT = 5
CONTEXT_CHARS = (100, 20_000)  # what AsyncMemory.context accepts as budget_chars

PROFILE_HEADER = "User profile (core memories):"
RELEVANT_HEADER = "Relevant to this conversation:"
RECENT_HEADER = "Recent memories:"


def estimate_tokens(text: str) -> int:
    """Tokens without a tokenizer: a CJK (or other wide) character is about one, other text about four characters
    a token. Errs high for Chinese, so a block within the estimate fits the budget."""
    wide = sum(1 for ch in text if ord(ch) >= 0x2E80)
    return wide + math.ceil((len(text) - wide) / 4)


async def conversation_context(memory: AsyncMemory, *, user_id: str | None, agent_id: str | None,
                               messages: list[dict[str, Any]] | None, max_tokens: int) -> dict[str, Any]:
    scope: dict[str, Any] = {"user_id": user_id, "agent_id": agent_id}
    profile = [_line(item) for item in
               (await memory.run_list(ListRequest.build_all(**scope, filters=PROFILE_FILTER,
                                                            limit=PROFILE_LIMIT)))["results"]]
    known = {item["id"] for item in profile}
    degraded = False
    if messages:
        budget = min(max(max_tokens * 4, CONTEXT_CHARS[0]), CONTEXT_CHARS[1])
        recalled = await memory.run_context(ContextRequest.build(messages, **scope, top_k=RELEVANT_TOP_K,
                                                                 budget_chars=budget))
        degraded = bool(recalled["degraded"])
        header, found = RELEVANT_HEADER, [{"id": m["id"], "memory": m["memory"], "score": m["score"]}
                                          for m in recalled["memories"]]
    else:
        latest = (await memory.run_list(ListRequest.build_all(**scope, limit=RECENT_LIMIT + len(profile))))["results"]
        header, found = RECENT_HEADER, [_line(item) for item in latest]
    found = [item for item in found if item["id"] not in known][:RELEVANT_TOP_K]

    lines: list[str] = []
    used = 0
    kept: dict[str, list[dict[str, Any]]] = {"profile": [], "relevant": []}
    for section, title, items in (("profile", PROFILE_HEADER, profile), ("relevant", header, found)):
        cost = estimate_tokens(title) + 1
        for item in items:
            line = f"- {item['memory']}"
            cost += estimate_tokens(line) + 1
            if used + cost > max_tokens:
                break
            if not kept[section]:
                lines.append(title)
            lines.append(line)
            kept[section].append(item)
            used += cost
            cost = 0
    omitted = len(profile) + len(found) - len(kept["profile"]) - len(kept["relevant"])
    block = "\n".join(lines)
    return {
        "context": block,
        "profile": kept["profile"],
        ("relevant" if messages else "recent"): kept["relevant"],
        "estimated_tokens": estimate_tokens(block),
        "max_tokens": max_tokens,
        "omitted": omitted,
        "degraded": degraded,
    }


def _line(item: dict[str, Any]) -> dict[str, Any]:
    return {"id": item["id"], "memory": item["memory"]}
