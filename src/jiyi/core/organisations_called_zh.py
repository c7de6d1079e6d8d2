"""A Chinese organisation named by 叫 next to the words that say what it is: 一间会计师事务所叫立信德, 一间叫Kopi Lab
的咖啡店, 阿杰那间公司叫顺通物流 — and, said in a clause of its own (叫颐和苑), the name of the one a clause before
described (住进苏州的一家养老院). 去医院, 一家公司, 大学同学 say a kind of place and name none: only what 叫 puts
beside a kind word is a name."""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

import rjieba

from jiyi.core import organisations_zh, places_zh

# What an organisation is: the institutions organisations_zh knows and the shops a user names (咖啡店, 茶馆)
_KINDS = "|".join(sorted((*organisations_zh.INSTITUTIONS, "店", "馆", "单位", "市场", "山庄", "中心"),
                         key=len, reverse=True))
# A Latin name may be two words (Kopi Lab); a Chinese one runs to the clause's end or to 的
_LATIN = r"[A-Za-z][A-Za-z0-9&.'-]*(?: [A-Z][A-Za-z0-9&.'-]*)*"
_NAME_TO_END = r"(?P<org>" + _LATIN + r"|[\u4e00-\u9fff]{2,8})$"
# 一间会计师事务所叫立信德, 我们公司叫云栈科技, 阿杰那间公司叫顺通物流
_KIND_CALLED = re.compile(r"(?P<what>[\u4e00-\u9fffA-Za-z]{0,12}?(?:" + _KINDS + r"))(?:的名字)?"
                          r"(?:叫做?|名叫|名字叫)" + _NAME_TO_END)
# 一间叫Kopi Lab的咖啡店, 一家叫半亩田的小饭馆
_CALLED_KIND = re.compile(r"(?:间|家|个|所)叫(?P<org>" + _LATIN + r"|[\u4e00-\u9fff]{2,8}?)的"
                          r"(?P<what>[\u4e00-\u9fff]{0,4}?(?:" + _KINDS + r"))")
# 叫颐和苑 as a clause of its own
_CALLED_ALONE = re.compile(r"^(?:叫做?|名叫|名字叫)" + _NAME_TO_END)
# 一家养老院, 那间茶馆: one described, whose name a later clause may give (the places said before it are where it is)
_DESCRIBED = re.compile(r"(?:一|那|这)(?:间|家|所)[\u4e00-\u9fff]{0,8}?(?:" + _KINDS + r")")
# Whose it is: 阿杰那间公司, 我们公司, 她的单位 — the one who works there
_WHOSE = re.compile(r"^(?P<owner>[\u4e00-\u9fffA-Za-z]{1,4}?)(?:的|那间|那家|这家|那个|这间)?(?:公司|单位|厂)$")
_PEOPLE = ("我", "你", "他", "她", "大家", "人", "俺", "咱")
_NOT_A_NAME = re.compile(r"什么|啥|不|没|忘|这个|那个")  # 叫什么不记得了, 叫啥忘了
# 去了一间…, 跳槽到一家…: whom the clause is about went there to work, if the message speaks of a job
_WENT_TO_ONE = re.compile(r"(?:去了?|进了?|跳槽到|跳槽去|跳到|入职了?|加入了?)(?:一)?(?:间|家|个|所)")
_SPEAKS_OF_A_JOB = re.compile(r"跳槽|入职|上班|工作|offer|离职|辞职|面试|返工|转工")


@dataclass(frozen=True, slots=True)
class Called:
    """An organisation's name, what it was said to be (一间会计师事务所) and, said before that, whose it is."""

    name: str
    what: str
    owner: str | None = None
    joined: bool = False  # whom the clause is about went to work there


def _fits(name: str) -> bool:
    # 县医院叫我去培训: 叫 with a person after it asks them to do something
    return _NOT_A_NAME.search(name) is None and not name.startswith(_PEOPLE)


def called_in(clause: str, text: str) -> Called | None:
    """The organisation a clause of `text` names beside the word for what it is."""
    m = _KIND_CALLED.search(clause)
    if m is not None and _fits(m.group("org")):
        what = m.group("what")
        whose = _WHOSE.match(what)
        owner = whose.group("owner") if whose is not None else None
        went = _WENT_TO_ONE.search(what)
        joined = went is not None and _SPEAKS_OF_A_JOB.search(text) is not None
        return Called(m.group("org"), what[went.end():] if went is not None else what, owner, joined)
    return None


def called_before_kind(text: str) -> list[Called]:
    """一间叫Kopi Lab的咖啡店: read over the whole text, as a Latin name may have a space in it."""
    return [Called(m.group("org"), m.group("what")) for m in _CALLED_KIND.finditer(text) if _fits(m.group("org"))]


def described_in(clause: str) -> str | None:
    """An organisation said by what it is, not named, with the places said right before it: 住进苏州的一家养老院
    is 苏州的一家养老院."""
    m = _DESCRIBED.search(clause)
    if m is None:
        return None
    words = [w for w in rjieba.cut(clause[:m.start()]) if w.strip()]
    if words and words[-1] == "的":
        words.pop()
    places = list(itertools.takewhile(places_zh.is_place, reversed(words)))
    return "".join(reversed(places)) + ("的" if places else "") + m.group()


def named_alone(clause: str) -> str | None:
    """The name a clause that is only 叫… gives."""
    m = _CALLED_ALONE.match(clause)
    return m.group("org") if m is not None and _fits(m.group("org")) else None
