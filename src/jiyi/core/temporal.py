"""When did it happen? Resolve the time a chat turn talks about (昨天, 上周五, last March, two days ago…).

A turn is said at some moment (`said_at`); its words may place the event elsewhere in time. `resolve_event_time`
turns the first time expression of the text into a concrete, half-open window `[start, end)` so that a memory can
carry *when*, and "什么时候…" / "when did …" questions can be answered with a date instead of "yesterday".

Rules (kept simple so results are predictable):

* Everything is computed in said_at's own timezone (pass a localised said_at for local days; UTC stays UTC).
  Results carry the same tzinfo. Windows are half-open: a day is [00:00, next 00:00); a "moment" has start == end.
* Weeks start on Monday (ISO). 上周 / last week is the Monday–Sunday week before said_at's week; 上周五 is the
  Friday of that week; 这周六 / this Saturday is the Saturday of said_at's week; 下周一 / next Monday is the Monday
  of the following week. English "last Friday" is the most recent Friday strictly before said_at's day (how it is
  used in speech); "this coming Friday" the first one strictly after it.
* Which expression: the leftmost time phrase in the text; at the same position the longest (上周五 over 上周).
  A phrase that cannot be resolved (2月30日, a year out of range, habitual 每周六 / every Saturday) is skipped and
  the next one tried. No expression → None.
* Expressions that do not say which way (a bare 周六 / Saturday / on the weekend, "in 3 days") point back in time —
  the most recent such day not after said_at's day — unless the text has a future cue (打算, 准备, 要去, will, 'll,
  going to …), in which case they point forward: the first such day on or after said_at's day. A date or a month
  without a year and without a future cue is the nearer of its last and its next occurrence (the last at a tie; +1
  day of slack for a date, which absorbs timezone slips): a date said without a year is close, and mostly a plan
  ("start april 6", "六月八号我生日", "graduates in May" said in March). Read as the most recent one, 62 of the 3,462
  dated memories of bench/context.py's three development halves went 5-12 months back, nearly all of them plans;
  what really lies further back says so (去年, 2019, last May). Words that say which way (明天, 下周, next month, 3
  days from now) always win.
* A day phrase followed by a part of the day (昨天晚上, 周五下午, Friday night, yesterday morning) narrows the
  window to that part (still granularity "day"); 今早 / 昨晚 / tonight / this morning are read the same way.
* Numbers: Arabic (also full-width), Chinese numerals up to 99 (三, 十二, 二十五, 两), English words one–twelve,
  a / an / a couple of. Vague counts (几天前, 两三天前, a few days ago, recently, 前几天) are deliberately not resolved.
* Ambiguous English month names: "May", "March" and "August" are also a verb / adjective, so a month name counts
  only next to a day number ("March 3rd", "3 May") or a year ("May 2019"), or after a preposition ("in March",
  "last May", "early March"). May / March / August with only a preposition must be capitalised, and with only a bare
  day number too ("may 5" no, "May 5" / "may 5th" yes). Abbreviations (Mar, Jun, Sept …) need a day number or year.
  Bare years count only after "in" / "during" (or with 年), never a lone number.
* Bare parts of the day (下午, 晚上), bare 周末, bare 号/日 (5号) and bare 刚 are not resolved: they are as often
  habitual, greetings or other words (晚上好, 5号线) as times.
* Sanity window: absolute years within said_at.year −120 … +100, relative counts within 100 years.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, tzinfo
from typing import Literal

__all__ = ["EventTime", "Granularity", "describe", "resolve_event_time"]

Granularity = Literal["moment", "day", "week", "month", "year"]


@dataclass(frozen=True, slots=True)
class EventTime:
    """When an event happened (or will): the half-open window [start, end) in said_at's timezone.

    granularity: how precisely the text said it — "moment" (start == end: 刚才, two hours ago), "day" (possibly only
    part of a day: 昨晚; or a weekend: 上周末), "week" (Monday-start), "month" or "year".
    phrase: the words of the text that said it, verbatim ("上周五晚上", "on the 3rd of March, 2019").
    """

    start: datetime
    end: datetime
    granularity: Granularity
    phrase: str


# --------------------------------------------------------------------------------------------------------------------
# Context and window builders
# --------------------------------------------------------------------------------------------------------------------

# Counts beyond these are history or hyperbole (一万年前), not the user's life.
_MAX_COUNT = {"minute": 60 * 24 * 365 * 100, "hour": 24 * 365 * 100, "day": 36_500, "week": 5_200, "month": 1_200,
              "year": 100}
_YEARS_BACK, _YEARS_AHEAD = 120, 100

# Part of the day → [start hour, end hour). Overlaps (noon) are fine: they only narrow a day.
_DAYPARTS: dict[str, tuple[int, int]] = {"early": (0, 6), "morning": (6, 12), "noon": (11, 14),
                                        "afternoon": (12, 18), "evening": (18, 24)}
_DAYPART_LABELS = {"early": ("凌晨", "early morning"), "morning": ("上午", "morning"), "noon": ("中午", "noon"),
                   "afternoon": ("下午", "afternoon"), "evening": ("晚上", "evening")}
_ZH_DAYPART = {"凌晨": "early", "半夜": "early", "早上": "morning", "早晨": "morning", "清晨": "morning",
               "上午": "morning", "中午": "noon", "下午": "afternoon", "傍晚": "evening", "晚上": "evening",
               "夜里": "evening", "夜晚": "evening"}
_EN_DAYPART = {"morning": "morning", "afternoon": "afternoon", "evening": "evening", "night": "evening"}

# Future cues: only consulted for expressions that do not say which way they point (a bare 周六, "3月5号").
# Chinese 要/会 are too common alone (重要, 开会), so they count only before a movement/action verb.
_ZH_FUTURE = re.compile(r"打算|准备|计划|将要|将会|即将|预计|到时|就要|快要|要[去来回考做办搬见出飞开上走结参]|"
                        r"会[去来回到在]|想去|得去|约好")
# "was going to" is a past plan (the event it mentions is usually past too), so it is not a future cue.
_EN_FUTURE = re.compile(r"\b(?:will|shall|won't|gonna|(?<!was\s)(?<!were\s)going\s+to|plan(?:s|ning|ned)?\s+to|"
                        r"about\s+to|intend(?:s|ing)?\s+to|upcoming|looking\s+forward)\b|['’]ll\b", re.IGNORECASE)


class _Ctx:
    """One resolution: said_at's day in its own timezone, and the (lazily computed) tense of the text."""

    __slots__ = ("_future", "said_at", "text", "today", "tz")

    def __init__(self, text: str, said_at: datetime) -> None:
        self.text = text
        self.said_at = said_at
        self.tz: tzinfo | None = said_at.tzinfo
        self.today: date = said_at.date()
        self._future: bool | None = None

    @property
    def future(self) -> bool:
        if self._future is None:
            self._future = bool(_ZH_FUTURE.search(self.text) or _EN_FUTURE.search(self.text))
        return self._future

    def midnight(self, d: date) -> datetime:
        return datetime.combine(d, time.min, tzinfo=self.tz)

    def days(self, d: date, n: int, phrase: str) -> EventTime:
        start = self.midnight(d)
        return EventTime(start, start + timedelta(days=n), "day", phrase)

    def day(self, d: date, phrase: str, part: str | None = None) -> EventTime:
        if part is None:
            return self.days(d, 1, phrase)
        h0, h1 = _DAYPARTS[part]
        base = self.midnight(d)
        return EventTime(base + timedelta(hours=h0), base + timedelta(hours=h1), "day", phrase)

    def week(self, any_day: date, phrase: str) -> EventTime:
        start = self.midnight(any_day - timedelta(days=any_day.weekday()))
        return EventTime(start, start + timedelta(days=7), "week", phrase)

    def month(self, year: int, month: int, phrase: str) -> EventTime | None:
        if not self.year_ok(year):
            return None
        ny, nm = _shift_month(year, month, 1)
        return EventTime(self.midnight(date(year, month, 1)), self.midnight(date(ny, nm, 1)), "month", phrase)

    def year(self, year: int, phrase: str) -> EventTime | None:
        if not self.year_ok(year):
            return None
        return EventTime(self.midnight(date(year, 1, 1)), self.midnight(date(year + 1, 1, 1)), "year", phrase)

    def moment(self, at: datetime, phrase: str) -> EventTime:
        return EventTime(at, at, "moment", phrase)

    def year_ok(self, year: int) -> bool:
        return self.today.year - _YEARS_BACK <= year <= self.today.year + _YEARS_AHEAD

    def monday(self, weeks: int = 0) -> date:
        return self.today - timedelta(days=self.today.weekday()) + timedelta(weeks=weeks)

    def weekend(self, weeks: int, phrase: str) -> EventTime:
        return self.days(self.monday(weeks) + timedelta(days=5), 2, phrase)

    def bare_weekday(self, wd: int) -> date:
        """A weekday that does not say which week: the latest one up to today, or the next from today on."""
        if self.future:
            return self.today + timedelta(days=(wd - self.today.weekday()) % 7)
        return self.today - timedelta(days=(self.today.weekday() - wd) % 7)

    def bare_weekend(self, phrase: str) -> EventTime:
        weeks = 0 if self.future or self.today.weekday() >= 5 else -1
        return self.weekend(weeks, phrase)

    def month_day(self, year: int | None, month: int, day_: int, phrase: str) -> EventTime | None:
        """A calendar date; without a year the most recent one (future cue: the next one), see the module rules."""
        if year is not None:
            return self.days(date(year, month, day_), 1, phrase) if self.year_ok(year) else None
        # Up to 8 years either way: Feb 29 comes round only every 4 (or 8) years.
        if self.future:
            for y in range(self.today.year, self.today.year + 9):
                d = _valid_date(y, month, day_)
                if d is not None and d >= self.today:
                    return self.days(d, 1, phrase)
            return None
        limit = self.today + timedelta(days=1)
        for y in range(limit.year, limit.year - 9, -1):
            d = _valid_date(y, month, day_)
            if d is not None and d <= limit:
                # The nearer of this date gone by and its next coming, the one gone by at a tie (module rules).
                ahead = _valid_date(d.year + 1, month, day_)
                if ahead is not None and (ahead - self.today) < (self.today - d):
                    d = ahead
                return self.days(d, 1, phrase)
        return None

    def month_no_year(self, month: int, phrase: str) -> EventTime | None:
        now = (self.today.year, self.today.month)
        if self.future:
            return self.month(now[0] if month >= now[1] else now[0] + 1, month, phrase)
        back = (now[1] - month) % 12  # months since it last began, 0 = this month
        year = now[0] if month <= now[1] else now[0] - 1
        return self.month(year + 1 if 12 - back < back else year, month, phrase)  # the nearer, as a date's

    def relative(self, n: int, unit: str, sign: int, phrase: str) -> EventTime | None:
        """n units before (sign −1) or after (+1) said_at, at the unit's granularity."""
        if n > _MAX_COUNT[unit]:
            return None
        if unit in ("minute", "hour"):
            delta = timedelta(minutes=n) if unit == "minute" else timedelta(hours=n)
            return self.moment(self.said_at + sign * delta, phrase)
        if unit == "day":
            return self.day(self.today + timedelta(days=sign * n), phrase)
        if unit == "week":
            return self.week(self.today + timedelta(weeks=sign * n), phrase)
        if unit == "month":
            return self.month(*_shift_month(self.today.year, self.today.month, sign * n), phrase)
        return self.year(self.today.year + sign * n, phrase)


def _shift_month(year: int, month: int, k: int) -> tuple[int, int]:
    y, m0 = divmod(year * 12 + (month - 1) + k, 12)
    return y, m0 + 1


def _valid_date(year: int, month: int, day_: int) -> date | None:
    try:
        return date(year, month, day_)
    except ValueError:
        return None


# --------------------------------------------------------------------------------------------------------------------
# Numbers
# --------------------------------------------------------------------------------------------------------------------

_CN_DIGIT = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
# 十二 / 二十 / 二十五 / 五 — one shape only, so that a vague run like 两三 (two or three) is rejected, not read as 23.
_CN_SHAPE = re.compile(r"(?:(?P<t>[一二两三四五六七八九])?(?P<ten>十))?(?P<u>[一二两三四五六七八九])?")
_EN_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
               "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}


def _cn_int(s: str) -> int | None:
    """Arabic (any Unicode decimal digits) or a Chinese numeral 零–九十九; None for anything else."""
    if s.isdecimal():
        return int(s)
    if s in ("零", "〇"):
        return 0
    m = _CN_SHAPE.fullmatch(s)
    if not s or m is None:
        return None
    tens = (_CN_DIGIT[m["t"]] if m["t"] else 1) if m["ten"] else 0
    return tens * 10 + (_CN_DIGIT[m["u"]] if m["u"] else 0)


def _cn_year(s: str) -> int:
    """2019 or 二〇一九 (Chinese years are read digit by digit)."""
    return int(s) if s.isdecimal() else int("".join(str(_CN_DIGIT[c]) for c in s))


def _en_int(s: str) -> int | None:
    s = " ".join(s.lower().split())
    if s.isdecimal():
        return int(s)
    if "couple" in s:
        return 2
    return _EN_NUMBERS.get(s)


# --------------------------------------------------------------------------------------------------------------------
# Chinese rules
# --------------------------------------------------------------------------------------------------------------------

_ZH_WEEKDAY = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
_ZH_REL = {"上上": -2, "上": -1, "这": 0, "本": 0, "下": 1, "下下": 2}
# 上/下 are also "on"/"under": 马上周末 (soon it's the weekend), 楼下周… — a 上/下 glued to these is not "last/next".
_ZH_REL_PREFIX = r"(?<![马早晚路桌网线身手楼天地世会床墙车以一底部乡如之留剩零])(?P<rel>上上|上|这|本|下下|下)"
# 周 followed by these is another word (周围 surroundings, 周到 thoughtful, 周年 anniversary…).
_ZH_ZHOU = r"周(?![围边到全年岁期遭折转旋密长刊报知游济身])"
# 周一 in 下周一起 (together next week), 周三个人 (three people this week): the digit belongs to the next word.
_ZH_WD = r"(?P<wd>[一二三四五六日天])(?![个次起直共样般同块位名本件条只十百])"
_ZH_NUM = r"[零〇一二两三四五六七八九十\d]+"
_ZH_NUM_BEHIND = r"(?<![零〇一二两三四五六七八九十\d几多个半])"  # 两三天, 十几天, 一个半小时: vague or not ours
_ZH_MONTH = r"(?P<m>\d{1,2}|十[一二]?|[一二三四五六七八九])月(?![光亮饼球薪经租嫂怀])份?"  # 月光, 月饼, 十月怀胎
_ZH_DAY = r"(?:(?P<d>\d{1,2}|[一二三四五六七八九十]{1,3})[日号])?"

_ZH_DAYS = {"大前天": -3, "前天": -2, "前日": -2, "昨天": -1, "昨日": -1, "昨儿个": -1, "昨儿": -1, "今天": 0,
            "今日": 0, "今儿个": 0, "今儿": 0, "明天": 1, "明日": 1, "明儿个": 1, "明儿": 1, "后天": 2, "大后天": 3}
_ZH_DAYS_PART = {"昨晚": (-1, "evening"), "昨夜": (-1, "evening"), "前晚": (-2, "evening"), "今早": (0, "morning"),
                 "今晨": (0, "morning"), "今晚": (0, "evening"), "今夜": (0, "evening"), "明早": (1, "morning"),
                 "明晚": (1, "evening")}
_ZH_YEARS = {"大前年": -3, "前年": -2, "去年": -1, "今年": 0, "明年": 1, "后年": 2, "大后年": 3}
_ZH_UNITS = {"天": "day", "周": "week", "星期": "week", "礼拜": "week", "年": "year", "月": "month", "小时": "hour",
             "钟头": "hour", "分钟": "minute"}


def _alternation(words: Iterable[str]) -> str:
    """Longest first, so that 大前天 is not read as 大 + 前天."""
    return "|".join(sorted(map(re.escape, words), key=len, reverse=True))


_ZH_DAY_RE = re.compile(r"(?<!先天)(?P<w>" + _alternation([*_ZH_DAYS, *_ZH_DAYS_PART]) + ")")
_ZH_JUST_NOW_RE = re.compile(r"刚才|刚刚(?!好)|方才")
# 前往 (go to), 前后 (around); 后来 (later on), 后面 — 前/后 glued to these is not "ago"/"later".
_ZH_AGO_RE = re.compile(
    _ZH_NUM_BEHIND + r"(?P<n>" + _ZH_NUM + r"|半)\s*"
    r"(?:(?P<u>天|周|年|分钟)|个?(?P<u2>小时|钟头|星期|礼拜)|个(?P<u3>月))"
    r"(?P<dir>以前|之前|前(?![往进夕后面边方途景台锋])|以后|之后|后(?![来面边方悔天者续期台]))")
_ZH_WEEK_RE = re.compile(_ZH_REL_PREFIX + r"个?(?:" + _ZH_ZHOU + r"|星期|礼拜)(?:" + _ZH_WD + r"|(?P<end>末))?")
_ZH_BARE_WEEKDAY_RE = re.compile(r"(?<![上下这本每个])(?:周|星期|礼拜)" + _ZH_WD)
_ZH_MONTH_REL_RE = re.compile(_ZH_REL_PREFIX + r"个?月(?![光亮饼球薪经租嫂])" + _ZH_DAY)
_ZH_YEAR_REL_RE = re.compile(r"(?<!年)(?P<rel>" + _alternation(_ZH_YEARS) + r")(?:" + _ZH_MONTH + _ZH_DAY + r")?")
# 2019年 / 二〇一九年 / 2019年3月 / 2019年3月5日, and 23年3月 (two-digit years only with a month, else 工作了23年).
_ZH_DATE_RE = re.compile(
    r"(?<![零〇一二两三四五六七八九十\d])(?:(?P<y>\d{4}|[零〇一二三四五六七八九]{4})|(?P<yy>\d{2})(?=年\s*(?:\d{1,2}|十[一二]?|[一二三四五六七八九])月))"
    r"年(?:\s*" + _ZH_MONTH + _ZH_DAY + r")?")
_ZH_MONTH_RE = re.compile(r"(?<![零〇一二两三四五六七八九十\d上下这本个每])" + _ZH_MONTH + _ZH_DAY)
_ISO_RE = re.compile(r"(?<![\d.\-/])(?P<y>\d{4})(?P<sep>[-/.])(?P<m>\d{1,2})(?P=sep)(?P<d>\d{1,2})(?![\d.\-/])")


def _zh_day(m: re.Match[str], ctx: _Ctx) -> EventTime | None:
    w = m["w"]
    if w in _ZH_DAYS:
        return ctx.day(ctx.today + timedelta(days=_ZH_DAYS[w]), m[0])
    offset, part = _ZH_DAYS_PART[w]
    return ctx.day(ctx.today + timedelta(days=offset), m[0], part)


def _just_now(m: re.Match[str], ctx: _Ctx) -> EventTime | None:
    return ctx.moment(ctx.said_at, m[0])


def _zh_ago(m: re.Match[str], ctx: _Ctx) -> EventTime | None:
    unit = _ZH_UNITS[m["u"] or m["u2"] or m["u3"]]
    sign = -1 if "前" in m["dir"] else 1
    if m["n"] == "半":  # 半小时前 is exact; 半年前 / 半天 are vague
        return ctx.moment(ctx.said_at + sign * timedelta(minutes=30), m[0]) if unit == "hour" else None
    n = _cn_int(m["n"])
    return None if n is None else ctx.relative(n, unit, sign, m[0])


def _zh_week(m: re.Match[str], ctx: _Ctx) -> EventTime | None:
    weeks = _ZH_REL[m["rel"]]
    if m["wd"]:
        return ctx.day(ctx.monday(weeks) + timedelta(days=_ZH_WEEKDAY[m["wd"]]), m[0])
    if m["end"]:
        return ctx.weekend(weeks, m[0])
    return ctx.week(ctx.monday(weeks), m[0])


def _zh_bare_weekday(m: re.Match[str], ctx: _Ctx) -> EventTime | None:
    return ctx.day(ctx.bare_weekday(_ZH_WEEKDAY[m["wd"]]), m[0])


def _zh_month_rel(m: re.Match[str], ctx: _Ctx) -> EventTime | None:
    y, mo = _shift_month(ctx.today.year, ctx.today.month, _ZH_REL[m["rel"]])
    if m["d"]:
        d = _cn_int(m["d"])
        return None if d is None else ctx.month_day(y, mo, d, m[0])
    return ctx.month(y, mo, m[0])


def _month_day_or_month(ctx: _Ctx, year: int | None, m: re.Match[str]) -> EventTime | None:
    mo = _cn_int(m["m"])
    if mo is None or not 1 <= mo <= 12:
        return None
    if m["d"]:
        d = _cn_int(m["d"])
        return None if d is None else ctx.month_day(year, mo, d, m[0])
    if year is None:
        return ctx.month_no_year(mo, m[0])
    return ctx.month(year, mo, m[0])


def _zh_year_rel(m: re.Match[str], ctx: _Ctx) -> EventTime | None:
    year = ctx.today.year + _ZH_YEARS[m["rel"]]
    return _month_day_or_month(ctx, year, m) if m["m"] else ctx.year(year, m[0])


def _zh_date(m: re.Match[str], ctx: _Ctx) -> EventTime | None:
    if m["y"]:
        year = _cn_year(m["y"])
    else:  # 23年 → the 2000s unless that is more than a decade ahead
        year = 2000 + int(m["yy"])
        if year > ctx.today.year + 10:
            year -= 100
    return _month_day_or_month(ctx, year, m) if m["m"] else ctx.year(year, m[0])


def _zh_month(m: re.Match[str], ctx: _Ctx) -> EventTime | None:
    return _month_day_or_month(ctx, None, m)


def _iso(m: re.Match[str], ctx: _Ctx) -> EventTime | None:
    return ctx.month_day(int(m["y"]), int(m["m"]), int(m["d"]), m[0])


# --------------------------------------------------------------------------------------------------------------------
# English rules
# --------------------------------------------------------------------------------------------------------------------

_I = re.IGNORECASE
_EN_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTHS_FULL = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
                "november", "december")
_MONTH_NUMBER = {name: i + 1 for i, name in enumerate(_MONTHS_FULL)}
_MONTH_NUMBER.update({"jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "sept": 9,
                      "oct": 10, "nov": 11, "dec": 12})
# Also an ordinary English word: needs a capital letter unless a day-with-ordinal or a year backs it.
_AMBIGUOUS_MONTHS = frozenset({"may", "march", "august"})
_EN_UNIT = {"min": "minute", "minute": "minute", "hr": "hour", "hour": "hour", "day": "day", "week": "week",
            "month": "month", "year": "year"}

_EN_NUM = (r"(?P<n>\d{1,5}|a\s+couple\s+of|a\s+couple|couple\s+of|an?|"
           r"one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)")
_EN_UNITS = r"(?P<u>minute|min|hour|hr|day|week|month|year)s?"
_MONTH_ANY = r"(?P<mon>" + _alternation(_MONTH_NUMBER) + r")\b\.?"
_MONTH_FULL = r"(?P<mon>" + _alternation(_MONTHS_FULL) + r")\b"
_DAY_NUM = r"(?<![:.\d/-])(?P<d>\d{1,2})(?P<ord>st|nd|rd|th)?\b"  # not the 30 of 10:30
# "May 3 people came", "March 5 times": a number that counts something is not a day of the month.
_NOT_A_DAY = (r"(?![:.]\d)(?!\s*(?:%|percent|am\b|pm\b|a\.m|p\.m|o'clock|people|persons|times|hours?|minutes?|"
              r"days|weeks|months|years|miles|km|kg|pounds|dollars|bucks|euros|of\s+(?:us|them|you|my|our|the)))")
# "14 Feb 2027", "14 feb next year": the year said after the date, in digits or relative to now.
_YEAR_TAIL = r"(?:,?\s+(?:of\s+)?(?P<y>\d{4})\b|,?\s+(?P<ry>next|last|this)\s+year\b)?"
_RELATIVE_YEAR = {"next": 1, "last": -1, "this": 0}

_EN_DAY_RE = re.compile(r"\b(?P<w>the\s+day\s+before\s+yesterday|the\s+day\s+after\s+tomorrow|yesterday|today|"
                        r"tomorrow|tonight|last\s+night|this\s+(?:morning|afternoon|evening)|earlier\s+today|"
                        r"later\s+today)\b(?!-)", _I)
_EN_JUST_NOW_RE = re.compile(r"\bjust\s+now\b|\bmoments?\s+ago\b|"
                             r"\ba\s+(?:moment|minute|few\s+minutes|little\s+while)\s+ago\b", _I)
_EN_AGO_RE = re.compile(r"\b" + _EN_NUM + r"\s+" + _EN_UNITS + r"\s+(?P<dir>ago|from\s+now)\b|"
                        r"\b(?P<half>half\s+an\s+hour\s+ago)\b", _I)
_EN_IN_RE = re.compile(r"\bin\s+" + _EN_NUM + r"\s+" + _EN_UNITS + r"\b(?!-)(?!\s+(?:ago|time|a\s+row|total))", _I)
_EN_REL_RE = re.compile(r"\b(?P<rel>this\s+past|this\s+coming|last|this|next)\s+(?P<u>week|month|year|weekend)\b(?!-)|"
                        r"\bthe\s+(?P<u2>week|month|year)\s+(?P<ba>before\s+last|after\s+next)\b", _I)
_EN_WEEKEND_RE = re.compile(r"\b(?:over|on|at|during)\s+the\s+weekend\b", _I)
_EN_WEEKDAY_RE = re.compile(r"\b(?:(?P<rel>last|this\s+past|this\s+coming|this|next|coming|on)\s+)?"
                            r"(?P<wd>" + "|".join(_EN_WEEKDAYS) + r")\b(?!-)", _I)
# "on Tuesday, March 3rd": the weekday is part of the date, not a phrase of its own that would win as leftmost.
_WEEKDAY_LEAD = r"(?:(?:on\s+)?(?:" + "|".join(_EN_WEEKDAYS) + r"),?\s+)?"
_EN_MONTH_DAY_RE = re.compile(r"\b" + _WEEKDAY_LEAD + _MONTH_ANY + r"\s+(?:the\s+)?" + _DAY_NUM + _NOT_A_DAY
                              + _YEAR_TAIL, _I)
_EN_DAY_MONTH_RE = re.compile(r"\b" + _WEEKDAY_LEAD + r"(?:the\s+)?" + _DAY_NUM + r"\s+(?:of\s+)?" + _MONTH_ANY
                              + _YEAR_TAIL, _I)
_EN_MONTH_YEAR_RE = re.compile(r"\b" + _MONTH_ANY + r",?\s+(?:of\s+)?(?P<y>\d{4})\b", _I)
_EN_PREP_MONTH_RE = re.compile(r"\b(?P<rel>in|during|last|this|next|early|late|mid)(?:\s+|-)"
                               r"(?:(?:early|late|mid)(?:\s+|-))?" + _MONTH_FULL + r"(?!-)" + _YEAR_TAIL, _I)
_EN_YEAR_RE = re.compile(r"\b(?:in|during)\s+(?:(?:early|late|mid)(?:\s+|-))?(?P<y>\d{4})\b(?![-–/.]\d)", _I)


def _en_day(m: re.Match[str], ctx: _Ctx) -> EventTime | None:
    w = " ".join(m["w"].lower().split())
    offset = {"the day before yesterday": -2, "yesterday": -1, "last night": -1, "tomorrow": 1,
              "the day after tomorrow": 2}.get(w, 0)
    part = {"tonight": "evening", "last night": "evening", "this morning": "morning",
            "this afternoon": "afternoon", "this evening": "evening"}.get(w)
    return ctx.day(ctx.today + timedelta(days=offset), m[0], part)


def _en_ago(m: re.Match[str], ctx: _Ctx) -> EventTime | None:
    if m["half"]:
        return ctx.moment(ctx.said_at - timedelta(minutes=30), m[0])
    n = _en_int(m["n"])
    sign = -1 if m["dir"].lower() == "ago" else 1
    return None if n is None else ctx.relative(n, _EN_UNIT[m["u"].lower()], sign, m[0])


def _en_in(m: re.Match[str], ctx: _Ctx) -> EventTime | None:
    # "in 3 days" is also a duration ("finished it in 3 days"): a point in time only in a sentence about the future.
    if not ctx.future:
        return None
    n = _en_int(m["n"])
    return None if n is None else ctx.relative(n, _EN_UNIT[m["u"].lower()], 1, m[0])


def _en_rel(m: re.Match[str], ctx: _Ctx) -> EventTime | None:
    if m["u2"]:
        unit, k = m["u2"].lower(), (-2 if m["ba"].lower().startswith("before") else 2)
    else:
        unit = m["u"].lower()
        rel = " ".join(m["rel"].lower().split())
        k = {"last": -1, "this past": -1, "this": 0, "next": 1, "this coming": 1}[rel]
        if rel == "this coming" and unit == "weekend" and ctx.today.weekday() < 5:
            k = 0  # said on a weekday, the coming weekend is this week's
    if unit == "weekend":
        return ctx.weekend(k, m[0])
    if unit == "week":
        return ctx.week(ctx.monday(k), m[0])
    if unit == "month":
        return ctx.month(*_shift_month(ctx.today.year, ctx.today.month, k), m[0])
    return ctx.year(ctx.today.year + k, m[0])


def _en_weekend(m: re.Match[str], ctx: _Ctx) -> EventTime | None:
    return ctx.bare_weekend(m[0])


def _en_weekday(m: re.Match[str], ctx: _Ctx) -> EventTime | None:
    wd = _EN_WEEKDAYS.index(m["wd"].lower())
    rel = " ".join((m["rel"] or "").lower().split())
    today = ctx.today
    if rel in ("last", "this past"):
        d = today - timedelta(days=(today.weekday() - wd - 1) % 7 + 1)
    elif rel in ("coming", "this coming"):
        d = today + timedelta(days=(wd - today.weekday() - 1) % 7 + 1)
    elif rel == "this":
        d = ctx.monday() + timedelta(days=wd)
    elif rel == "next":
        d = ctx.monday(1) + timedelta(days=wd)
    else:
        d = ctx.bare_weekday(wd)
    return ctx.day(d, m[0])


def _month_ok(name: str, *, ordinal: bool, year: bool) -> bool:
    """May/March/August are words too: lower-case next to a bare number ("may 5") they are not a date."""
    return name.lower() not in _AMBIGUOUS_MONTHS or name[0].isupper() or ordinal or year


def _tail_year(m: re.Match[str], ctx: _Ctx) -> int | None:
    """The year _YEAR_TAIL matched after a date, if any."""
    if m["y"]:
        return int(m["y"])
    if m["ry"]:
        return ctx.today.year + _RELATIVE_YEAR[m["ry"].lower()]
    return None


def _en_month_day(m: re.Match[str], ctx: _Ctx) -> EventTime | None:
    year = _tail_year(m, ctx)
    if not _month_ok(m["mon"], ordinal=bool(m["ord"]), year=year is not None):
        return None
    return ctx.month_day(year, _MONTH_NUMBER[m["mon"].lower()], int(m["d"]), m[0])


def _en_month_year(m: re.Match[str], ctx: _Ctx) -> EventTime | None:
    return ctx.month(int(m["y"]), _MONTH_NUMBER[m["mon"].lower()], m[0])


def _en_prep_month(m: re.Match[str], ctx: _Ctx) -> EventTime | None:
    name, month = m["mon"], _MONTH_NUMBER[m["mon"].lower()]
    year = _tail_year(m, ctx)
    if year is not None:
        return ctx.month(year, month, m[0])
    if name.lower() in _AMBIGUOUS_MONTHS and not name[0].isupper():  # "this may be", "in march formation"
        return None
    rel = m["rel"].lower()
    now = (ctx.today.year, ctx.today.month)
    if rel == "last":
        return ctx.month(now[0] if month < now[1] else now[0] - 1, month, m[0])
    if rel == "next":
        return ctx.month(now[0] if month > now[1] else now[0] + 1, month, m[0])
    if rel == "this":
        return ctx.month(now[0], month, m[0])
    return ctx.month_no_year(month, m[0])


def _en_year(m: re.Match[str], ctx: _Ctx) -> EventTime | None:
    return ctx.year(int(m["y"]), m[0])


# --------------------------------------------------------------------------------------------------------------------
# Matching
# --------------------------------------------------------------------------------------------------------------------

_Handler = Callable[[re.Match[str], _Ctx], EventTime | None]
_RULES: tuple[tuple[re.Pattern[str], _Handler], ...] = (
    (_ZH_DAY_RE, _zh_day), (_ZH_JUST_NOW_RE, _just_now), (_ZH_AGO_RE, _zh_ago), (_ZH_WEEK_RE, _zh_week),
    (_ZH_BARE_WEEKDAY_RE, _zh_bare_weekday), (_ZH_MONTH_REL_RE, _zh_month_rel), (_ZH_YEAR_REL_RE, _zh_year_rel),
    (_ZH_DATE_RE, _zh_date), (_ZH_MONTH_RE, _zh_month), (_ISO_RE, _iso),
    (_EN_DAY_RE, _en_day), (_EN_JUST_NOW_RE, _just_now), (_EN_AGO_RE, _en_ago), (_EN_IN_RE, _en_in),
    (_EN_REL_RE, _en_rel), (_EN_WEEKEND_RE, _en_weekend), (_EN_WEEKDAY_RE, _en_weekday),
    (_EN_MONTH_DAY_RE, _en_month_day), (_EN_DAY_MONTH_RE, _en_month_day), (_EN_MONTH_YEAR_RE, _en_month_year),
    (_EN_PREP_MONTH_RE, _en_prep_month), (_EN_YEAR_RE, _en_year),
)
# Habitual, not a point in time: 每周六, 每个月, every Saturday, each March.
_HABITUAL_BEFORE = re.compile(r"(?:每个?|每年|(?:\b(?:every|each)\s+))$", _I)
_DAYPART_AFTER = re.compile(r"\s*的?\s*(?P<zh>" + _alternation(_ZH_DAYPART) + r")|"
                            r"\s+(?:in\s+the\s+)?(?P<en>morning|afternoon|evening|night)\b", _I)


def _stream(rule: int, text: str) -> Iterator[tuple[int, int, int, re.Match[str]]]:
    for m in _RULES[rule][0].finditer(text):
        yield m.start(), m.start() - m.end(), rule, m


def _candidates(text: str) -> Iterator[tuple[int, int, int, re.Match[str]]]:
    """Every rule's matches, leftmost first, longest first at the same position (lazy k-way merge).

    Ties never reach the Match objects: a rule's own matches never share a start, and rules differ in index."""
    return heapq.merge(*(_stream(rule, text) for rule in range(len(_RULES))))


def resolve_event_time(text: str, said_at: datetime) -> EventTime | None:
    """The time the text places its event at, resolved against said_at (when the turn was said); None if none.

    The leftmost resolvable time phrase wins (longest at the same position); see the module docstring for the rules.
    Pure and fast: precompiled patterns, no I/O. Never raises for any text.
    """
    if not text:
        return None
    ctx = _Ctx(text, said_at)
    for start, _, rule, m in _candidates(text):
        if _HABITUAL_BEFORE.search(text, max(0, start - 8), start):
            continue
        try:
            event = _RULES[rule][1](m, ctx)
            if event is not None:
                return _with_daypart(event, ctx, m.end())
        except (ValueError, OverflowError):  # a date beyond datetime's range (said_at near year 1 or 9999)
            continue
    return None


def _with_daypart(event: EventTime, ctx: _Ctx, end: int) -> EventTime:
    """昨天晚上 / Friday night: a whole day followed by a part of the day narrows to that part."""
    if event.granularity != "day" or event.end - event.start != timedelta(days=1):
        return event
    m = _DAYPART_AFTER.match(ctx.text, end)
    if m is None:
        return event
    part = _ZH_DAYPART[m["zh"]] if m["zh"] else _EN_DAYPART[m["en"].lower()]
    return ctx.day(event.start.date(), event.phrase + m[0], part)


def describe(event: EventTime, *, chinese: bool) -> str:
    """A short label for the time: "2026-11-24", "2026-11-24 晚上" / "2026-11-24 evening", "2026-11-21 ~ 2026-11-22",
    "2026-11-16 那周" / "week of 2026-11-16", "2026年10月" / "2026-10", "2025年" / "2025", "2026-11-25 08:00"."""
    start = event.start
    if event.granularity == "moment":
        return f"{start.date().isoformat()} {start:%H:%M}"
    if event.granularity == "day":
        span = event.end - event.start
        if span == timedelta(days=1):
            return start.date().isoformat()
        if span < timedelta(days=1):
            end_hour = 24 if event.end.date() > start.date() else event.end.hour
            part = next((p for p, hours in _DAYPARTS.items() if hours == (start.hour, end_hour)), None)
            label = _DAYPART_LABELS[part][0 if chinese else 1] if part else f"{start:%H:%M}-{event.end:%H:%M}"
            return f"{start.date().isoformat()} {label}"
        return f"{start.date().isoformat()} ~ {(event.end - timedelta(days=1)).date().isoformat()}"
    if event.granularity == "week":
        return f"{start.date().isoformat()} 那周" if chinese else f"week of {start.date().isoformat()}"
    if event.granularity == "month":
        return f"{start.year}年{start.month}月" if chinese else f"{start.year:04d}-{start.month:02d}"
    return f"{start.year}年" if chinese else f"{start.year:04d}"
