"""Kinship the user never said in one breath, composed from relations the graph holds (issue 32).

"My daughter Beth" and, weeks later, "my grandson Tommy": a labeller (and a question like "whose boy is Tommy?")
takes Tommy for Beth's son when Beth is the only child the user has spoken of. A closed set of compositions, each
stated only when the graph leaves one answer; an ambiguous one gives nothing, since a wrong relation costs more than
a missing one:
- the child of the user's child is the user's grandchild;
- the user's one grandchild is the child of the user's one child (one of each known: two children, or two
  grandchildren who may be cousins, say nothing);
- the child of the user's one current spouse who is not the user's child is the user's stepchild.
Not composed, because the labelled conversations' authors do not write them: a sibling's parents as the other
sibling's (a set has 姐 and 妈 of one man and no 妈 of the 姐), and in-laws either way — one set writes 婆婆 as the
mother of the user's husband and another does not, and one writes a husband's mother without the in-law relation;
true as they are, half of them would count as wrong.
Pure functions over relations: the resolver in core/entities.py states what they return.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from jiyi.stores.entities import USER, GraphRelation

Triple = tuple[str, str, str]

# (parent, child) from either way of saying it: "Beth daughter_of user", "Liu father_of Doudou"
_CHILD_OF = frozenset({"son_of", "daughter_of", "child_of"})
_PARENT_OF = frozenset({"mother_of", "father_of"})
_GRANDCHILD_OF = frozenset({"grandson_of", "granddaughter_of", "grandchild_of"})
_STEPCHILD_OF = frozenset({"stepson_of", "stepdaughter_of"})
_SPOUSE_OF = frozenset({"husband_of", "wife_of", "spouse_of"})
# a message stating none of these composes nothing new
KINSHIP_PREMISES = _CHILD_OF | _PARENT_OF | _GRANDCHILD_OF | _STEPCHILD_OF | _SPOUSE_OF
# by the gender of the one who is the relation's source: (man, woman, unknown)
_CHILD = ("son_of", "daughter_of", "child_of")
_GRANDCHILD = ("grandson_of", "granddaughter_of", "grandchild_of")
_STEPCHILD = ("stepson_of", "stepdaughter_of", None)


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
    grandchildren = {r.source for r in current if r.relation in _GRANDCHILD_OF and r.target == USER}
    stepchildren = {r.source for r in current if r.relation in _STEPCHILD_OF and r.target == USER}
    spouses = {r.source if r.target == USER else r.target for r in current
               if r.relation in _SPOUSE_OF and USER in (r.source, r.target)}
    found: list[Triple] = []

    def add(source: str, words: tuple[str, str, str | None], target: str) -> None:
        relation = _by_gender(words, gender(source))
        if relation is not None and source != target and (source, relation, target) not in found:
            found.append((source, relation, target))

    for parent, child in pairs:
        if parent in children and child not in children | grandchildren and child != USER:
            add(child, _GRANDCHILD, USER)
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
