"""Putting memories into a chat request: a short block appended to the system prompt, never replacing it.

    Relevant long-term memory:
    - 用户对海鲜过敏
    - 上次对话提到周三要面试

The block is appended to the first system message (a system message is inserted at the start when there is none);
the caller's messages are never modified in place.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

MEMORY_HEADER = "Relevant long-term memory:"
DEFAULT_BUDGET_CHARS = 1200


def memory_block(memories: Sequence[str], budget_chars: int = DEFAULT_BUDGET_CHARS,
                 header: str = MEMORY_HEADER) -> tuple[str, list[int]]:
    """The block and the indexes of the memories it holds, best first, within `budget_chars` characters in all.
    A memory that does not fit is left out (a shorter one after it may still fit); empty when none fits."""
    lines = [header]
    used: list[int] = []
    length = len(header)
    for index, text in enumerate(memories):
        line = "- " + " ".join(text.split())
        if length + 1 + len(line) > budget_chars:
            continue
        lines.append(line)
        used.append(index)
        length += 1 + len(line)
    return ("\n".join(lines), used) if used else ("", [])


def inject(messages: Sequence[dict[str, Any]], block: str) -> list[dict[str, Any]]:
    """A copy of `messages` with `block` appended to the first system message, or in a new one at the start."""
    result = copy.deepcopy(list(messages))
    if not block:
        return result
    for message in result:
        if message.get("role") != "system":
            continue
        content = message.get("content")
        if isinstance(content, list):  # content parts
            message["content"] = [*content, {"type": "text", "text": block}]
        elif isinstance(content, str) and content.strip():
            message["content"] = content.rstrip() + "\n\n" + block
        else:
            message["content"] = block
        return result
    return [{"role": "system", "content": block}, *result]
