"""Whose words a candidate is, and which of the speakers a question is about.

In a conversation between named speakers — LoCoMo's "Caroline: …" / "Melanie: …", a SillyTavern group chat (each
message's `name`), a plain client posting "Name: text" — a question that names one of them is answered by that
speaker's own words: "What has Melanie painted?" by Melanie's "Here's a photo of my horse painting", not by
Caroline's "Wow, Melanie, the colours blend so nicely!", which shares as many words with the question. On LoCoMo's
dev split (bench/locomo.py, infer=true), of the evidence turns in the top 10 for a question naming one speaker, 627
were that speaker's and 20 the other's, while 42 % of the turns that were *not* evidence were the other's.

So when a question names some, but not all, of the speakers among the candidates, a candidate spoken by a speaker it
does not name keeps `other_speaker_weight` of its score. Memories with no speaker (an extracted fact, a summary)
and questions that name no speaker ("what did I say about…") are left as they are. A name the question is addressed
to is not what it is about: "Seraphina, what's my dog called?" asks the character about the user's own words. Nor is
a name on the receiving end of what was said or done — "What was Jonah told to do about his knee?", "Who offered to
lend Kwame a drill?", "许航面试前被提醒了什么": others' words answer those.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache

from jiyi.core.messages import speaker_prefix
from jiyi.core.not_names import not_a_name_en
from jiyi.records import Category, MemoryRecord
from jiyi.text import has_cjk


def speaker_of(record: MemoryRecord) -> str | None:
    """Who said the words a memory holds: the message's `name` (actor_id), or the "Name: " its text starts with when
    it is a message kept word for word. None for a memory in no one's words (an extracted fact, a summary)."""
    if record.category is Category.EPISODE:
        return None
    if record.actor_id:
        return record.actor_id
    if record.role is None or len(record.provenance) != 1:
        return None
    return _speaker_prefix(record.content)  # a label such as "Favourite food: pizza" is not a speaker


# The same candidates come back search after search, each asked whose words it is (other_speakers): its text read
# once. Strings in and out: nothing the garbage collector tracks (as retrieval.py's caches of memory texts).
_speaker_prefix = lru_cache(maxsize=50_000)(speaker_prefix)


_GREETING_WORDS = (r"hey|hi|hiya|hello|yo|sup|wassup|dear|oh|ok|okay|so|well|thanks|thank you|morning|"
                   r"good morning|afternoon|good afternoon|evening|good evening|night|good night|g'?day|"
                   r"嘿|嗨|哎|喂|亲爱的|早|早上好|中午好|下午好|晚上好|晚安|你好|在吗")
_GREETING = rf"(?:(?:{_GREETING_WORDS})[\s,，!！]*)?"
_PAUSE = r"[,，!！:：、]"
_END = r"[\s?？!！.。~～…]*$"


# Told, asked, given…: the named one receives what another speaker said or did.
_RECEIVED = (r"(?:told|asked|given|advised|warned|reminded|offered|sent|shown|taught|promised|invited|encouraged|"
             r"recommended|suggested|lent|handed|urged|begged|assured|congratulated|thanked|praised|teased|"
             r"complimented|nicknamed|called|helped|bought|brought|made|paid|pointed|described|introduced)")
_TO_SOMEONE = (r"(?:tell|tells|told|ask|asks|asked|give|gives|gave|lend|lends|lent|send|sends|sent|offer|offers|"
               r"offered|show|shows|showed|remind|reminds|reminded|warn|warns|warned|advise|advises|advised|recommend|"
               r"recommends|recommended|suggest|suggests|suggested|buy|buys|bought|teach|teaches|taught|invite|"
               r"invites|invited|promise|promises|promised|bring|brings|brought|pay|pays|paid|owe|owes|owed|hand|"
               r"hands|handed|introduce|introduces|introduced|congratulate|congratulated|thank|thanks|thanked|help|"
               r"helps|helped)")
_ZH_TO_SOMEONE = r"(?:给|帮|替|叫|让|托|请|提醒|建议|劝|告诉|送|借|教|嘱咐|叮嘱|推荐|介绍|夸|批评|安慰|鼓励)了?"
# Other people as the ones who spoke or acted: "What did the others say about Kasia's win?", "大家怎么劝秦朗的？"
# (as the subject: "Nate has helped others" is Nate's doing).
_OTHERS = re.compile(r"(?:^|\b(?:did|do|does|have|has|had|would|will|was|were|is|are|what|how|who|why)\s+)"
                     r"(?:someone|somebody|anyone|anybody|everyone|everybody|the others|others|the rest|the group)\b"
                     r"|有人|大家|(?:别人|其他人|朋友们)(?:是?怎么|说|觉得|建议|推荐|劝|给|帮|夸|评价|认为)")


@dataclass(frozen=True, slots=True)
class _NamePatterns:
    """A speaker's name in a question: where it is only addressed, where it is mentioned, where it receives."""

    addressed: re.Pattern[str]
    mentioned: re.Pattern[str]
    receives: re.Pattern[str]


@lru_cache(maxsize=2048)
def _patterns(speaker: str) -> _NamePatterns:
    """Compiled once per name (a bounded cache: a store may hold any number of names; past re's own cache of 512
    patterns, building them per search recompiled every one of them on every search - a third of a loaded server's
    CPU, issue 28)."""
    folded = re.escape(speaker.casefold())
    name = folded if has_cjk(speaker) else rf"(?<!\w){folded}(?!\w)(?:'s)?"
    # "Seraphina, …", "Good evening, Rosie. …", "…, 小雨？", "小满你…" (then "you"), "橙子晚上好" (then a greeting)
    addressed = re.compile(rf"^\s*{_GREETING}{name}\s*(?:{_PAUSE}|[.。]|{_END}|(?=你|您)|(?:{_GREETING_WORDS}))"
                           rf"|{_PAUSE}\s*{name}{_END}")
    if has_cjk(speaker):
        receives = re.compile(rf"{name}[^，。？！,.?!\s]{{0,10}}?被|{_ZH_TO_SOMEONE}{name}")
    else:
        # "has Melanie made" is hers, "has Melanie been asked" is not: a perfect tense is passive only with "been".
        asked = (rf"\b(?:(?:was|were|is|are|am)\s+{name}\s+(?:being\s+|getting\s+)?|(?:has|have|had)\s+{name}\s+"
                 rf"been\s+|(?:did|does|do)\s+{name}\s+get\s+)")
        said = (rf"{name}\s+(?:was|were|is|are|am|got|gets|get|(?:has|have|had|will|would)\s+been|(?:is|was)\s+being"
                rf"|will\s+be|would\s+be)\s+")
        receives = re.compile(rf"(?:{asked}|{said})(?:\w+ly\s+)?{_RECEIVED}\b"
                              rf"|\b{_TO_SOMEONE}\s+(?:to\s+|for\s+)?{name}|\b\w+ed\s+(?:to|towards)\s+{name}")
    return _NamePatterns(addressed, re.compile(name), receives)


def named_in(query: str, speakers: Iterable[str]) -> set[str]:
    """The speakers the query names: as a whole word (any case) in alphabetic text, as a substring in Chinese, and
    not only as the one it is addressed to ("Seraphina, …", "…, 小雨？")."""
    lowered = query.casefold()
    named = set()
    for speaker in speakers:
        if speaker.casefold() not in lowered:  # most candidates' speakers: no pattern needed to say no
            continue
        patterns = _patterns(speaker)
        if patterns.mentioned.search(patterns.addressed.sub(" ", lowered)):
            named.add(speaker)
    return named


def receives(query: str, speaker: str) -> bool:
    """Whether the query names `speaker` as the one something was said or done to: "was Jonah told", "Kwame was
    asked", "lend Kwame a drill", "recommend to Dana", "described to Vex"; "许航…被提醒", "给许航", "劝孟瑶"; or asks
    what other people said or did ("someone", "the others", "有人", "大家")."""
    lowered = query.casefold()
    return bool(_OTHERS.search(lowered) or _patterns(speaker).receives.search(lowered))


def whose_words(query: str, speakers: Iterable[str]) -> set[str]:
    """The speakers whose own words the query asks about: those it names, less those on the receiving end."""
    return {speaker for speaker in named_in(query, speakers) if not receives(query, speaker)}


# A name as a question writes it: capitalised where a sentence does not start (nor "I"), letters only.
_CAPITALISED = re.compile(r"(?<=[^.!?。！？\s][\s,，])([A-Z][a-z]+(?:[-'][A-Z]?[a-z]+)?)\b|^([A-Z][a-z]+)(?=[,，]|'s)")


def written_as_names(query: str, records: Iterable[MemoryRecord]) -> set[str]:
    """The words of an English query written in lowercase that the records write as a name, capitalised inside a
    sentence ("darren what job ah?" / "What does Darren think?"), less the words that look like names and are not
    (not_names.json: days, months, holidays …). Casefolded."""
    words = {w for w in _LOWERCASE_WORD.findall(query) if not not_a_name_en(w)}
    if not words:
        return set()
    written: set[str] = set()
    for record in records:
        if has_cjk(record.content):
            continue
        written |= {name.casefold() for a, b in _CAPITALISED.findall(record.content) if (name := a or b)}
        if words <= written:
            break
    return words & written


_LOWERCASE_WORD = re.compile(r"\b[a-z]{3,}\b")


def names_someone(query: str, records: Iterable[MemoryRecord]) -> set[str]:
    """The people (or pets) of the user's memories a question names — a speaker of the candidates ("What did Caroline
    research?"), or a capitalised name the candidates hold ("How's Biscuit?") — and not only addresses ("Good evening,
    Rosie", "night Nova")."""
    records = list(records)
    known = {speaker for record in records if (speaker := speaker_of(record)) is not None}
    capitalised = {a or b for a, b in _CAPITALISED.findall(query)} - {"I"}
    known |= {name for name in capitalised if any(name in record.content for record in records)}
    return named_in(query, known) if known else set()


def other_speakers(query: str, records: Mapping[str, MemoryRecord]) -> set[str]:
    """The ids of the candidates spoken by a speaker the query does not ask about (whose_words), when it asks about
    some of the candidates' speakers but not all of them; otherwise none. A query of several lines is a transcript
    (the context stage's "小雨: 你好，我是小雨老师 / user: … / User question: …"): the names in it say who spoke, not
    whom it asks about, so it sets no one apart."""
    if "\n" in query.strip():
        return set()
    spoken = {memory_id: speaker for memory_id, record in records.items()
              if (speaker := speaker_of(record)) is not None}
    speakers = set(spoken.values())
    if len(speakers) < 2:
        return set()
    named = whose_words(query, speakers)
    if not named or named == speakers:
        return set()
    return {memory_id for memory_id, speaker in spoken.items() if speaker not in named}
