"""Who is who, with an LLM: the entities and relations a user's message states and the relations it ends, asked of
the model as JSON and checked here before core/entities.py resolves them like the rules' claims (a name the graph
knows is that entity; a new one is added). Prompts in Chinese and English, written for jiyi (in the manner of
mem0's graph prompts: the user as one node, relations as snake_case verbs, what a message makes outdated).

Whatever the model answers is validated: unknown kinds, relation names that are not snake_case, empty or overlong
names are dropped, never stored.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from jiyi.core.entity_claims import ME, Claim, Ref, named
from jiyi.core.facts import is_chinese
from jiyi.llms.base import LLM, ask_json
from jiyi.stores.entities import ENTITY_KINDS, Graph

MAX_NAME_CHARS = 80
_RELATION_NAME = re.compile(r"^[a-z][a-z_]{1,40}$")
_USER_WORDS = frozenset({"user", "USER", "I", "me", "我", "用户"})

_VOCABULARY = (
    "kinship: mother_of father_of son_of daughter_of child_of brother_of sister_of cousin_of grandson_of "
    "granddaughter_of mother_in_law_of; couples: husband_of wife_of partner_of girlfriend_of boyfriend_of fiance_of "
    "fiancee_of ex_partner_of; others: friend_of roommate_of housemate_of neighbour_of lives_with boss_of "
    "advisor_of teacher_of; places and organisations: works_at interns_at studies_at attends member_of lives_in "
    "from located_in part_of held_in; things and pets: owns pet_of")

ENTITY_PROMPT_EN = f"""You keep track of the people and things in one user's life.
From the user's latest message, list:
- "entities": every person, pet, place, organisation, thing or event of the user's life the message names, as
  {{"name": canonical name, "kind": one of {", ".join(ENTITY_KINDS)}, "aliases": other words the message uses for it,
  such as "my sister" or a nickname}}. Use the name from "Known entities" when the message means one of them, also
  when it says only "he", "she" or a kinship term. Leave out things named only in passing.
- "relations": what the message states, as {{"source": name, "relation": snake_case, "target": name}}, read as
  "source IS the relation OF target". The user is "USER": "my cousin Sneha" is Sneha cousin_of USER.
  Prefer these relation names: {_VOCABULARY}.
- "ended": relations the message says no longer hold (a move, a break-up, leaving a job, a sale, a death), same
  shape; "target" may be null when the message does not say which.
Answer with JSON only: {{"entities": [...], "relations": [...], "ended": [...]}}. Empty lists when there is nothing."""

ENTITY_PROMPT_ZH = f"""你负责记住一位用户生活中的人和事。
根据用户最新的一条消息，列出：
- "entities"：消息提到的用户生活中的每个人、宠物、地点、机构、物品或事件，格式为
  {{"name": 规范名称, "kind": {", ".join(ENTITY_KINDS)} 之一, "aliases": 消息中对它的其他称呼，如"我表姐"或昵称}}。
  消息指的是"已知实体"中的某个时（包括只说"他""她"或亲属称谓时），用已知的名称。顺带一提的事物不要列。
- "relations"：消息陈述的关系，格式为 {{"source": 名称, "relation": 英文 snake_case, "target": 名称}}，
  读作"source 是 target 的 relation"。用户本人写作 "USER"：我表姐小雅 即 小雅 cousin_of USER。
  关系名优先使用：{_VOCABULARY}。
- "ended"：消息表明已不再成立的关系（搬家、分手、离职、卖掉、去世），格式同上；不清楚是哪一个时 "target" 为 null。
只用 JSON 回答：{{"entities": [...], "relations": [...], "ended": [...]}}。没有就给空列表。"""


def _known(graph: Graph) -> str:
    lines = [f"- {e.name} ({e.kind}): {', '.join(a for a in e.aliases if a != e.name) or '-'}"
             for e in graph.entities.values()]
    return "\n".join(lines) or "- (none yet)"


def _text(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    value = value.strip()
    return value if 0 < len(value) <= MAX_NAME_CHARS else None


def claims_from(answer: dict[str, Any]) -> list[Claim]:
    """The model's JSON as claims; anything malformed is left out."""
    kinds: dict[str, Ref] = {}
    claims: list[Claim] = []
    for item in answer.get("entities") or []:
        if not isinstance(item, dict):
            continue
        name, kind = _text(item.get("name")), item.get("kind")
        if name is None or kind not in ENTITY_KINDS or name in _USER_WORDS:
            continue
        listed = item.get("aliases")
        aliases = [a for a in map(_text, listed if isinstance(listed, list) else []) if a and a != name]
        ref = named(name, kind, *aliases)
        kinds[name] = ref
        claims.append(Claim(ref))

    def end(value: Any) -> Ref | None:
        text = _text(value)
        if text is None:
            return None
        return ME if text in _USER_WORDS else kinds.get(text, named(text))

    for key, ends in (("relations", False), ("ended", True)):
        for item in answer.get(key) or []:
            if not isinstance(item, dict) or not _RELATION_NAME.match(str(item.get("relation", ""))):
                continue
            source = end(item.get("source"))
            target = end(item.get("target"))
            if source is None or (target is None and not ends):
                continue
            claims.append(Claim(source, str(item["relation"]), target, ends=ends))
    return claims


async def extract_entity_claims(llm: LLM, text: str, graph: Graph, recent: Sequence[str],
                                timeout: float | None = None) -> list[Claim]:
    """Claims of one user message; raises LLMError when the model cannot be used."""
    system = ENTITY_PROMPT_ZH if is_chinese(text) else ENTITY_PROMPT_EN
    earlier = "\n".join(f"- {t}" for t in recent[-4:]) or "- (none)"
    data = f"Known entities:\n{_known(graph)}\n\nEarlier messages:\n{earlier}\n\nLatest message:\n{text}"
    answer = await ask_json(llm, [{"role": "system", "content": system}, {"role": "user", "content": data}],
                            timeout=timeout)
    return claims_from(answer)
