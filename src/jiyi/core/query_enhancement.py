"""Query enhancement for weak questions ("你今天有什么不一样？", "那个事情后来怎么样？"): the pure parts of the chain.

The chain itself (read_path.py) tries, cheapest first: the last user message; a context query built from the recent
conversation; an LLM rewrite into one self-contained query. Here: building the context query, the rewrite's input and
cleaning its output.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from jiyi.core.messages import ChatMessage

CONTEXT_QUERY_MAX_CHARS = 1200
QUESTION_LABEL = "User question: "
MAX_REWRITE_CHARS = 300


def last_user_message(messages: Sequence[ChatMessage]) -> int | None:
    """Index of the last user message with text."""
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].role == "user" and messages[index].content.strip():
            return index
    return None


def _line(message: ChatMessage) -> str:
    speaker = message.name or message.role
    return f"{speaker}: {' '.join(message.content.split())}"


def recent_conversation(messages: Sequence[ChatMessage], question_index: int, count: int) -> list[ChatMessage]:
    """Up to `count` user and assistant messages said before the question."""
    earlier = [m for m in messages[:question_index] if m.role in ("user", "assistant") and m.content.strip()]
    return earlier[-count:] if count > 0 else []


def context_query(recent: Sequence[ChatMessage], question: str, max_chars: int = CONTEXT_QUERY_MAX_CHARS) -> str:
    """The recent messages, one per line, then "User question: …"; the oldest lines go first when it is too long, and
    the question is cut only when it alone is over the limit."""
    tail = QUESTION_LABEL + " ".join(question.split())
    if len(tail) >= max_chars:
        return tail[:max_chars]
    lines: list[str] = []
    room = max_chars - len(tail)
    for message in reversed(recent):
        line = _line(message)
        if len(line) + 1 > room:
            if not lines and room > 20:  # the message just before the question matters most: keep its end
                lines.append("…" + line[-(room - 2):])
            break
        lines.append(line)
        room -= len(line) + 1
    return "\n".join([*reversed(lines), tail])


def rewrite_input(question: str, recent: Sequence[ChatMessage], user_name: str | None, char_name: str | None,
                  max_chars: int = CONTEXT_QUERY_MAX_CHARS) -> str:
    """The rewrite prompt's input, as JSON (the seed's contract)."""
    conversation = context_query(recent, "", max_chars).removesuffix(QUESTION_LABEL).rstrip("\n")
    return json.dumps({"user_name": user_name or "User", "char_name": char_name or "Assistant",
                       "user_question": question, "recent_conversation": conversation}, ensure_ascii=False)


_PREFIX = re.compile(r"^(?:rewritten query|search query|query|rewrite|改写后的查询|改写后|改写|查询|检索句)\s*[:：]\s*",
                     re.IGNORECASE)
_QUOTES = "\"'“”‘’「」『』`"
_THINKING = re.compile(r"<think>.*?</think>", re.DOTALL)
_LIST_MARKER = re.compile(r"^(?:[#>*\-]+|\d+[.)])\s*")  # markdown heading, quote, bullet or "1." / "1)"


def clean_rewrite(answer: str) -> str | None:
    """The first meaningful line of a model's answer, without markdown, quotes or a "Query:" prefix; None if empty."""
    text = _THINKING.sub("", answer)
    for raw in text.splitlines():
        line = raw.strip().strip("`").strip()
        line = _LIST_MARKER.sub("", line)
        line = _PREFIX.sub("", line).replace("**", "").strip().strip(_QUOTES).strip()
        if line and not line.startswith("```"):
            return line[:MAX_REWRITE_CHARS]
    return None
