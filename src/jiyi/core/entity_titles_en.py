"""English names after a title: "Mrs. Linh Nguyen", "Dr. Alvarez", "Sgt Hughes", "chef Tony", "Ate Lorna",
"Khala Rubina" — a person by the form alone, as 老王 and 王姐 are in Chinese (core/entity_names_zh.py).

The names rules (entity_names_en.py) read a capitalised word only where its context says what it is, and drop a title
as a word that is no name (not_names.json), so "Mrs. Abernathy" was "Abernathy" or nothing. A title is a context of
its own: honorifics, ranks, trades said as a form of address, and the family titles of the homes chat in English
comes from (Tagalog Ate / Kuya / Tita / Lola, Urdu Khala / Chacha, Auntie and Uncle said to anyone older).
The entity is named by the bare name (what the rules and later turns call them: "Lorna's employer") with the titled
form an alias, and, for a name of two words, the title with the surname ("Mrs. Nguyen"). No relation is claimed:
Uncle Raj may be the user's uncle or a family friend; the kinship rules read "my uncle Raj".
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from jiyi.core.entity_claims import Claim, named
from jiyi.core.not_names import not_a_name_en

# Honorifics and ranks, always written capitalised ("Ate" lowercase is the past of eat, "miss" a verb)
_CAPITALISED_TITLES = ("Mr", "Mrs", "Ms", "Mx", "Miss", "Dr", "Prof", "Professor", "Sgt", "Sergeant", "Cpl",
                       "Corporal", "Capt", "Lt", "Lieutenant", "Colonel", "Officer", "Rev", "Reverend", "Fr", "Rabbi",
                       "Imam", "Ustaz", "Judge", "Madam", "Madame", "Ate", "Kuya", "Tito", "Tita", "Oma", "Opa")
# Trades and family titles chat also writes lowercase ("chef Tony", "pastor Femi", "auntie Grace")
_ANY_CASE_TITLES = ("coach", "pastor", "chef", "sous chef", "auntie", "aunty", "aunt", "uncle", "lola", "lolo",
                    "khala", "khalu", "chacha", "chachi", "phupho", "mamu", "nani", "dadi", "abuela", "abuelo",
                    "nonna", "nonno", "grandma", "grandpa", "granny", "nanna")
_TITLE = "|".join(sorted([re.escape(t) for t in _CAPITALISED_TITLES]
                         + [f"[{t[0]}{t[0].upper()}]{re.escape(t[1:])}".replace(r"\ ", r"\s+")
                            for t in _ANY_CASE_TITLES], key=len, reverse=True))
# A name after the title: one to three capitalised words of two letters or more ("Mrs. A" is too short to find
# again: a one-letter alias would be found in every "a").
_TITLED = re.compile(r"(?<![\w'’-])(?P<title>" + _TITLE + r")\.?\s+(?P<name>[A-Z][a-z][a-zA-Z'’-]*"
                     r"(?:\s+[A-Z][a-z][a-zA-Z'’-]*){0,2})(?![\w'’-])")
_POSSESSIVE = re.compile(r"['’]s$")


def claims(sentences: Sequence[str]) -> list[Claim]:
    """The people the message's `sentences` name with a title, as claims that only name."""
    found: list[Claim] = []
    for sentence in sentences:
        for m in _TITLED.finditer(sentence):
            words = [_POSSESSIVE.sub("", w) for w in m.group("name").split()]
            while words and not_a_name_en(words[-1]):
                words.pop()  # "Dr. Alvarez Thursday": the name ends where a word that is no name begins
            if not words or not_a_name_en(words[0]):
                continue  # "Uncle Sam's"? no: "Coach Monday", "Mrs. Thanksgiving" — the word after is no name
            title = m.group("title")
            dot = "." if sentence[m.end("title"):m.end("title") + 1] == "." else ""
            name = " ".join(words)
            forms = [f"{title}{dot} {name}"]
            if len(words) > 1:
                forms.append(f"{title}{dot} {words[-1]}")
            found.append(Claim(named(name, "person", *forms)))
    return found


# Titles that say nothing of kinship: the relation rules read "my principal, Dr. Alvarez" as they read "my principal,
# Alvarez". Family titles stay ("Uncle Raj is visiting": the kinship rules read the uncle in it).
_NOT_KIN_TITLES = frozenset(t.casefold() for t in (
    "Mr", "Mrs", "Ms", "Mx", "Miss", "Dr", "Prof", "Professor", "Sgt", "Sergeant", "Cpl", "Corporal", "Capt", "Lt",
    "Lieutenant", "Colonel", "Officer", "Rev", "Reverend", "Fr", "Rabbi", "Imam", "Ustaz", "Judge", "Madam", "Madame",
    "coach", "pastor", "chef", "sous chef"))
_OWNED = re.compile(r"\b(?i:my|our|his|her|their|your)\s+$|['’]s\s+$")


def without_titles(sentence: str) -> str:
    """The sentence with the honorific, rank or trade before each name dropped ("the new coach is Coach Lavoie" →
    "the new coach is Lavoie"), so that the relation rules, which read a name as capitalised words, read the name.
    Not a title someone's ("my coach Tony": the kinship and role rules read the term), nor one before a name of
    two words or more, which the rules would cut to its first ("my advisor is Professor Maria Lopez")."""
    def drop(m: re.Match[str]) -> str:
        title = " ".join(m.group("title").split()).casefold()
        words = m.group("name").split()
        if title not in _NOT_KIN_TITLES or len(words) > 1 or _OWNED.search(sentence, 0, m.start()) or \
                not_a_name_en(words[0]):
            return m.group()
        return m.group("name")
    return _TITLED.sub(drop, sentence)
