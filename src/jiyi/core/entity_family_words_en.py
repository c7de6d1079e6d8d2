"""The words for family that English chat says as names: "bhaiya called from Dubai", "Didi and jiju came from Pune",
"Mumma in Kingston fell down", "CNY at my ah ma's place", "rang the mammy" — a relative of the user's, named by the
word, as "Mom called" is (entity_rules_en.PARENT_NAMES, which reads only the start of a sentence).

The words come from the homes chat in English is written in (Hindi and Urdu, Tagalog, Korean, Hokkien and Malay,
Jamaica, Ireland), from general knowledge, not from any set. Read where the word stands on its own or after "my" /
"our"; not after someone else's ("her didi", "Priya's bhaiya": theirs) nor an article ("a papa bear"). Ambiguous short
words (ma, pa, nan — a bread too) are left to the sentence-start rule.

Two things make the relation rules read them as they read names: each is written capitalised in the sentences those
rules see ("bhaiya called" → "Bhaiya called"), and "the mammy", "the missus" — Irish, British and Australian for
"my mother", "my wife" — are written "my mammy", "my missus".
"""

from __future__ import annotations

import re

from jiyi.core.entity_claims import ME, Claim, named

# word -> relation the named one has to the user (None: a relative whose relation to the user no one relation says:
# jiju, a sister's husband)
FAMILY_WORDS: dict[str, str | None] = {
    "mummy": "mother_of", "mammy": "mother_of", "mommy": "mother_of", "mumma": "mother_of", "mamma": "mother_of",
    "ammi": "mother_of",
    "amma": "mother_of", "umma": "mother_of", "nanay": "mother_of", "daddy": "father_of", "papa": "father_of",
    "abbu": "father_of", "appa": "father_of", "tatay": "father_of",
    "bhaiya": "brother_of", "bhaiyya": "brother_of", "kuya": "brother_of", "hyung": "brother_of",
    "didi": "sister_of", "unni": "sister_of", "eonni": "sister_of", "noona": "sister_of",
    "ah ma": "grandmother_of", "ah mah": "grandmother_of", "lola": "grandmother_of", "nani": "grandmother_of",
    "dadi": "grandmother_of", "ah gong": "grandfather_of", "lolo": "grandfather_of", "jiju": None,
}
_WORDS = "|".join(sorted((re.escape(w).replace(r"\ ", r"\s+") for w in FAMILY_WORDS), key=len, reverse=True))
# not before a name: "Lola Ruth" is Ruth, Lola her title (core/entity_titles_en.py)
_FAMILY_WORD = re.compile(r"(?<![\w'’-])(?P<word>" + _WORDS + r")(?![\w-])(?!\s+(?-i:[A-Z][a-z]))",
                          re.IGNORECASE)
# someone else's, or not a name at all: "her didi", "Priya's bhaiya", "a papa bear", "the daddy long legs"
_NOT_THE_USERS = re.compile(r"(?:\b(?i:his|her|their|your|a|an|the|this|that)|[\w]['’]s)\s+$")
# "the mammy", "the missus" for "my": not "the wife of my boss"
_THE_FOR_MY = re.compile(r"\b(?i:the)\s+(?P<term>(?i:mammy|missus|missis|hubby|wife))\b(?!\s+(?i:of)\b)")


def claims(sentence: str) -> list[Claim]:
    """The user's relatives the sentence names by a family word."""
    found: list[Claim] = []
    for m in _FAMILY_WORD.finditer(sentence):
        word = " ".join(m.group("word").split())
        the = _THE_FOR_MY.match(sentence, max(0, m.start() - 4))
        if (_NOT_THE_USERS.search(sentence, 0, m.start()) and not the) or m.group("word").isupper():
            continue  # "her didi"; "PAPA" shouted is a word, all capitals is read nowhere else either
        relation = FAMILY_WORDS[word.casefold()]
        person = named(word, "person", f"my {word.casefold()}", *([f"the {word}"] if the else []))
        found.append(Claim(person, relation, ME) if relation else Claim(person))
    return found


def as_names(sentence: str) -> str:
    """The sentence as the relation rules read names: each family word capitalised, "the missus" as "my missus"."""
    sentence = _THE_FOR_MY.sub(lambda m: f"my {m.group('term')}", sentence)

    def capitalise(m: re.Match[str]) -> str:
        if _NOT_THE_USERS.search(sentence, 0, m.start()):
            return m.group()
        return m.group()[0].upper() + m.group()[1:]
    return _FAMILY_WORD.sub(capitalise, sentence)
