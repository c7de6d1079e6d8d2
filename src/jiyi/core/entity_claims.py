"""What the entity rules of each language hand to core/entities.py: Claims between Refs."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Ref:
    """One end of a claim: the user, a pronoun ("he", "she", "it", "they"), a name with the kind its context gives
    it (None when the context says nothing: then only an entity the graph already knows can be meant) and the
    kinship or role phrase it was introduced with ("my cousin", "表姐"), or someone known only by whose relative
    they are ("his mum", "my sister", 老周的女儿: `held` of `owner`)."""

    name: str | None = None
    kind: str | None = None
    alias: str | None = None
    pronoun: str | None = None
    is_user: bool = False
    extra_aliases: tuple[str, ...] = ()
    owner: Ref | None = None
    held: str | None = None

    def alias_forms(self) -> list[str]:
        return [a for a in (self.alias, *self.extra_aliases) if a]


ME = Ref(is_user=True)


def named(name: str, kind: str | None = None, alias: str | None = None, *extra: str) -> Ref:
    return Ref(name=name, kind=kind, alias=alias, extra_aliases=tuple(extra))


def kin_of(owner: Ref, relation: str, said: str | None = None) -> Ref:
    """The one who is `relation` of `owner` ("her husband": husband_of she), and the words said for them, by which
    the graph may know them when the relations do not single one out."""
    return Ref(kind="person", alias=said, owner=owner, held=relation)


def pronoun(word: str) -> Ref:
    return Ref(pronoun=word)


@dataclass(frozen=True, slots=True)
class Claim:
    """`subject` IS the `relation` OF `object` ("Sneha cousin_of user"), or, with `ends`, no longer is (object None:
    whatever it was, as in "we broke up" said of a girlfriend). A claim with no relation only names entities."""

    subject: Ref
    relation: str | None = None
    object: Ref | None = None
    ends: bool = False
    # Read between the lines, not said ("婆婆来杭州": the user lives in 杭州): stated only when the graph holds no
    # current one of the relation for the subject, so that what was said (住在徐汇) is not replaced by a guess
    inferred: bool = False
