"""The kind of answer a question asks for — a time, a place, a name, a number — and whether a memory holds one.

"What's my cat called?" ranks "User's daughter called this morning" first by its word "called"; "Lou is sitting on
my chest purring" holds a name and is the answer. "我一般哪几天去上瑜伽课" asks for days: "每周二四六晚上" holds them,
"今天瑜伽课都练得特别带劲" does not. The words of a question say what it is about, its question word what the answer
looks like: a memory that holds nothing of that kind is rarely the answer, however close its words. /context puts
such a memory after one that holds the kind (read_path.merged). The kinds are read from the form of a sentence
(question words; digits, measure words, place suffixes, capitalised words), in Chinese and in English, never from
what a particular memory says.

Measured (bench/context.py, the same stores): in /context's order only, answers at rank 1 on the development half
en 50.5 -> 53.8 %, zh the same, dev2 and dev3 unchanged in every figure (0.75 of the score: 0.9 moved one answer).
As a weight in retrieval itself, LoCoMo any@10 82.8 -> 82.9 (category 3 50.0 -> 52.3), but on the companion halves
it cost answers (dev3 zh 54.7 -> 53.1 %, dev en 78.5 -> 77.4 %): /context's gate reads the search's order.
"""

from __future__ import annotations

import re

from jiyi.text import has_cjk

_I = re.IGNORECASE

# The question word, per kind, in the order they are tried: "几月" asks for a time before a number, "哪所学校" for a
# place before anything else.
_ASKS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("time", re.compile(
        r"什么时候|什麼時候|啥时候|啥時候|何时|哪天|哪几天|哪幾天|哪年|哪一年|几月|幾月|几号|幾號|几点|幾點|星期几|周几|礼拜几|"
        r"\bwhen\b|\b(?:what|which) (?:day|days|time|year|month|date|season)\b|\bwhat time\b", _I)),
    ("place", re.compile(
        r"哪里|哪儿|哪兒|哪裡|在哪|去哪|住哪|哪个(?:城市|地方|学校|公司|医院|区|省|国家|小区)|哪(?:所|家|座|条)|什么地方|啥地方|"
        r"边度|边间|\bwhere\b|\b(?:what|which) (?:city|town|country|place|street|neighbou?rhood|school|company|"
        r"hospital|university|college|state|suburb)\b", _I)),
    ("name", re.compile(
        r"叫(?:什么|什麼|啥|咩|么子|甚麼|甚么)|名字|小名|大名|昵称|外号|谁|誰|"
        r"\bwho(?:m|se)?\b|\bnames?\b|\bcalled\b|\bcall (?:him|her|it|them)\b", _I)),
    ("number", re.compile(
        r"多少|几(?!乎|月|号|点)|幾(?!月|號|點)|多大|多久|多长|多長|多远|多遠|多高|多重|"
        r"\bhow (?:many|much|old|long|far|often|tall|big|heavy)\b", _I)),
)

_MONTHS = r"january|february|march|april|may|june|july|august|september|october|november|december"
_WEEKDAYS = r"monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_HOLDS: dict[str, re.Pattern[str]] = {
    "time": re.compile(
        r"周[一二三四五六日天末]|星期|礼拜|[\d一二三四五六七八九十两]+(?:月|号|日|点|年|点钟|岁那年)|早上|晚上|中午|下午|凌晨|"
        r"每周|每天|每晚|每年|每月|今天|昨天|前天|明天|后天|去年|今年|明年|上周|下周|上个月|下个月|春节|过年|暑假|寒假|周末|"
        r"\b(?:" + _MONTHS + "|" + _WEEKDAYS + r")s?\b|\b\d{1,2}(?::\d\d)?\s?(?:am|pm)\b|\b(?:19|20)\d\d\b|"
        r"\b(?:yesterday|today|tonight|tomorrow|last|next|ago|morning|mornings|evening|evenings|night|nights|"
        r"weekend|weekends|week|month|year|summer|winter|spring|autumn|christmas|easter)\b", _I),
    "place": re.compile(
        r"[\u4e00-\u9fff](?:市|省|区|县|镇|村|路|街|巷|公园|广场|小区|医院|学校|大学|中学|小学|公司|单位|银行|超市|商场|"
        r"车站|机场|老家|附近|门口|楼下|海边|河边|山上)|"
        r"\b(?:in|at|to|from|near|on|around) (?:the )?[A-Z][\w'-]+|(?i:\b(?:street|st|road|rd|avenue|ave|lane|park|"
        r"beach|lake|river|city|town|village|school|university|uni|college|hospital|clinic|office|cafe|café|restaurant|"
        r"gym|church|station|airport|mall|store|shop|library|downtown|suburb|apartment|flat)\b)"),
    # A name: one named (叫 / 名叫, "named"), or a capitalised word that does not open a sentence ("Lou is…" opens
    # one: "He's my big orange tabby, Lou" does not) and is not the user.
    "name": re.compile(
        r"叫|名字|小名|昵称|外号|(?i:\bnamed\b|\bname is\b|\bname's\b)|\bcalled [A-Z]|"
        r"(?<=[^.!?\s] )(?!User\b|I\b|OK\b)[A-Z][a-z]+"),
    "number": re.compile(
        r"\d|[一二两三四五六七八九十百千万半几]+(?:个|岁|年|天|次|块|元|斤|公里|分钟|小时|周|杯|只|条|本|层|楼|倍|遍|圈|万|千|百|"
        r"十|口|人|位|套|辆|间|件|张|门|份|顿)|"
        r"\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|fifty|"
        r"hundred|thousand|dozen|couple|twins|half|once|twice)\b", _I),
}


# Chinese writes a name or a place with no mark of its own: no capital, often no 叫 or 市 ("用户在学用剪映剪短视频",
# "用户老家在潮汕"). Asked for one in Chinese, the form of a memory says nothing (bench/zh_retrieval.py: judged by
# 叫 and place suffixes, three "叫啥来着" questions lost their answer); times and numbers have their marks in both
# languages.
_WITHOUT_A_MARK_IN_CHINESE = frozenset({"name", "place"})


def asked_kind(question: str) -> str | None:
    """The kind of answer the question asks for, where a memory's form can show one; None for a yes/no question, a
    request or small talk, and for a Chinese question asking for a name or a place."""
    for kind, pattern in _ASKS:
        if pattern.search(question):
            return None if kind in _WITHOUT_A_MARK_IN_CHINESE and has_cjk(question) else kind
    return None


def holds(kind: str, text: str) -> bool:
    """Whether a memory's text holds something of the kind."""
    return bool(_HOLDS[kind].search(text))


# What a memory that holds nothing of the kind asked for keeps of its score in /context's order: it comes after one
# that holds it unless it matches much better (0.9 moved one answer on the development half; see above).
WITHOUT_THE_KIND = 0.75


def weight(kind: str | None, text: str) -> float:
    """The factor /context's order gives a memory's score for a question asking for `kind` (asked_kind)."""
    return WITHOUT_THE_KIND if kind is not None and not holds(kind, text) else 1.0
