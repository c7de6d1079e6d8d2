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
to is not what it is about: "Seraphina, what's my dog called?" asks the character about the user's own words.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from jiyi.core.messages import speaker_prefix
from jiyi.records import Category, MemoryRecord
from jiyi.text import has_cjk

# A name as a speaker prefix gives it: "Caroline", "Mary Jane", "Dr. Chen", "小明" — not "Favourite food" or
# "Note to self", which a memory written as "label: value" starts with.
_ALPHABETIC_NAME = re.compile(r"^[A-Z][\w'.-]*(?: [A-Z][\w'.-]*){0,2}$")
_CJK_NAME_MAX = 6


def speaker_of(record: MemoryRecord) -> str | None:
    """Who said the words a memory holds: the message's `name` (actor_id), or the "Name: " its text starts with when
    it is a message kept word for word. None for a memory in no one's words (an extracted fact, a summary)."""
    if record.category is Category.EPISODE:
        return None
    if record.actor_id:
        return record.actor_id
    if record.role is None or len(record.provenance) != 1:
        return None
    name = speaker_prefix(record.content)
    return name if name is not None and _name_like(name) else None


def _name_like(name: str) -> bool:
    if has_cjk(name):
        return len(name) <= _CJK_NAME_MAX and " " not in name
    return bool(_ALPHABETIC_NAME.match(name))


_GREETING = r"(?:(?:hey|hi|hello|dear|oh|ok|okay|so|well|嘿|嗨|哎|喂|亲爱的)[\s,，]*)?"
_PAUSE = r"[,，!！:：、]"
_END = r"[\s?？!！.。~～…]*$"


def named_in(query: str, speakers: Iterable[str]) -> set[str]:
    """The speakers the query is about: named as a whole word (any case) in alphabetic text, as a substring in
    Chinese, and not only as the one it is addressed to ("Seraphina, …", "…, 小雨？")."""
    lowered = query.casefold()
    named = set()
    for speaker in speakers:
        wanted = re.escape(speaker.casefold())
        name = wanted if has_cjk(speaker) else rf"(?<!\w){wanted}(?!\w)"
        unaddressed = re.sub(rf"^\s*{_GREETING}{name}\s*{_PAUSE}|{_PAUSE}\s*{name}{_END}", " ", lowered)
        if re.search(name, unaddressed):
            named.add(speaker)
    return named


def other_speakers(query: str, records: Mapping[str, MemoryRecord]) -> set[str]:
    """The ids of the candidates spoken by a speaker the query does not name, when it names some of the candidates'
    speakers but not all of them; otherwise none."""
    spoken = {memory_id: speaker for memory_id, record in records.items()
              if (speaker := speaker_of(record)) is not None}
    speakers = set(spoken.values())
    if len(speakers) < 2:
        return set()
    named = named_in(query, speakers)
    if not named or named == speakers:
        return set()
    return {memory_id for memory_id, speaker in spoken.items() if speaker not in named}
