"""Where a Chinese organisation is, read from its own name as said: 深圳富达电子厂 is 富达电子厂 in
深圳, 昆明盘龙区的金星小学 is 金星小学 in 盘龙区, a district of 昆明. A user names a workplace or a school
with the place in front far more often than with 位于; the place words are the ones places_zh calls
places, stripped while a name is left behind them."""

from __future__ import annotations

import re
from dataclasses import dataclass

import rjieba

from jiyi.core import places_zh

# A child's school: who goes there attends it (a university is studied at). 二小, 一中: numbered schools.
SCHOOLS = ("幼儿园", "小学", "中学", "附中", "附小", "学校", "高中", "初中", "一小", "二小", "三小", "一中", "二中",
           "三中", "实验中学")
UNIVERSITIES = ("大学", "学院", "研究生院", "师大")  # 赣南师大: a normal university's short name
# Words an organisation's name ends in: said after a place, they make the whole an organisation and not a place.
INSTITUTIONS = SCHOOLS + UNIVERSITIES + ("医院", "公司", "分公司", "厂", "集团", "银行", "酒店", "酒楼", "饭店", "饭馆",
                                         "餐厅", "研究所", "研究院", "超市", "工作室", "事务所", "诊所",
                                         # a courier or a village clinic is named so too (中通快递, 乌东村卫生室)
                                         "快递", "物流", "卫生室", "卫生院", "消防站", "派出所", "驿站", "托育",
                                         "养老院", "敬老院")
_LONGEST_FIRST = tuple(sorted(INSTITUTIONS, key=len, reverse=True))  # 分公司 before 公司
# 湘雅二医院心内科, 北京大学计算机系: a department said after the organisation it belongs to
_DEPARTMENT = re.compile(r"(?<=" + "|".join(i for i in INSTITUTIONS if len(i) == 2) + r")"
                         r"[\u4e00-\u9fff]{1,4}?(?:科|系|部|处|室)$")
# Where an organisation stands relative to something else: 小区旁边的幼儿园 is not a school named 小区旁边
_NEAR = ("旁边的", "附近的", "对面的", "隔壁的", "楼下的")


@dataclass(frozen=True, slots=True)
class Placed:
    """An organisation's name without its places, the places before it (largest first) and the name as said."""

    name: str
    places: tuple[str, ...]
    said: str


def _suffix(name: str) -> str | None:
    return next((s for s in _LONGEST_FIRST if name.endswith(s)), None)


def without_department(said: str) -> str:
    """The organisation a department belongs to (湘雅二医院心内科: 湘雅二医院); the name itself if none is said."""
    return _DEPARTMENT.sub("", said)


def is_institution(name: str) -> bool:
    suffix = _suffix(name)
    return suffix is not None and len(name) > len(suffix)


def is_school(name: str) -> bool:
    return name.endswith(SCHOOLS) and len(name) > 2


def is_university(name: str) -> bool:
    return name.endswith(UNIVERSITIES)


def is_university_short(word: str) -> bool:
    """浙大, 川大, 北大: a university called by its place, not the place (浙大邵逸夫医院 is not in 浙大 the place)."""
    return len(word) == 2 and word.endswith("大")


def split_places(said: str) -> Placed:
    """The places said before an organisation's name. A place word is stripped only while a name of two or more
    characters is left before the institution word (宝安区新安小学: 新安 is a place word too, but 小学 alone names
    nothing), and past 的 only when an institution word ends what is left (北京的时候 is no organisation)."""
    for near in _NEAR:
        if near in said and is_institution(said.split(near)[-1]):
            said = said.split(near)[-1]
    words = [w for w in rjieba.cut(said) if w.strip()]
    places: list[str] = []
    at = 0
    while at < len(words) - 1 and places_zh.is_place(words[at]) and not is_university_short(words[at]):
        rest_words = words[at + 1:]
        crossed_of = rest_words[0] == "的"
        if crossed_of:
            rest_words = rest_words[1:]
        rest = "".join(rest_words)
        suffix = _suffix(rest) or ""
        if len(rest) - len(suffix) < 2 or (crossed_of and not suffix):
            break
        places.append(words[at])
        at += 2 if crossed_of else 1
    name = "".join(words[at:]).removeprefix("的")
    return Placed(name, tuple(places), said)
