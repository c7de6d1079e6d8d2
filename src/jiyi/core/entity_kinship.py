"""Kinship the user never said in one breath, composed from relations the graph holds (issue 32).

"My daughter Beth" and, weeks later, "my grandson Tommy": a labeller (and a question like "whose boy is Tommy?")
takes Tommy for Beth's son when Beth is the only child the user has spoken of. A closed set of compositions, each
stated only when the graph leaves one answer; an ambiguous one gives nothing, since a wrong relation costs more than
a missing one:
- the child of the user's child is the user's grandchild;
- the user's one grandchild is the child of the user's one child (one of each known: two children, or two
  grandchildren who may be cousins, say nothing);
- the child of the user's one current spouse who is not the user's child is the user's stepchild;
- the child of the user's brother or sister is the user's niece or nephew;
- the wife or husband of the user's brother or sister is the user's sister- or brother-in-law.
Each was checked against the labelled conversations' (dev and dev2) relations: where the premises are labelled,
so is the conclusion (grandchildren 5 of 5, the one grandchild's parent 4 of 4, stepchildren 2 of 2, a niece 1 of
1, a sister-in-law 1 of 1).
Not composed, because the labelled conversations do not write them where they could: the user's parents as a
sibling's (1 of 5), the user's spouse as a parent of the user's child (a second husband is not; 3 of 12 for a
current spouse), and in-laws either way (婆婆 as the mother of the user's husband 1 of 2, a husband's mother as the
user's mother-in-law 1 of 3) — true as many of them are, most would count as wrong.
Pure functions over relations: the resolver in core/entities.py states what they return.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from jiyi.stores.entities import USER, GraphRelation

Triple = tuple[str, str, str]

# (parent, child) from either way of saying it: "Beth daughter_of user", "Liu father_of Doudou"
_CHILD_OF = frozenset({"son_of", "daughter_of", "child_of"})
_PARENT_OF = frozenset({"mother_of", "father_of"})
GRANDCHILD_OF = frozenset({"grandson_of", "granddaughter_of", "grandchild_of"})
_STEPCHILD_OF = frozenset({"stepson_of", "stepdaughter_of"})
_SPOUSE_OF = frozenset({"husband_of", "wife_of", "spouse_of"})
_SIBLING_OF = frozenset({"brother_of", "sister_of", "twin_of"})
# a message stating none of these composes nothing new
KINSHIP_PREMISES = _CHILD_OF | _PARENT_OF | GRANDCHILD_OF | _STEPCHILD_OF | _SPOUSE_OF | _SIBLING_OF
# by the gender of the one who is the relation's source: (man, woman, unknown)
_CHILD = ("son_of", "daughter_of", "child_of")
_GRANDCHILD = ("grandson_of", "granddaughter_of", "grandchild_of")
_STEPCHILD = ("stepson_of", "stepdaughter_of", None)
_SIBLINGS_CHILD = ("nephew_of", "niece_of", None)
_SIBLINGS_SPOUSE = ("brother_in_law_of", "sister_in_law_of", None)


def _by_gender(words: tuple[str, str, str | None], gender: str | None) -> str | None:
    return words[0] if gender == "m" else words[1] if gender == "f" else words[2]


def parent_child_pairs(relations: Iterable[GraphRelation]) -> set[tuple[str, str]]:
    pairs: set[tuple[str, str]] = set()
    for r in relations:
        if r.relation in _CHILD_OF:
            pairs.add((r.target, r.source))
        elif r.relation in _PARENT_OF:
            pairs.add((r.source, r.target))
    return pairs


def composed_kinship(relations: Sequence[GraphRelation], gender: Callable[[str], str | None]) -> list[Triple]:
    """The relations the current ones in `relations` imply by the compositions above, those already held left out.
    `gender`: "m", "f" or None for an entity id."""
    current = [r for r in relations if r.is_current]
    pairs = parent_child_pairs(current)
    children = {child for parent, child in pairs if parent == USER}
    grandchildren = {r.source for r in current if r.relation in GRANDCHILD_OF and r.target == USER}
    stepchildren = {r.source for r in current if r.relation in _STEPCHILD_OF and r.target == USER}
    spouses = {r.source if r.target == USER else r.target for r in current
               if r.relation in _SPOUSE_OF and USER in (r.source, r.target)}
    siblings = {r.source if r.target == USER else r.target for r in current
                if r.relation in _SIBLING_OF and USER in (r.source, r.target)}
    nieces = {r.source for r in current if r.relation in ("niece_of", "nephew_of") and r.target == USER}
    in_laws = {r.source for r in current if r.relation in ("sister_in_law_of", "brother_in_law_of")
               and r.target == USER}
    found: list[Triple] = []

    def add(source: str, words: tuple[str, str, str | None], target: str) -> None:
        relation = _by_gender(words, gender(source))
        if relation is not None and source != target and (source, relation, target) not in found:
            found.append((source, relation, target))

    for parent, child in pairs:
        if parent in children and child not in children | grandchildren and child != USER:
            add(child, _GRANDCHILD, USER)
        if parent in siblings and child not in children | siblings | nieces and child != USER:
            add(child, _SIBLINGS_CHILD, USER)
    for r in current:
        if r.relation in _SPOUSE_OF and (r.source in siblings) != (r.target in siblings):
            married_in = r.source if r.target in siblings else r.target
            if married_in not in in_laws | {USER}:
                add(married_in, _SIBLINGS_SPOUSE, USER)
    if len(children) == 1 and len(grandchildren) == 1:
        (child,), (grandchild,) = tuple(children), tuple(grandchildren)
        if not any(kid == grandchild for _, kid in pairs):
            add(grandchild, _CHILD, child)
    if len(spouses) == 1:
        (spouse,) = tuple(spouses)
        for parent, child in pairs:
            if parent == spouse and child not in children | stepchildren and child != USER:
                add(child, _STEPCHILD, USER)
    return found
