"""What the Chinese and English rule sets share: a rule, how a rule's fact is made, and the first rule that fits."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from jiyi.core.facts import Fact, FactKind
from jiyi.records import Category


@dataclass(frozen=True, slots=True)
class Rule:
    name: str
    pattern: Any  # re.Pattern[str]
    build: Callable[[Any, str], Fact | None]  # (match, clause) → a fact, or None when the match is not one


def make_fact(text: str, kind: FactKind, importance: float, **structure: Any) -> Fact:
    """`core=True` among the structure marks a stable identity fact (category core)."""
    category = Category.CORE if structure.pop("core", False) else Category.FACT
    return Fact(text=text, kind=kind, importance=importance, category=category, **structure)


def first_fact(rules: Sequence[Rule], clause: str) -> Fact | None:
    """The fact of the first rule that matches the clause and accepts what it matched."""
    for rule in rules:
        match = rule.pattern.search(clause)
        if match:
            fact = rule.build(match, clause)
            if fact is not None:
                return fact
    return None


def last_relation(extract: Callable[[str], list[Fact]], texts: Iterable[str]) -> str | None:
    """The family member or pet the user spoke of most recently, for "她叫…" / "her name is…" in a later message."""
    relation = None
    for text in texts:
        for fact in extract(text):
            if fact.kind is FactKind.RELATIONSHIP and fact.topic:
                relation = fact.topic
    return relation


def unique_facts(facts: Iterable[Fact], fold_case: bool = False) -> list[Fact]:
    """Each fact text once, first occurrence kept; it cites the messages of every occurrence."""
    unique: dict[str, Fact] = {}
    for fact in facts:
        kept = unique.setdefault(fact.text.lower() if fold_case else fact.text, fact)
        if kept is not fact and fact.sources:
            kept.sources = tuple(dict.fromkeys((*kept.sources, *fact.sources)))
    return list(unique.values())


# --- who "she" / "它" / "his" is: the last person or thing the user named ----------------------------------------

FEMALE, MALE, PERSON, ANIMAL, THING, PLURAL = "f", "m", "n", "a", "t", "p"
# Which mentions a pronoun can stand for: she → a woman, a person of either sex or a pet; it → a pet or a thing.
_REFERS_TO = {FEMALE: {FEMALE, PERSON, ANIMAL}, MALE: {MALE, PERSON, ANIMAL}, THING: {ANIMAL, THING},
              PLURAL: {PLURAL}}


@dataclass(frozen=True, slots=True)
class Mention:
    """Someone or something the user named: "我女儿" / "my daughter", "我家的猫" / "my cat Luna", "my car"."""

    phrase: str  # how a first-person clause names it: "我女儿", "我家的猫", "my daughter", "my car"
    noun: str  # the relation or thing itself: 女儿, daughter, car (a fact's topic)
    gender: str  # FEMALE, MALE, PERSON (either), ANIMAL (any pronoun), THING (it / 它 only), PLURAL
    owned: bool  # the user's own (我的 / my …); someone else's (my friend's cat, 同事的狗) is never resolved to
    name: str | None = None  # 胖虎, Luna: a clause that starts with the name is about it too


def resolve(mentions: Sequence[Mention], pronoun: str) -> Mention | None:
    """The last mention `pronoun` (FEMALE, MALE, THING or PLURAL) can stand for, if it is the user's own: when the
    nearest fitting mention is someone else's (我闺蜜的猫 … 它), the pronoun is about them, not about the user."""
    for mention in reversed(mentions):
        if mention.gender in _REFERS_TO[pronoun]:
            return mention if mention.owned else None
    return None


def named(mentions: Sequence[Mention], name: str) -> Mention | None:
    """The user's own relation or pet called `name` (胖虎, Luna), the latest one if several."""
    for mention in reversed(mentions):
        if mention.name and mention.name.lower() == name.lower():
            return mention if mention.owned else None
    return None


# --- slots for what changes over time ------------------------------------------------------------------------------

MOOD_SLOT = "mood"  # how the user feels these days: the newest mood supersedes the one before (the old is history)
HABIT_SLOT = "habit:"  # + the activity ("habit:跑步", "habit:run", "habit:coffee"): a routine and what ends it


def habit_slot(key: str) -> str:
    return HABIT_SLOT + key
