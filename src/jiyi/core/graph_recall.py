"""Which entities a question is about, for the read path's graph recall (retrieval.recall_by_graph).

A question names an entity by a name or alias the user's graph knows ("How is Arjun doing?", "表姐现在住哪"); their
memories and the memories behind their relations are the graph path's candidates. A chained question ("my
brother's girlfriend", "我表姐的男朋友") names an entity and a kinship or role term after it: the entities holding
that relation to it are reached too (the second hop). Pure: the caller reads the graph.
"""

from __future__ import annotations

from dataclasses import dataclass

from jiyi.core import entity_rules_en, entity_rules_zh
from jiyi.core.entities import find_mentions
from jiyi.stores.entities import USER, Graph

_POSSESSIVE = ("'s ", "’s ", "的", "s' ")
# term -> relation, both languages ("girlfriend" -> girlfriend_of, "男朋友" -> boyfriend_of), longest first
_TERMS = sorted({**{k: v[0] for k, v in entity_rules_en.KIN.items()},
                 **{k: v[0] for k, v in entity_rules_zh.KIN.items()}}.items(), key=lambda kv: -len(kv[0]))
# What one term may be stored as: an extractor (or a person) says partner, girlfriend or boyfriend for one relation.
_SAME_RELATION = {"girlfriend_of": "partner_of", "boyfriend_of": "partner_of", "fiancee_of": "fiance_of"}


@dataclass(frozen=True, slots=True)
class AskedEntities:
    named: tuple[str, ...]  # entity ids the question names
    reached: tuple[str, ...]  # entity ids a chained question reaches through a relation of a named one


def _relation_after(query: str, end: int) -> str | None:
    rest = query[end:].casefold()
    for mark in _POSSESSIVE:
        if rest.startswith(mark):
            rest = rest[len(mark):].lstrip()
            for prefix in ("new ", "old ", "current "):
                rest = rest.removeprefix(prefix)
            return next((relation for term, relation in _TERMS if rest.startswith(term)), None)
    return None


def asked_entities(query: str, graph: Graph) -> AskedEntities:
    if not graph.entities:
        return AskedEntities((), ())
    mentions = find_mentions(query, graph)
    named = tuple(dict.fromkeys(entity_id for entity_id, _, _ in mentions))
    reached: list[str] = []
    for entity_id, _, end in mentions:
        relation = _relation_after(query, end)
        if relation is None:
            continue
        wanted = _SAME_RELATION.get(relation, relation)
        for r in graph.relations:
            if r.is_current and r.target == entity_id and r.source != USER and \
                    _SAME_RELATION.get(r.relation, r.relation) == wanted and r.source not in named:
                reached.append(r.source)
    return AskedEntities(named, tuple(dict.fromkeys(reached)))
