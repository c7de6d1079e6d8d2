"""The assistant's name said to it ("小暖在不在", "wren i'm so tired today", "Good evening, Rosie."): a way of
addressing, not a word about the user's life.

Companion users open and close messages with the character's name, so their stored messages hold it too ("小暖，跟你
唠个事儿…"): searched for, the name matches every one of them and brings the user's memories to a greeting. The
client says the name (SillyTavern sends char_name); this finds where the message *addresses* by it — at its start
(after a greeting: "hey Sunny you awake"), at its end ("早晨晴晴", "Bonjour Léo!") or set off by punctuation
("Good evening, Rosie. Just saying hello.") — so that a name which is also a word keeps its meaning elsewhere ("it
was sunny all day" to a character called Sunny). String operations only: the name is runtime data, and a pattern
built from it would be compiled on every request.
"""

from __future__ import annotations

from jiyi.core.intent import GREETINGS
from jiyi.text import has_cjk, query_terms

# Greetings that jiyi.text drops as stop words before intent.GREETINGS could see them.
_GREETING_STOPWORDS = frozenset({"hey", "hi", "hello", "oh", "ok", "okay", "dear", "good"})
# What may stand between a vocative and the edge of the message, or set it off inside one.
_PUNCTUATION = frozenset(",，.。!！?？~～…、;；:：-—()（）\"'“”‘’")


def _is_word_char(ch: str) -> bool:
    return ch.isalnum() or ch in "_'’"


def _drawn_in(word: str, keep: int) -> str:
    """A letter said three times or more ("heyyy", "hiii") kept `keep` times."""
    out: list[str] = []
    for ch in word:
        if len(out) >= keep and all(prev == ch for prev in out[-keep:]):
            continue
        out.append(ch)
    return "".join(out)


def _greeting(word: str) -> bool:
    for form in {word, _drawn_in(word, 1), _drawn_in(word, 2)}:
        terms = query_terms(form)
        if form in _GREETING_STOPWORDS or (terms and all(term in GREETINGS for term in terms)):
            return True
    return False


def _only_greetings(text: str) -> bool:
    """Nothing but punctuation, emoji, spaces and English words of greeting ("hey", "good morning", "yo")."""
    words = "".join(ch if _is_word_char(ch) else " " for ch in text.lower()).split()
    return all(not has_cjk(word) and _greeting(word) for word in words)


def _set_off(text: str, start: int, end: int) -> bool:
    """Whether text[start:end] stands between the message's edges or punctuation, spaces aside."""
    before = text[:start].rstrip()
    after = text[end:].lstrip()
    return (not before or before[-1] in _PUNCTUATION) and (not after or after[0] in _PUNCTUATION)


def _addresses(text: str, start: int, end: int, cjk: bool) -> bool:
    """Said to the assistant: first in the message (greetings aside), set off by punctuation, or — a Chinese name —
    last ("早晨晴晴", "早上好呀暖暖"). Not an English name last after other words: "it was sunny", "ask Sage"."""
    if _only_greetings(text[:start]) or _set_off(text, start, end):
        return True
    return cjk and not any(_is_word_char(ch) for ch in text[end:])


def without_the_name(message: str, name: str | None) -> str:
    """The message with every place it addresses the assistant by `name` taken out; the message itself when the
    name is not said that way, or when nothing else would be left (a message that is only the name)."""
    name = (name or "").strip()
    if not name or len(name) > 64:
        return message
    lowered, wanted = message.lower(), name.lower()
    latin = not has_cjk(name)
    spans: list[tuple[int, int]] = []
    at = lowered.find(wanted)
    while at != -1:
        end = at + len(wanted)
        whole_word = not latin or ((at == 0 or not _is_word_char(message[at - 1]))
                                   and (end == len(message) or not _is_word_char(message[end])))
        if whole_word and _addresses(message, at, end, not latin):
            spans.append((at, end))
        at = lowered.find(wanted, end)
    if not spans:
        return message
    pieces, last = [], 0
    for start, end in spans:
        pieces.append(message[last:start])
        last = end
    pieces.append(message[last:])
    rest = " ".join("".join(pieces).split()).strip("".join(_PUNCTUATION) + " ")
    return rest if any(_is_word_char(ch) for ch in rest) else message
