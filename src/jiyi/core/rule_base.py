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
    """Each fact text once, first occurrence kept."""
    unique: dict[str, Fact] = {}
    for fact in facts:
        unique.setdefault(fact.text.lower() if fold_case else fact.text, fact)
    return list(unique.values())
