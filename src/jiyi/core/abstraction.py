"""Abstraction: the same thing done again and again becomes one pattern (memory-service-design.md §5, issue 5).

    L1  frequency   周一/周三/周五买了咖啡 (3 events, 3 days)   →  用户经常买咖啡
    L2  preference  用户经常买咖啡                              →  用户喜欢喝咖啡
    L3  habit       用户喜欢喝咖啡, 用户每天早上赶时间          →  用户习惯早上买一杯咖啡提神

Offline, jiyi writes L1: an activity that happened on at least three different days — events that are the same
once their times are taken out (most of their words in common), or one memory said again on other days. Its
sentence is the most common wording of the activity with the times and "again" removed, "often" put in. Inferring
a liking or a habit from frequencies needs judgement, so L2 and L3 are left to an LLM (not yet written). Every
pattern is a long-term fact tagged "pattern", "habit" and "level:<n>", its sources in `compression_source_ids` and
their provenance unioned; later occurrences join the pattern instead of making a new one, and occurrences older
than a week are folded into it (lifecycle.py).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache

import numpy as np

from jiyi.core import rules_en, rules_zh
from jiyi.core.facts import is_chinese
from jiyi.records import MemoryRecord
from jiyi.text import query_terms

PATTERN_TAG = "pattern"
SIMILARITY = 0.6  # same_activity
MIN_DAYS = 3
# The kinds of fact a pattern is made of: things the user did (see core/facts.py FactKind).
ACTIVITY_KINDS = frozenset({"event", "other"})

_TIMES_ZH = re.compile(
    rules_zh.TIME_WORDS + r"|昨天|昨晚|昨儿|前天|今早|今天|早上|上午|中午|下午|晚上|傍晚|凌晨|半夜|刚才|刚刚|"
    r"又|再次|照例|照常|还是|经常")
_TIMES_EN = re.compile(
    r"\b(?:" + rules_en.TIME_WORDS + r"|yesterday|last (?:night|week|weekend)|this (?:morning|afternoon|evening)|"
    r"on (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)|again|once more|as usual|often)\b",
    re.IGNORECASE)


def level_tag(level: int) -> str:
    return f"level:{level}"


def level_of(record: MemoryRecord) -> int:
    for tag in record.tags:
        if tag.startswith("level:") and tag[6:].isdigit():
            return int(tag[6:])
    return 0


def is_pattern(record: MemoryRecord) -> bool:
    return PATTERN_TAG in record.tags


def is_activity(record: MemoryRecord) -> bool:
    """An event the user told about, which could be one occurrence of a pattern."""
    return (record.role != "assistant" and not is_pattern(record)
            and bool(ACTIVITY_KINDS.intersection(record.tags)))


# The aspect 了 (买了), not the 了 of 为了, 除了, 罢了, 得了, 不了 or 了解.
_ASPECT_LE = re.compile(r"(?<!为|除|罢|得|不)了(?!解)")
_WHITESPACE = re.compile(r"\s+")
_RUNS_OF_SPACES = re.compile(r"\s{2,}")
_LEADING_USER = re.compile(r"^User\s+")


def activity(text: str) -> str:
    """The activity with its time taken out: "用户今天又去楼下买了两杯美式" → "用户去楼下买两杯美式"."""
    if is_chinese(text):
        text = _TIMES_ZH.sub("", text)
        text = _ASPECT_LE.sub("", text)
        return _WHITESPACE.sub("", text).strip("，,。 ")
    text = _TIMES_EN.sub("", text)
    return _RUNS_OF_SPACES.sub(" ", text).strip(" ,.")


def l1_sentence(texts: Sequence[str]) -> str:
    """"用户经常去楼下买两杯美式" / "User often had pho for lunch", from the most common wording of the activity."""
    counts = Counter(activity(t) for t in texts)
    best = min(counts, key=lambda a: (-counts[a], len(a), a))
    if is_chinese(best):
        rest = best[2:] if best.startswith("用户") else best
        return "用户经常" + rest
    rest = _LEADING_USER.sub("", best)
    return "User often " + rest


def occurrence_days(records: Sequence[MemoryRecord]) -> int:
    """The days the activity happened on: a memory said again on another day was not written twice (the write path
    decides NONE and adds the message to its provenance), so its sources' dates count too."""
    days = {(r.event_time or r.created_at).date() for r in records}
    # A memory's first source is the message it was made from: its event time already stands for it (and may be an
    # earlier day, "我昨晚去了…"). Later sources are the same thing said again, on their own days.
    days.update(ref.created_at.date() for r in records for ref in r.provenance[1:] if ref.created_at)
    return len(days)


def last_occurrence(records: Sequence[MemoryRecord]) -> datetime:
    times = [r.event_time or r.created_at for r in records]
    times += [ref.created_at for r in records for ref in r.provenance if ref.created_at]
    return max(times)


_NOT_THE_ACTIVITY = frozenset({"用户", "user", "经常", "often"})


@lru_cache(maxsize=8192)
def activity_words(text: str) -> frozenset[str]:
    """The words that say what was done: "用户今天又去健身房练腿" → {去, 健身房, 练腿}."""
    return frozenset(query_terms(activity(text))) - _NOT_THE_ACTIVITY


def same_activity(a: str, b: str) -> float:
    """The share of words two activities have in common, over the longer one's words. Words, not vectors: a small
    multilingual embedder puts any two short Chinese sentences close together (去健身房练腿 and 养了一只猫)."""
    x, y = activity_words(a), activity_words(b)
    return len(x & y) / max(len(x), len(y)) if x and y else 0.0


@dataclass(frozen=True, slots=True)
class Occurrences:
    """A group of events that are one activity repeated."""

    members: list[MemoryRecord]

    @property
    def sentence(self) -> str:
        return l1_sentence([r.content for r in self.members])


def repeated_activities(records: Sequence[MemoryRecord], similarity: float = SIMILARITY) -> list[Occurrences]:
    """Groups of the same activity (same_activity ≥ `similarity` with the group's seed) that happened on at least
    MIN_DAYS different days (one memory said on three days is such a group). Each record is in at most one group;
    the record with the most matches seeds first."""
    n = len(records)
    if n == 0:
        return []
    texts = [r.content for r in records]
    close = np.array([[same_activity(texts[i], texts[j]) >= similarity for j in range(n)] for i in range(n)])
    taken = np.zeros(n, dtype=bool)
    groups = []
    for seed in np.argsort(-close.sum(axis=1), kind="stable"):
        if taken[seed]:
            continue
        members = [int(j) for j in np.flatnonzero(close[seed] & ~taken)]
        group = [records[i] for i in members]
        if occurrence_days(group) >= MIN_DAYS:
            taken[members] = True
            groups.append(Occurrences(sorted(group, key=lambda r: r.event_time or r.created_at)))
    return groups


def pattern_of(record: MemoryRecord, patterns: Sequence[MemoryRecord],
               similarity: float = SIMILARITY) -> MemoryRecord | None:
    """The existing pattern a new occurrence belongs to, if any."""
    best, best_score = None, similarity
    for pattern in patterns:
        score = same_activity(record.content, pattern.content)
        if score >= best_score:
            best, best_score = pattern, score
    return best
