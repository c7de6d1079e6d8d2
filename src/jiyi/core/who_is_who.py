"""One line that tells a reply who the people a question names are (issue 32): "Who is who: Arjun is the user's
brother; Mia is Arjun's girlfriend; Arjun lives in Chicago."

Memories say "he bombed his first contracts exam" or "Arjun started law school" without saying who Arjun is to the
user; the graph knows (core/entities.py). When a question names someone the user's graph holds — by name, alias or
kinship term ("How is Arjun doing?", "我表姐最近怎么样") — /context puts their current relations before the memories,
in the question's language. Ended relations stay out: they are history, and the memories say them.
Pure: the caller reads the graph.
"""

from __future__ import annotations

from collections.abc import Callable

from jiyi.core import entity_rules_en, entity_rules_zh
from jiyi.core.graph_recall import asked_entities
from jiyi.stores.entities import USER, Graph, GraphRelation
from jiyi.text import has_cjk

MAX_RELATIONS = 6  # a line, not a family tree

# Relations that name a place or an organisation after a verb; every other relation is "<source> is <target>'s <noun>".
_VERBS_EN = {"lives_in": "lives in", "works_at": "works at", "studies_at": "studies at", "interns_at": "interns at",
             "located_in": "is in", "lives_with": "lives with", "admitted_to": "was admitted to"}
_VERBS_ZH = {"lives_in": "住在{}", "works_at": "在{}工作", "studies_at": "在{}读书", "interns_at": "在{}实习",
             "located_in": "在{}", "lives_with": "和{}住在一起", "admitted_to": "被{}录取"}
_NOUNS_EN = {"ex_partner_of": "ex-partner", "mother_in_law_of": "mother-in-law", "father_in_law_of": "father-in-law",
             "fiance_of": "fiancé", "fiancee_of": "fiancée", "neighbour_of": "neighbour", "business_partner_of":
             "business partner"}
_NOUNS_ZH = {
    "mother_of": "妈妈", "father_of": "爸爸", "brother_of": "兄弟", "sister_of": "姐妹", "cousin_of": "表亲",
    "son_of": "儿子", "daughter_of": "女儿", "child_of": "孩子", "grandson_of": "孙子", "granddaughter_of": "孙女",
    "grandmother_of": "奶奶", "grandfather_of": "爷爷", "aunt_of": "阿姨", "uncle_of": "叔叔", "niece_of": "侄女",
    "nephew_of": "侄子", "mother_in_law_of": "婆婆", "father_in_law_of": "公公", "wife_of": "妻子",
    "husband_of": "丈夫", "spouse_of": "配偶", "partner_of": "伴侣", "girlfriend_of": "女朋友",
    "boyfriend_of": "男朋友", "fiance_of": "未婚夫", "fiancee_of": "未婚妻", "ex_partner_of": "前任",
    "friend_of": "朋友", "roommate_of": "室友", "flatmate_of": "室友", "housemate_of": "室友", "neighbour_of": "邻居",
    "coworker_of": "同事", "boss_of": "老板", "supervisor_of": "上司", "advisor_of": "导师", "teacher_of": "老师",
    "landlord_of": "房东", "pet_of": "宠物", "twin_of": "双胞胎", "business_partner_of": "合伙人",
}


def who_is_who(question: str, graph: Graph, fits: Callable[[GraphRelation], bool] | None = None) -> str | None:
    """The line for the entities `question` names (and those a chained question reaches), or None when it names
    none with a current relation. `fits(relation)`: whether a relation may be told — the graph is the user's, and a
    request for one agent's or run's memories must not learn what only another's said."""
    asked = asked_entities(question, graph)
    wanted = [*asked.named, *asked.reached]
    if not wanted:
        return None
    chinese = has_cjk(question)
    names = {USER: "用户" if chinese else "the user", **{e.id: e.name for e in graph.entities.values()}}
    # Someone known only as "妈" or "my girlfriend" is "用户的妈妈" / "the user's girlfriend" in the other relations,
    # and "妈是用户的妈妈" says nothing.
    unnamed = {r.source: r for r in graph.relations if r.is_current and r.target == USER
               and _is_kinship_term(names.get(r.source, ""))}
    for entity_id, relation in unnamed.items():
        names[entity_id] = _whose(relation, names, chinese)
    chosen: list[GraphRelation] = []
    for entity_id in wanted:
        about = [r for r in graph.relations if r.is_current and entity_id in (r.source, r.target)]
        about.sort(key=lambda r: USER not in (r.source, r.target))  # how they stand to the user first
        chosen += [r for r in about if all(r is not c for c in chosen) and (fits is None or fits(r))
                   and unnamed.get(r.source) is not r]
    if not chosen:
        return None
    said = [_sentence(r, names, chinese) for r in chosen[:MAX_RELATIONS]]
    return ("人物关系：" + "；".join(said) + "。") if chinese else ("Who is who: " + "; ".join(said) + ".")


def _sentence(relation: GraphRelation, names: dict[str, str], chinese: bool) -> str:
    source, target = names.get(relation.source, relation.source), names.get(relation.target, relation.target)
    verbs = _VERBS_ZH if chinese else _VERBS_EN
    if relation.relation in verbs:
        return source + verbs[relation.relation].format(target) if chinese else \
            f"{source} {verbs[relation.relation]} {target}"
    return f"{source}是{_whose(relation, names, chinese)}" if chinese else \
        f"{source} is {_whose(relation, names, chinese)}"


def _whose(relation: GraphRelation, names: dict[str, str], chinese: bool) -> str:
    """What the source is to the target: "用户的表亲", "Arjun's girlfriend"."""
    target = names.get(relation.target, relation.target)
    if chinese:
        return f"{target}的{_NOUNS_ZH.get(relation.relation) or _noun_en(relation.relation)}"
    owner = "the user's" if relation.target == USER else f"{target}'s"
    return f"{owner} {_noun_en(relation.relation)}"


def _noun_en(relation: str) -> str:
    return _NOUNS_EN.get(relation) or relation.removesuffix("_of").replace("_", " ")


_KINSHIP_TERMS = frozenset({*entity_rules_en.KIN, *entity_rules_en.PARENT_NAMES, *entity_rules_zh.KIN,
                            *entity_rules_zh.UNIQUE})


def _is_kinship_term(name: str) -> bool:
    return name.casefold().removeprefix("my ").removeprefix("我") in _KINSHIP_TERMS
