"""What a query asks for, where that changes what to recall.

A request for a recommendation or advice ("晚饭推荐什么？", "any ideas for a gift?") rarely names the user's
constraints, yet an answer that ignores them is wrong: recommending seafood to someone allergic to it. Such queries
bring the user's preferences and constraints along (the rules path in retrieval.py), whatever their similarity.
"""

from __future__ import annotations

import re

from jiyi.core.filters import Node, parse_filters
from jiyi.core.text import query_terms

_ADVICE_ZH = re.compile(
    r"推荐|建议|介绍[一几]?[个家款部本首]|[吃喝玩买送穿看听读做点][^，。？！,.?!]{0,4}(?:什么|啥)|去哪|"
    r"做什么菜|做点什么|点什么|有什么好|怎么办|怎么选|选哪|哪个好|适合|帮我[选挑想找订安排]|出出主意|给点意见|安排一下"
)
_ADVICE_EN = re.compile(
    r"\b(recommend\w*|suggest\w*|advice|advise|ideas? for|any tips|tips for|what should (i|we)|where should (i|we)|"
    r"which (one )?should (i|we)|what (can|could) (i|we) (eat|cook|do|buy|watch|read|get)|help me (choose|pick|decide)|"
    r"what to (eat|cook|buy|wear|watch|read|get|do))\b",
    re.IGNORECASE,
)

# Memories that state a preference or a constraint. Extracted facts carry their kind as a tag; memories stored as
# they were said (infer=False) are found by these words instead.
CONSTRAINT_FILTER: Node | None = parse_filters({"OR": [
    {"jiyi.tags": {"contains": "preference"}},
    {"jiyi.tags": {"contains": "health"}},
    {"jiyi.memory_type": "preference"},
]})
_CONSTRAINT_WORDS = (
    "过敏 忌口 不吃 不能吃 不能喝 吃素 素食 讨厌 喜欢 偏好 最爱 受不了 戒 "
    "allergic allergy intolerant vegetarian vegan halal kosher hate dislike love favorite favourite prefer avoid"
)
CONSTRAINT_TERMS: tuple[str, ...] = tuple(dict.fromkeys(t for t in query_terms(_CONSTRAINT_WORDS) if len(t) > 1))


def asks_for_advice(query: str) -> bool:
    return bool(_ADVICE_ZH.search(query) or _ADVICE_EN.search(query))
