"""The words an English question or request opens with, shared by the read path (intent.asks_something: is this
message a question?) and the offline extraction (rules_en: a clause that asks states no fact), so the two lists
cannot drift apart. Each adds what its own job needs, named beside it."""

from __future__ import annotations

QUESTION_OPENERS_EN = ("what", "who", "where", "when", "why", "how", "which", "do", "does", "did", "can", "could",
                       "would", "will", "should", "is", "are", "am", "was", "were", "have", "has", "any", "remind",
                       "tell me")


def opener_alternation(*extra: str) -> str:
    """QUESTION_OPENERS_EN and `extra` as a regular expression alternation, longest first (no prefix wins early)."""
    return "|".join(sorted({*QUESTION_OPENERS_EN, *extra}, key=lambda word: (-len(word), word)))
