"""English names said in passing: "went hiking with Melanie and her kids", "Jon's new studio", "Thanks, Caroline!",
"we drove to Tucson" — a person, pet, place or organisation with no kinship or role term beside it (those are
entity_rules_en.py's).

A capitalised word is a candidate when it is not a word of not_names.json (Thankfully, Anyway, May, English...) and
not the first of its sentence, where every word is capitalised; a first word counts only when the message also has
it mid-sentence. A candidate becomes an entity only where its context says what it is:
- a person: "with X", "X and I", "me and X", "X said / told me / texted...", "X's <noun>" (not "X's for dinner"),
  a greeting or thanks before it ("Hey Mel", "Thanks, Caroline"), a name closing its sentence after a comma
  ("you're right, Caroline."), or "and X" after a person;
- a place: "in X", "from X" after I'm / we're / came, "to X" after a verb of going (went, moved, drove, trip);
- an organisation: "a deal with X", "talks with X", "sponsored by X".
Not "the X" nor "X 7" (the Buick, Game 7): a thing or an event, the context does not say which.
Elsewhere a capitalised word names only an entity the graph already knows (core/entities.find_mentions). No relation
is claimed: a name in passing says someone is in the user's life, not how.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from jiyi.core.entity_claims import Claim, named
from jiyi.core.not_names import not_a_name_en

# A capitalised word, McDonald and O'Brien included; ALL-CAPS words (LGBTQ, NYC) are not read.
_CAPITAL = re.compile(r"(?<![\w'’&-])[A-Z][a-z]*(?:[A-Z][a-z]+)?(?:['’-][A-Z][a-z]+)?(?!\w)")
_OPENING = " \t\"'“‘([*-"
_MAX_WORDS = 3
_PERSON_BEFORE = re.compile(
    r"(?:\b(?:with|me\s+and|hey|hi|hiya|hello|yo|thanks|thank\s+you|thx|congrats|congratulations|sorry|dear|bye|"
    r"love\s+you|miss\s+you|met|told|asked|texted|messaged|hugged|thanked|babysat|babysitting)|\bw/)[\s,]*$", re.I)
_PERSON_AFTER = re.compile(
    r"^(?:\s+and\s+(?:I|me)\b|\s+(?:said|says|told|tells|texted|texts|asked|asks|messaged|thinks|thought|wants|"
    r"wanted|mentioned|suggested|recommended|invited|helped|called\s+me|came\s+over|is\s+coming|was\s+telling|"
    r"got\s+married|passed\s+away|passed|died|is\s+pregnant|had\s+a\s+baby)\b)")
# "Jon's new studio" is Jon's; "McDonald's for lunch", "Jon's at 8" are places or times
_POSSESSIVE = re.compile(r"^['’]s\s+(?!(?:for|to|in|at|on|and|or|with|tonight|today|yesterday|tomorrow|"
                         r"this|last|next|again|too|lol|haha)\b)[a-z]")
_THE = re.compile(r"\bthe\s+$", re.I)
_NUMBERED = re.compile(r"^\s*\d")
# "talks with Gatorade", "a deal with Nike": a company on the other side of business
_DEALS_WITH = re.compile(r"\b(?:deals?|talks|contracts?|partnership|sponsorships?|sponsored\s+by|signed\s+with|"
                         r"collab(?:oration)?s?)\s+(?:with\s+)?$", re.I)
_VOCATIVE_END = re.compile(r"^[\s!.?…~]*$")
_AFTER_A_COMMA = re.compile(r",\s*$")
# "my home country, Sweden." names what the words before the comma said, not who is spoken to
_APPOSITION = re.compile(r"\b(?:my|our|his|her|their|the|a|an)\s+(?:\S+\s+){0,2}\S+,\s*$", re.I)
_AND_AFTER_PERSON = re.compile(r"^\s*(?:,|and|&|,\s*and)\s*$")
_PLACE_BEFORE = re.compile(
    r"\b(?:in|near|around|across|outside|(?:am|'m|’m|are|'re|’re|is|was|were|come|comes|came|moved|flew|back|"
    r"originally|all\s+the\s+way)\s+from|(?:go|goes|going|gone|went|come|comes|coming|came|move|moves|moving|moved|"
    r"drive|drove|driving|fly|flew|flying|travel|travelled|traveled|traveling|travelling|trip|vacation|holiday|"
    r"head|headed|heading|back|return|returned|returning|visit|road\s+trip)\s+(?:back\s+)?to)\s+(?:the\s+)?$", re.I)


def _phrases(sentence: str) -> list[tuple[str, int, int]]:
    """(phrase, start, end): runs of capitalised words one space apart, leading not-a-name words dropped and cut at
    the next one ("Thanks Caroline" is Caroline; "Happy New Year" is nothing)."""
    runs: list[list[re.Match[str]]] = []
    for m in _CAPITAL.finditer(sentence):
        if runs and m.start() == runs[-1][-1].end() + 1 and sentence[m.start() - 1] == " ":
            runs[-1].append(m)
        else:
            runs.append([m])
    found = []
    for run in runs:
        while run and (not_a_name_en(run[0].group()) or len(run[0].group()) < 2):
            run = run[1:]
        kept = []
        for m in run:
            if not_a_name_en(m.group()) or len(m.group()) < 2:
                break
            kept.append(m)
        if kept and len(kept) <= _MAX_WORDS:
            found.append((" ".join(m.group() for m in kept), kept[0].start(), kept[-1].end()))
    return found


def _at_start(sentence: str, start: int) -> bool:
    return not sentence[:start].strip(_OPENING)


def _kind(sentence: str, start: int, end: int, after_person: int | None) -> str | None:
    before, after = sentence[:start], sentence[end:]
    if _THE.search(before) or _NUMBERED.match(after):
        return None  # "the Buick's air conditioning", "Game 7": a thing, an event or a place, not said which
    if _DEALS_WITH.search(before):
        return "organisation"
    if _PERSON_BEFORE.search(before) or _PERSON_AFTER.match(after) or _POSSESSIVE.match(after):
        return "person"
    if _AFTER_A_COMMA.search(before) and _VOCATIVE_END.match(after) and not _APPOSITION.search(before):
        return "person"
    if after_person is not None and _AND_AFTER_PERSON.match(sentence[after_person:start]):
        return "person"
    if _PLACE_BEFORE.search(before):
        return "place"
    return None


def claims(sentences: Sequence[str]) -> list[Claim]:
    """The names the message's `sentences` say in passing, as claims that only name (no relation)."""
    spans = [(sentence, _phrases(sentence)) for sentence in sentences]
    mid_sentence = {phrase.casefold() for sentence, phrases in spans for phrase, start, _ in phrases
                    if not _at_start(sentence, start)}
    found: list[Claim] = []
    seen: set[str] = set()
    for sentence, phrases in spans:
        last_person: int | None = None
        for phrase, start, end in phrases:
            if _at_start(sentence, start) and phrase.casefold() not in mid_sentence:
                continue
            kind = _kind(sentence, start, end, last_person)
            last_person = end if kind == "person" else None
            if kind is not None and phrase.casefold() not in seen:
                seen.add(phrase.casefold())
                found.append(Claim(named(phrase, kind)))
    return found
