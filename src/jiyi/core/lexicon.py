"""Words that mean the same thing meet: a curated lexicon for what companions talk about, and English word forms.

"What instrument do I play?" shares no word with "I sold my violin, I'm learning the cello instead", nor "Any news
about my apartment?" with "My landlord finally fixed the heating", and the small embedding model does not join them
either. Two data files, shipped with the package:

- `lexicon.json`: concepts (instrument, housing, work, health, mother, …), each with *heads* — the category words a
  question uses ("instrument", "乐器") — and *member groups* — the words for one thing ("violin", "fiddle",
  "小提琴"). A head reaches every member and the other heads; a member reaches its own group and the heads, never
  its sibling groups: "What's my dad's job?" must not meet "My mom is a nurse" through "family".
- `word_forms.json`: English inflections stemming does not join (go / went / gone, child / children): each form
  reaches the others.

A query word reaches words; retrieval searches those too and counts a memory holding one as holding the query word,
a little less surely for a concept than for a word form (`CONCEPT_CREDIT`). Words are compared as jiyi.text analyses
them (English stems; Chinese words as they are, found in a memory as substrings).
"""

from __future__ import annotations

import itertools
import json
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache, lru_cache
from importlib import resources
from typing import Any

from jiyi.text import has_cjk, normalize, query_terms

log = logging.getLogger("jiyi.lexicon")

# What a memory holding a word of the same concept (not the word itself, nor one of its forms) counts for: it speaks
# of the same thing, in other words.
CONCEPT_CREDIT = 0.8


@cache  # the lexicon's own words: a bounded set, each analysed once while it is built
def analysed(word: str) -> str | None:
    """A lexicon word as the index holds words: its stems joined by spaces (a phrase), or None for a stopword."""
    if has_cjk(word):
        return normalize(word).replace(" ", "") or None
    terms = query_terms(word)
    return " ".join(terms) if terms else None


@dataclass(frozen=True)
class Lexicon:
    reaches: dict[str, dict[str, float]]  # analysed word -> {analysed word it meets: credit}
    cjk_words: tuple[str, ...]  # its Chinese words, longest first (found in a question as substrings)
    concepts: dict[str, frozenset[str]]  # analysed word -> the concepts it is a head or a member of
    # Where each Chinese word stands in cjk_words, and their lengths: a question's substrings are looked up, instead
    # of testing each of the ~4,200 words against the question (0.7 ms of every search's CPU).
    _cjk_order: dict[str, int] = field(init=False, repr=False, compare=False)
    _cjk_lengths: tuple[int, ...] = field(init=False, repr=False, compare=False)
    # Whether every credit is above 0 (build_lexicon makes no other): reach() then copies a word's reach whole.
    _credits_positive: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_cjk_order", {word: index for index, word in enumerate(self.cjk_words)})
        object.__setattr__(self, "_cjk_lengths", tuple(sorted({len(word) for word in self.cjk_words})))
        object.__setattr__(self, "_credits_positive",
                           all(credit > 0.0 for met in self.reaches.values() for credit in met.values()))

    def cjk_words_in(self, text: str) -> list[str]:
        """The lexicon's Chinese words found in `text` as substrings, in cjk_words' order (longest first)."""
        found = {text[start:start + length] for length in self._cjk_lengths
                 for start in range(len(text) - length + 1)}
        return sorted((word for word in found if word in self._cjk_order), key=self._cjk_order.__getitem__)

    def joins(self, first: str, second: str) -> bool:
        """Whether the lexicon joins two words: forms of one word, synonyms, or a category word and its member."""
        return second in self.reaches.get(first, {}) or first in self.reaches.get(second, {})

    def same_concept(self, first: str, second: str) -> bool:
        """Whether two words belong to one concept, as siblings too (violin, cello): what a change replaces
        ("I sold my violin, I'm learning the cello"), where retrieval must not join them."""
        return not self.concepts.get(first, frozenset()).isdisjoint(self.concepts.get(second, frozenset()))

    def reach(self, question: str, terms: Sequence[str]) -> dict[str, dict[str, float]]:
        """For each of the question's terms, the words it meets ({word: credit}; terms the lexicon does not know
        are left out). A term meets what the lexicon gives for it, for an English phrase of it and the next term
        ("musical instrument"), and for a Chinese lexicon word found in the question's text that holds it or that
        it holds (jieba cuts 我最近身体 into 最近 / 身体, and 掉头发 as 掉 / 头发)."""
        found: dict[str, dict[str, float]] = {}
        added: set[tuple[str, str]] = set()

        def add(term: str, word: str) -> None:
            # A head word reaches its whole concept (猫, 医生: ~300 words), and a term is often added the same word
            # twice (医生 as a term, then as a Chinese word of the question): once is enough, adding it again changes
            # nothing. Into a term's empty reach, the word's reach is copied whole (in its order, less the term).
            if (term, word) in added:
                return
            added.add((term, word))
            met = found.get(term)
            if met is None and self._credits_positive:
                found[term] = met = dict(self.reaches[word])
                met.pop(term, None)
                return
            if met is None:
                found[term] = met = {}
            for other, credit in self.reaches[word].items():
                if other != term and met.get(other, 0.0) < credit:
                    met[other] = credit

        for term in terms:
            if term in self.reaches:
                add(term, term)
        for first, second in itertools.pairwise(terms):
            if (phrase := f"{first} {second}") in self.reaches:
                add(first, phrase)
                add(second, phrase)
        for word in self.cjk_words_in(normalize(question).replace(" ", "")):
            for term in terms:
                if has_cjk(term) and (term in word or word in term):
                    add(term, word)
        return found

    def words_of(self, concept_ids: Iterable[str]) -> WordSet:
        """The heads and members of some concepts, prepared to be looked for in memories (WordSet.held_by)."""
        wanted = frozenset(concept_ids)
        return WordSet.of(word for word, ids in self.concepts.items() if not ids.isdisjoint(wanted))

    @staticmethod
    def holds(word: str, words: Sequence[str] | frozenset[str], text: str) -> bool:
        """Whether a memory (its index words and normalised text) holds a lexicon word: a Chinese word as a substring
        (jieba cuts the same word differently in different sentences), but one character only as a word of its own
        (烟 in 没碰烟了, not in 烟雾报警器; 酒 in 喝酒, not in 酒会)."""
        if has_cjk(word):
            return word in words if len(word) == 1 else word in text
        return all(part in words for part in word.split(" "))


@dataclass(frozen=True)
class WordSet:
    """Lexicon words to look for in a memory, each found as Lexicon.holds finds it, at the cost of a few set lookups
    per word of the memory rather than one test per word of the set (a concept has hundreds)."""
    words: frozenset[str]  # found as index words: English stems, single Chinese characters
    phrases: dict[str, tuple[tuple[str, ...], ...]]  # English phrases by their first word: the words after it
    cjk: frozenset[str]  # Chinese words of two characters or more: found as substrings of the text
    cjk_lengths: tuple[int, ...]

    @classmethod
    def of(cls, analysed_words: Iterable[str]) -> WordSet:
        words: set[str] = set()
        phrases: dict[str, list[tuple[str, ...]]] = {}
        cjk: set[str] = set()
        for word in analysed_words:
            if has_cjk(word) and len(word) > 1:
                cjk.add(word)
            elif " " in word and not has_cjk(word):
                first, *rest = word.split(" ")
                phrases.setdefault(first, []).append(tuple(rest))
            else:
                words.add(word)
        return cls(frozenset(words), {first: tuple(rests) for first, rests in phrases.items()}, frozenset(cjk),
                   tuple(sorted({len(word) for word in cjk})))

    def held_by(self, words: Sequence[str], text: str) -> bool:
        """Whether a memory (its index words and normalised text) holds one of the words."""
        if not self.words.isdisjoint(words):
            return True
        if any(all(part in words for part in rest) for word in words for rest in self.phrases.get(word, ())):
            return True
        return has_cjk(text) and any(text[start:start + length] in self.cjk for length in self.cjk_lengths
                                     for start in range(len(text) - length + 1))


def _groups(data: dict[str, Any]) -> Iterable[tuple[str, list[str], list[list[str]]]]:
    for concept in data.get("concepts", []):
        heads = [w for lang in ("en", "zh") for w in concept.get("heads", {}).get(lang, [])]
        members = [[w for lang in ("en", "zh") for w in group.get(lang, [])] for group in concept.get("members", [])]
        yield concept["id"], heads, members


def build_lexicon(concepts_data: dict[str, Any], forms: dict[str, Any]) -> Lexicon:
    reaches: dict[str, dict[str, float]] = {}
    concepts: dict[str, set[str]] = {}

    def link(word: str, others: Iterable[str], credit: float) -> None:
        own = analysed(word)
        if own is None:
            return
        met = reaches.setdefault(own, {})
        for other in others:
            target = analysed(other)
            if target is not None and target != own and met.get(target, 0.0) < credit:
                met[target] = credit

    for concept, heads, members in _groups(concepts_data):
        every = [w for group in members for w in group]
        for word in [*heads, *every]:
            if (own := analysed(word)) is not None:
                concepts.setdefault(own, set()).add(concept)
        for head in heads:
            link(head, [*heads, *every], CONCEPT_CREDIT)
        for group in members:
            for word in group:
                link(word, [*group, *heads], CONCEPT_CREDIT)
    for group in forms.get("groups", []):
        for word in group:
            link(word, group, 1.0)
    reaches = {word: met for word, met in reaches.items() if met}
    cjk = tuple(sorted((w for w in reaches if has_cjk(w) and len(w) > 1), key=len, reverse=True))
    return Lexicon(reaches, cjk, {word: frozenset(ids) for word, ids in concepts.items()})


@lru_cache(maxsize=1)
def lexicon() -> Lexicon:
    """The shipped lexicon (read once). A broken install without its data files searches without it (with a
    warning) rather than failing every search."""
    folder = resources.files("jiyi.core")
    try:
        concepts = json.loads(folder.joinpath("lexicon.json").read_text(encoding="utf-8"))
        forms = json.loads(folder.joinpath("word_forms.json").read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        log.warning("the concept lexicon is missing (%s): words are matched as they are", exc)
        return build_lexicon({}, {})
    return build_lexicon(concepts, forms)
