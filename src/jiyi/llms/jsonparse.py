"""Read a JSON object out of what an LLM actually sends: fenced, wrapped in chatter, or cut off by max_tokens.

Models other than OpenAI's often ignore JSON mode; mem0 loses the turn when that happens. We take the first JSON
object in the text, and when it is truncated we keep its complete items instead of nothing.
"""

from __future__ import annotations

import json
import re
from typing import Any

from jiyi.llms.base import LLMBadOutput

_THINK = re.compile(r"<think>.*?(</think>|$)", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
_OPENING_BRACKET = re.compile(r"[{\[]")


def strip_reasoning(text: str) -> str:
    """Drop <think>…</think> blocks that reasoning models (DeepSeek-R1, Qwen3) put before the answer."""
    return _THINK.sub("", text).strip()


def parse_json_object(text: str | None) -> dict[str, Any]:
    if text is None or not text.strip():
        raise LLMBadOutput("the LLM answered with nothing")
    text = strip_reasoning(text)
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    for candidate in candidates:
        value = _first_json_value(candidate)
        if isinstance(value, dict):
            return value
        if isinstance(value, list):  # some models answer the bare list of facts
            return {"items": value}
    raise LLMBadOutput(f"no JSON object in the LLM's answer: {text[:120]!r}")


def _first_json_value(text: str) -> Any:
    decoder = json.JSONDecoder()
    resume = 0
    for match in _OPENING_BRACKET.finditer(text):
        start = match.start()
        if start < resume:
            continue  # inside a bracketed span already found not to be JSON
        try:
            value, _ = decoder.raw_decode(text, start)
            return value
        except json.JSONDecodeError:
            repaired = _close_truncated(text[start:])
            if repaired is not None:
                return repaired
            end = _span_end(text, start)
            if end is None:
                return None  # cut off inside this span: whatever brackets follow are part of it, not an answer
            resume = end
    return None


def _span_end(text: str, start: int) -> int | None:
    """Where the bracketed span opening at `start` closes (strings respected), or None if it never does."""
    depth, in_string, escaped = 0, False, False
    for i in range(start, len(text)):
        ch = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
            if depth == 0:
                return i + 1
    return None


def _close_truncated(fragment: str) -> Any:
    """Parse a JSON prefix cut off at the end: drop the incomplete last item, close what is open. A prefix with no
    complete item gives None: an empty list salvaged from a cut answer would silently lose the turn."""
    stack: list[str] = []
    in_string = escaped = False
    cut_points: list[tuple[int, list[str]]] = []  # positions after which the prefix is a set of complete items
    for i, ch in enumerate(fragment):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
                if stack and stack[-1] == "]":
                    cut_points.append((i + 1, list(stack)))  # a whole string item of a list
            continue
        if ch == '"':
            in_string = True
        elif ch in "{[":
            stack.append("}" if ch == "{" else "]")
        elif ch in "}]":
            if not stack:
                return None
            stack.pop()
            if not stack:
                return None  # balanced: a real syntax error, not a truncation
            if stack[-1] == "]" or len(stack) == 1:
                cut_points.append((i + 1, list(stack)))
        elif ch == "," and (stack[-1:] == ["]"] or len(stack) == 1):
            # Between the items of a list, or between the fields of the outer object: never inside an item, so a
            # salvaged decision is never missing its "event".
            cut_points.append((i, list(stack)))
    for end, open_stack in reversed(cut_points):
        prefix = fragment[:end].rstrip().rstrip(",")
        try:
            return json.loads(prefix + "".join(reversed(open_stack)))
        except json.JSONDecodeError:
            continue
    return None
