"""Names a lowercase writer leaves lowercase, recased where the grammar says a name stands ("moved to pilsen w
jasmine", "first day at nationwide", "stationed in dayton"), so that the rules, which know a name by its capital,
read them.

Only after a verb of living or moving (moved to, lives in, stationed in) and a job's cue (first day at, internship
at, works at): one word (two with a head noun: "lous diner") up to a comma, the end or a preposition. The place or
the organisation there is a name whatever its case. A word of the closed class of general places and workplaces
("home", "campus", "work", "the dorms") or any function word stays as it is. Then "with" / "w" after such a place
names whom one lives with.
"""

from __future__ import annotations

import re
from collections.abc import Callable

# Where anyone lives or works without it being a name: general nouns, said in any town
GENERIC = frozenset("""home house flat apartment apt place room dorm dorms hall halls campus town city country
countryside suburbs suburb uptown downtown upstate abroad overseas there here somewhere nowhere uni university college
school work office job gym church hospital clinic shop store mall bar pub cafe restaurant kitchen warehouse factory
farm site base army navy military airforce lab library class practice rehab hotel hostel airport station center centre
company firm startup agency team night nights day days week weeks weekend weekends summer winter spring fall
autumn morning mornings evening evenings""".split())

# Head nouns that end a name of two words ("lous diner", "oak park"): a second word is part of the name only so,
# for a lowercase writer's "catterick done" is a name and a word of the sentence
_HEADS = ("diner|cafe|café|bakery|hotel|bank|market|heights|park|beach|hills|hill|city|county|street|st|ave|avenue|"
          "road|rd|high|elementary|academy|institute|hospital|clinic|school|college|university|uni|centre|center|"
          "valley|springs|falls|bay|harbour|harbor|village|town|district|store|pharmacy|gym|studio|labs|group")
_FOLLOWS = (r"w|with|for|in|on|at|and|but|so|lol|next|last|this|since|until|till|from|now|today|tomorrow|yesterday|"
            r"tho|though|bc|because|cuz")
_WORDS = (r"(?P<name>[a-z][a-z'&-]+(?:\s+(?:" + _HEADS + r"))?)(?=\s*(?:$|[,.!?;:)]|\s(?:" + _FOLLOWS + r")\b))")
_PLACE_CUE = re.compile(r"\b(?:(?:moved|moving|move|relocated|relocating|transferred)\s+(?:back\s+)?to|"
                        r"(?:live|lives|living|lived|settled|stationed|based)\s+(?:(?:out|over|up|down)\s+)?in)\s+"
                        + _WORDS)
_ORG_CUE = re.compile(r"\b(?:first\s+(?:day|week|shift|month)|internship|job|works|working|worked|interning|"
                      r"intern|hired)\s+at\s+" + _WORDS)
_COMPANION = re.compile(r"\s+(?:w/?|with)\s+(?P<name>[a-z][a-z'-]+)(?=\s*(?:$|[,.!?;:]|\s(?:and|but|so|lol|"
                        r"now|today|yesterday)\b))")


def recase(sentence: str, is_name: Callable[[str], bool]) -> str:
    """The sentence with the names at its place and job cues capitalised (`is_name`: not a function word or a word
    that only looks like a name)."""
    spans: list[tuple[int, int]] = []
    for m in [*_PLACE_CUE.finditer(sentence), *_ORG_CUE.finditer(sentence)]:
        first = m.group("name").split()[0]
        if first in GENERIC or not is_name(first):
            continue
        spans.append(m.span("name"))
        if m.re is _PLACE_CUE and (mate := _COMPANION.match(sentence, m.end("name"))) is not None and \
                mate.group("name") not in GENERIC and is_name(mate.group("name")):
            spans.append(mate.span("name"))  # "moved to pilsen w jasmine": whom one lives with, named
    for start, end in sorted(spans, reverse=True):
        sentence = sentence[:start] + _capitalised(sentence[start:end]) + sentence[end:]
    return sentence


def _capitalised(words: str) -> str:
    return " ".join(w[:1].upper() + w[1:] for w in words.split(" "))
