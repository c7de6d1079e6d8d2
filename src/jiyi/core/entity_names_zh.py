"""Chinese names said in passing: 我和小李去吃饭了, 跟老王说了, 王姐说她明天来, 刘洋告诉我…, 婆婆来杭州 — a person or
place with no kinship or role term before it (those are entity_rules_zh.py's: 我表姐叫小雅).

- 老 + a common surname (老王, 老李) and a surname + a form of address (王姐, 张哥, 李阿姨, 陈老师) are people by
  their form, where the segmentation has the form as words of its own (not 老高兴, not 国王姐姐);
- 小X / 阿X, and a name the segmentation tags as one (刘洋, 晓东, 婷婷), are people where the words around say so:
  和 / 跟 / 陪 / 约 / 同事 … before, 说 / 告诉 / 打电话 / 来了 … after; common nouns of that form (小区, 小时, 阿姨)
  are in not_names.json;
- a place name (tagged ns) after 在 / 去 / 来 / 回 / 到 / 从 is a place.
No relation is claimed: a name in passing says someone is in the user's life, not how.
"""

from __future__ import annotations

import re

import rjieba

from jiyi.core.entity_claims import Claim, named
from jiyi.core.not_names import not_a_name_zh

# The hundred most common surnames (bar 向 and 于, which are prepositions far more often: 向老师请教).
SURNAMES = ("王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘蒋蔡余杜叶程苏魏吕丁任沈"
            "姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔汤")
_ADDRESS = ("阿姨", "叔叔", "老师", "师傅", "医生", "大夫", "经理", "主任", "教练", "律师",
            "姐", "哥", "姨", "叔", "总")
_BY_FORM = re.compile(rf"老[{SURNAMES}]|[{SURNAMES}](?:{'|'.join(_ADDRESS)})")
_ALL_HAN = re.compile(r"[\u4e00-\u9fff]+")
_LITTLE = re.compile(r"[小阿][\u4e00-\u9fff]")
# 阿May, 老K, 小Q: a nickname by its form, as 老王 is — no common noun is written so
_LATIN_NICKNAME = re.compile(r"[阿老小](?:[A-Z][a-z]{1,8}|[A-Z])(?![A-Za-z])")
_WITH = "和跟陪找约带给问请帮"  # not 叫: 托班叫小橡树, 狗叫小白 name things and pets as often as people
_PERSON_BEFORE = re.compile(rf"(?:[{_WITH}]|同事|同学|朋友|室友|舍友|闺蜜|哥们|发小)$")
_PERSON_AFTER = re.compile(r"^(?:说|告诉|跟我|和我|问我|约我|请我|帮我|送我|给我|来了|来找|打电话|打来|发消息|发微信|"
                           r"过生日|结婚|怀孕|辞职|离职|回来)")
_NAME_TAGS = ("nr", "nrfg", "nrt")
_TO_A_PLACE = frozenset("在 去 来 回 到 从 飞 飞到 住在 搬到 回到 来到 去了 到了".split())
_NOT_PLACES = frozenset("家里 老家 公司 学校 这里 那里 附近".split())


def _words(clause: str) -> list[tuple[str, str, int]]:
    """(word, tag, start) of the clause's segmentation."""
    out, at = [], 0
    for word, tag in rjieba.tag(clause):
        out.append((word, tag, at))
        at += len(word)
    return out


def _stands_alone(clause: str, start: int, form: str, starts: set[int]) -> bool:
    """The form is words of its own: it starts a word (or follows 和 / 跟 …, which the dictionary glues on) and the
    segmentation of what follows does not run its last character into a longer word (老高兴, 王姐姐)."""
    if start not in starts and not (start > 0 and clause[start - 1] in _WITH):
        return False
    first = rjieba.cut(clause[start:start + len(form) + 2])
    return bool(first) and (first[0] == form or (len(first) > 1 and first[0] + first[1] == form))


def claims(clause: str) -> list[Claim]:
    """The people and places one clause names in passing, as claims that only name."""
    words = _words(clause)
    starts = {start for _, _, start in words}
    found: dict[str, str] = {}
    for m in _BY_FORM.finditer(clause):
        if not not_a_name_zh(m.group()) and _stands_alone(clause, m.start(), m.group(), starts):
            found.setdefault(m.group(), "person")
    for m in _LATIN_NICKNAME.finditer(clause):
        found.setdefault(m.group(), "person")
    for m in _LITTLE.finditer(clause):
        name = m.group()
        if not_a_name_zh(name) or rjieba.cut(clause[m.start():m.start() + 4])[0] not in (name, name[0]):
            continue  # 小时候, 小红书: a longer word
        if _PERSON_BEFORE.search(clause[:m.start()]) or _PERSON_AFTER.match(clause[m.end():]):
            found.setdefault(name, "person")
    previous = ""
    for word, tag, start in words:
        name = word[1:] if len(word) == 3 and word[0] in _WITH else word  # 陪小芳: the dictionary glued 陪 on
        begins = start + len(word) - len(name)
        doubled = len(name) == 2 and name[0] == name[1]  # 婷婷, 朵朵
        if (tag in _NAME_TAGS or doubled) and 2 <= len(name) <= 3 and not not_a_name_zh(name) and \
                (_PERSON_BEFORE.search(clause[:begins]) or _PERSON_AFTER.match(clause[start + len(word):])):
            found.setdefault(name, "person")
        elif tag == "ns" and len(word) >= 2 and word not in _NOT_PLACES and previous in _TO_A_PLACE:
            found.setdefault(word, "place")
        previous = word
    return [Claim(named(name, kind)) for name, kind in found.items()]


def familiar_forms(name: str) -> list[str]:
    """What family call someone with a full Chinese name: the given name (王秀兰 → 秀兰) or, for a single-character
    one, that character and 儿 (陈静 → 静儿, as a parent says it). Only for a common surname and a name all Han."""
    if not 2 <= len(name) <= 3 or name[0] not in SURNAMES or not _ALL_HAN.fullmatch(name) or \
            _BY_FORM.fullmatch(name):  # 王姐, 老李: a form of address, not a given name
        return []
    given = name[1:]
    return [given] if len(given) == 2 else [f"{given}儿"]
