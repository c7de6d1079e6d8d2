"""What extraction produces and what the decision step does with it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache

from jiyi.filters import Node, parse_filters
from jiyi.records import Category, Event, MemoryType


class FactKind(StrEnum):
    PREFERENCE = "preference"
    PERSONAL = "personal"  # name, age, job, home, birthday
    RELATIONSHIP = "relationship"  # family, partners, friends, pets
    PLAN = "plan"
    EVENT = "event"  # something that happened once: "昨晚去宜家逛了逛", "watched Inception last night"
    STATE = "state"  # emotions and passing conditions
    HEALTH = "health"  # illnesses, allergies, diet
    PERSONA = "persona"  # the assistant's own traits
    OTHER = "other"


_MEMORY_TYPES = {
    FactKind.PREFERENCE: MemoryType.PREFERENCE,
    FactKind.PLAN: MemoryType.EPISODIC,
    FactKind.EVENT: MemoryType.EPISODIC,
    FactKind.STATE: MemoryType.EPISODIC,
}


SLOT_TAG = "slot:"  # an extracted fact's tags carry its single-valued attribute: "slot:residence"


def slot_tag(slot: str) -> str:
    return SLOT_TAG + slot


def slot_in(tags: list[str]) -> str | None:
    """The attribute a memory's tags say it holds, if any."""
    return next((tag[len(SLOT_TAG):] for tag in tags if tag.startswith(SLOT_TAG)), None)


@lru_cache(maxsize=256)
def slot_filter(slot: str) -> Node | None:
    """The filter for the memories holding `slot`."""
    return parse_filters({"jiyi.tags": {"contains": slot_tag(slot)}})


@dataclass(slots=True)
class Fact:
    text: str
    kind: FactKind = FactKind.OTHER
    importance: float = 0.5  # 0..1 as judged at extraction; see stored_importance
    category: Category = Category.FACT
    about: str = "user"  # or "assistant": a fact about the assistant / character
    # Offline extraction knows more about a fact's structure than its text says:
    slot: str | None = None  # a single-valued attribute ("residence", "job"): a new value replaces the old one
    topic: str | None = None  # what a preference or habit is about, to recognise a reversal ("吃素")
    negated: bool = False  # "不再吃素", "no longer vegetarian": this fact reverses an earlier one on `topic`
    sentence: int = -1  # which sentence of its message it came from (offline extraction merges within one)
    # Which of the turn's messages it was made from (positions in the list given to extraction): its provenance.
    # Empty when the extractor does not say (an LLM's): the write path then finds them (core/provenance.py).
    sources: tuple[int, ...] = ()
    categories: tuple[str, ...] = ()  # mem0's categories, when the LLM that extracted the fact named them

    @property
    def memory_type(self) -> MemoryType:
        return _MEMORY_TYPES.get(self.kind, MemoryType.FACT)

    @property
    def stored_importance(self) -> float:
        # jiyi keeps the companion seed's importance scale: 1.5 is an ordinary fact, 2.5 is reviewed for promotion
        # to core, below 0.5 is reviewed for forgetting.
        return round(0.5 + 2.0 * min(max(self.importance, 0.0), 1.0), 3)


@dataclass(slots=True)
class Decision:
    event: Event
    text: str | None = None
    target_id: str | None = None  # the existing memory an UPDATE / DELETE / NONE / BOOST acts on
    old_text: str | None = None
    fact: Fact | None = None
    reason: str = ""


@dataclass(slots=True)
class Candidate:
    """An existing memory shown to the decision step."""

    memory_id: str
    text: str
    similarity: float  # raw cosine with the closest new fact
    about: str = "user"  # whose fact the memory is: "user", or "assistant" for the character's own


_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


def is_chinese(text: str) -> bool:
    """Mostly Chinese: at least a fifth of the letters are CJK (mixed text such as "我在用Python" counts)."""
    letters = [ch for ch in text if ch.isalpha()]
    if not letters:
        return False
    return sum(1 for ch in letters if _CJK.match(ch)) * 5 >= len(letters)
