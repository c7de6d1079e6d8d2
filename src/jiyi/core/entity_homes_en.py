"""English households: who lives with whom and where, said as a list after "with" ("I live with my mom, her
boyfriend Ray and my half brother Dante", "Fiona lives in Aberdeen with her husband, Graeme", "moved to Leeds w Sam").

Everyone the list names lives with the subject and, when a place is said before or after the list, in that place.
The list's people are introduced by the naming rules (entity_rules_en._naming) before these claims are read, so a
name here is someone the graph already knows from this message or an earlier one.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from jiyi.core.entity_claims import ME, Claim, Ref, named, pronoun

_NAME = r"[A-Z][a-zA-Z'-]+"
_PLACE = r"(?P<place>[A-Z][a-zA-Z.-]+(?:\s+[A-Z][a-zA-Z.-]+)*)"
# Who lives: a pronoun or a name just before the verb, or nobody at a sentence's start or after "and" ("I'm retired
# and live in Sarasota"): the user, when a sentence says "I" before it.
_LIVER = (r"(?:(?:^|(?<=\s))(?P<subj>I|i|we|We|he|He|she|She|they|They|" + _NAME + r")"
          r"(?:'s|'m|'re|\s+is|\s+am|\s+are|\s+still|\s+now|\s+just|\s+also|\s+currently)*\s+"
          r"|(?P<elided>^|\band\s+))")
# Not "staying with": a weekend at a friend's is a stay, not a home
_HOME_VERB = r"(?i:live|lives|living|lived|moved|moving|moves)(?:\s+(?i:back|together|now))?"
_LIVES_WITH = re.compile(
    _LIVER + _HOME_VERB + r"(?:\s+(?:(?i:in)|(?i:to))\s+" + _PLACE + r")?\s+(?i:with|w/?)\s+")
_THEN_IN = re.compile(r"\s+(?i:in|to)\s+" + _PLACE)
_TERM = r"(?P<term>[a-z][a-z-]*)"
_ADJ = r"(?:(?i:older|younger|little|lil|big|baby|twin|half|step|second|new|elder)\s+)*"
_ITEM = re.compile(
    r"(?P<owner>(?i:my|our|his|her|their))\s+" + _ADJ + _TERM + r"(?:\s*,?\s+(?P<name>" + _NAME + r"))?"
    r"|(?P<bare>" + _NAME + r")|(?P<pron>(?i:me|us|him|her|them))\b")
_SEPARATOR = re.compile(r"\s*,\s*(?:and\s+)?|\s+(?:and|&)\s+")
_OBJECT_PRONOUN = {"me": ME, "us": ME, "him": pronoun("he"), "her": pronoun("she"), "them": pronoun("they")}
_SAYS_I = re.compile(r"\b(?:I|I'm|I've|i|im|i'm)\b")


def household_claims(sentence: str, kin: dict[str, tuple[str, str | None]], unique: frozenset[str],
                     is_name: Callable[[str], bool]) -> list[Claim]:
    """The lives_with and lives_in claims of one sentence. `kin` and `unique`: the English kinship vocabulary and
    the terms one person holds at a time ("my mom" is someone; "my cousins" is not one person); `is_name`: the
    rules' test of a word that can be a name."""
    found: list[Claim] = []
    for m in _LIVES_WITH.finditer(sentence):
        subject = _liver(m, sentence)
        if subject is None:
            continue
        people, end = _people(sentence, m.end(), kin, unique, is_name)
        if not people:
            continue
        after = _THEN_IN.match(sentence, end)
        place_said = m.group("place") or (after.group("place") if after else None)
        found += [Claim(subject, "lives_with", person) for person in people if person != subject]
        if place_said:
            place = named(place_said.rstrip("."), "place")
            found += [Claim(who, "lives_in", place) for who in (subject, *people)]
    return found


def _liver(m: re.Match[str], sentence: str) -> Ref | None:
    said = m.group("subj")
    if said is None:
        # "Live w my mom" opening a sentence, or "... and live in Sarasota with Walt" after the user spoke of herself
        if m.group("elided") == "" and m.start() == 0:
            return ME
        return ME if _SAYS_I.search(sentence[:m.start()]) else None
    folded = said.casefold()
    if folded in ("i", "we"):
        return ME
    if folded in ("he", "she", "they"):
        return pronoun(folded)
    return named(said)


def _people(sentence: str, start: int, kin: dict[str, tuple[str, str | None]], unique: frozenset[str],
            is_name: Callable[[str], bool]) -> tuple[list[Ref], int]:
    """The people a list names from `start`, and where the list ends. An item that is not one person ("my
    parents", "the kids") is passed over; anything that is no item ends the list."""
    people: list[Ref] = []
    at = end = start
    while (item := _ITEM.match(sentence, at)) is not None:
        person = _person(item, kin, unique, is_name)
        if person is not None:
            people.append(person)
        at = end = item.end()
        separator = _SEPARATOR.match(sentence, at)
        if separator is None:
            break
        at = separator.end()
    return people, end


def _person(item: re.Match[str], kin: dict[str, tuple[str, str | None]], unique: frozenset[str],
            is_name: Callable[[str], bool]) -> Ref | None:
    if item.group("pron"):
        return _OBJECT_PRONOUN[item.group("pron").casefold()]
    if item.group("bare"):
        return named(item.group("bare"), "person") if is_name(item.group("bare")) else None
    term = item.group("term").casefold()
    if term not in kin:
        return None
    if item.group("name") and is_name(item.group("name")):
        return named(item.group("name"), "person")
    if item.group("owner").casefold() in ("my", "our") and term in unique:
        return named(term, "person", f"my {term}")
    return None
