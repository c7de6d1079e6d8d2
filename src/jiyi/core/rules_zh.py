"""Offline fact extraction for Chinese: first-person statements rewritten as facts about the user.

Each rule recognises one kind of statement (我对海鲜过敏, 我搬到杭州了, 下周我要去北京出差) in one clause and says
what it is: its kind, whether it fills a single-valued slot (where the user lives), what topic it is about and whether
it reverses an earlier fact (我不再吃素了). Clauses that ask, wonder or suppose are not facts and are skipped.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import rjieba

from jiyi.core.facts import Fact, FactKind
from jiyi.core.rule_base import (
    ANIMAL,
    FEMALE,
    MALE,
    MOOD_SLOT,
    PERSON,
    PLURAL,
    THING,
    Mention,
    Rule,
    first_fact,
    habit_slot,
    last_relation,
    make_fact,
    named,
    resolve,
    unique_facts,
)

# Words that end a captured object: particles and trailing chatter.
_TRAILING = re.compile(r"[了啊呀呢啦哦哈吧嘛呗哟噢嗯的~～…。！!？?，,、；;：:\s]+$")
_LEADING_CHATTER = re.compile(r"^(?:哈+|嗯+|唉|哎|诶|对了|其实|不过|但是|可是|而且|然后|所以|另外|顺便说一下|说起来|跟你说|"
                              r"告诉你|我跟你说|不对|不是|说错了|纠正一下|话说|对|是的|是啊|嗯嗯|好吧|反正)[，,、\s]*")
_QUESTION = re.compile(r"[？?]|吗$|呢$|什么|怎么|怎样|哪|谁|(?<![玩住待呆歇休请过出差旅游去])几[个点天次岁]|多少|是不是|要不要|能不能|可不可以|有没有|会不会|"
                       r"好不好|对不对|为啥|为什么|咋")
_HYPOTHETICAL = re.compile(r"如果|要是|假如|假设|万一|的话|除非|但愿|希望你")
_NOT_ABOUT_USER = re.compile(r"^(?:你|您|他们|她们|咱们|大家|别人|有人)")

TIME_WORDS = (r"(?:今天|明天|后天|大后天|今晚|明晚|明早|今年|明年|下周[一二三四五六日天]?|下礼拜[一二三四五六日天]?|下星期[一二三四五六日天]?|"
              r"这周[一二三四五六日天末]?|周末|这个?周末|下个?月|月底|月初|年底|年初|暑假|寒假|国庆|春节|过年|过几天|"
              r"最近几天|过段时间|\d{1,2}月\d{1,2}[日号]|[一二三四五六七八九十]{1,3}月[一二三四五六七八九十]{1,3}[日号]|下半年|"
              r"周[一二三四五六日天])")
_TIME = re.compile(TIME_WORDS)

RELATIONS = ("妈妈|妈|母亲|爸爸|爸|父亲|老公|老婆|丈夫|妻子|爱人|女朋友|男朋友|女友|男友|对象|未婚妻|未婚夫|"
             "妹妹|姐姐|哥哥|弟弟|女儿|儿子|孩子|宝宝|闺女|爷爷|奶奶|外公|外婆|姥姥|姥爷|舅舅|姑姑|阿姨|叔叔|"
             "表妹|表姐|表哥|表弟|堂妹|堂姐|堂哥|堂弟|室友|闺蜜|兄弟|好朋友|朋友|同事|老板|领导|同学|导师|"
             "猫咪|猫|狗狗|狗|小狗|小猫|兔子|仓鼠|鹦鹉|乌龟|金鱼|宠物")
_RELATION_NAMES = {"妈": "妈妈", "爸": "爸爸", "女友": "女朋友", "男友": "男朋友", "狗狗": "狗", "猫咪": "猫"}
_PETS = {"猫", "狗", "小狗", "小猫", "兔子", "仓鼠", "鹦鹉", "乌龟", "金鱼", "宠物"}

_NUM = r"(?:\d{1,3}|[一二两三四五六七八九十百]{1,4})"
_COUNT = r"(?:一|两|二|三|四|五|几)?(?:个|只|条|位|头|匹)?"

_STATES = ("累|很累|疲惫|困|忙|烦|心烦|难过|伤心|开心|高兴|快乐|兴奋|焦虑|紧张|压力(?:很|好|特别|有点|太)?大|郁闷|孤独|寂寞|无聊|"
           "沮丧|崩溃|心情不好|心情很好|不开心|抑郁|emo|迷茫|害怕|担心|生气|委屈|想家|失恋|分手|低落|消沉|难受|烦躁|焦躁|"
           "心累|失落|压抑|不爽|"
           # relief: how a mood ends ("现在轻松多了")
           "轻松|放松|踏实|安心|平静|幸福|满足|好多了|心情好多了|没那么(?:紧张|焦虑|累|烦|难受)了?")
_RELIEF = r"(?:轻松|放松|踏实|安心|平静|(?:心情)?好多了|没那么)"
# A state said as a change (轻松多了, 好多了, 平静下来了): news about now, not a mood of the moment.
_CHANGE = r"(?:多了|了很多|了不少|一些了|一点了|下来了|起来了)"
_HEALTH = ("失眠|睡不着|睡不好|生病|感冒|发烧|咳嗽|头疼|头痛|胃疼|胃痛|牙疼|腰疼|不舒服|住院|骨折|怀孕|过敏|"
           "高血压|糖尿病|哮喘|抑郁症|焦虑症|胃病|胃炎|鼻炎|近视|贫血|偏头痛|颈椎病|腰椎间盘突出|心脏病|痛风")
_OCCUPATION_SUFFIX = re.compile(
    r"(?:程序员|工程师|设计师|医生|护士|老师|教师|教授|律师|会计|司机|厨师|警察|记者|作家|画家|歌手|演员|模特|"
    r"销售|经理|总监|老板|店主|主播|博主|学生|大学生|研究生|博士生?|硕士生?|本科生|高中生|初中生|小学生|"
    r"产品经理|运营|公务员|军人|农民|工人|自由职业者|全职妈妈|家庭主妇|退休|上班族|打工人|码农|"
    r"[师员生家手工长官]|者)$")
_DIET_WORDS = re.compile(r"^(?:吃素|素食者?|纯素|素食主义者|穆斯林)$")


_LEADING_COMMAS = re.compile(r"^[，,、\s]+")
_STARTS_DEICTIC = re.compile(r"^(?:这|那|它|你|您|他|她)(?!们家)")  # 这个 / 你说的 (but 她们家 is a place)


def _clean_object(text: str, limit: int = 24) -> str | None:
    text = _TRAILING.sub("", text.strip())
    text = _LEADING_COMMAS.sub("", text)
    if not text or len(text) > limit:
        return None
    if _STARTS_DEICTIC.match(text) and not text.startswith(("这边", "那边")):
        return None  # 我喜欢这个 / 我喜欢你说的: about the moment, not a lasting fact
    return text


_MY_MOM_OR_DAD = re.compile(r"我(妈|爸)(?!妈|爸)")  # 我妈 (but not 我妈妈, 我爸妈)
_MY_FAMILYS = re.compile(r"我家(?=" + RELATIONS + ")")
_OUR_FAMILY = re.compile(r"我们家")
_MY_BEFORE_RELATION = re.compile(r"我(?=" + RELATIONS + r")(?!的)")


def to_third_person(text: str) -> str:
    """我 → 用户 for the facts we store: 我妈 → 用户的妈妈, 我家猫 → 用户家的猫, 我的 → 用户的."""
    text = _MY_MOM_OR_DAD.sub(lambda m: "我的" + _RELATION_NAMES[m.group(1)], text)
    text = _MY_FAMILYS.sub("我家的", text)
    text = _OUR_FAMILY.sub("用户家", text)
    text = _MY_BEFORE_RELATION.sub("我的", text)
    return text.replace("我自己", "用户自己").replace("我", "用户")


_NOT_A_NAME = re.compile(r"[，,\s]|什么|啥")


def _name(m: re.Match[str], clause: str) -> Fact | None:
    name = _clean_object(m.group("name"), 12)
    if not name or _NOT_A_NAME.search(name):
        return None
    return make_fact(f"用户叫{name}", FactKind.PERSONAL, 0.9, slot="name", topic=name, core=True)


def _age(m: re.Match[str], clause: str) -> Fact | None:
    return make_fact(f"用户今年{m.group('age')}岁", FactKind.PERSONAL, 0.6, slot="age")


def _birthday(m: re.Match[str], clause: str) -> Fact | None:
    date = _clean_object(m.group("date"), 14)
    return make_fact(f"用户的生日是{date}", FactKind.PERSONAL, 0.9, slot="birthday", core=True) if date else None


_LEADING_DEGREE = re.compile(r"^(?:有点|有些|严重|特别|很|会|也|还)+")


def _allergy(m: re.Match[str], clause: str) -> Fact | None:
    what = _clean_object(m.group("what"), 12)
    if not what or what in ("有点", "有", "会"):
        return None
    what = _LEADING_DEGREE.sub("", what)
    return make_fact(f"用户对{what}过敏", FactKind.HEALTH, 0.95, topic=f"{what}过敏", core=True) if what else None


_NOT_A_PLACE = re.compile(r"^(?:家|家里|这|那|哪)$")
_A_STAY = re.compile(r"酒店|宾馆|旅馆|民宿|医院|帐篷")  # where one stays for a while, not where one lives


def _residence(m: re.Match[str], clause: str) -> Fact | None:
    place = _clean_object(m.group("place"), 16)
    if not place or _NOT_A_PLACE.match(place) or _A_STAY.search(place):
        return None
    return make_fact(f"用户住在{place}", FactKind.PERSONAL, 0.7, slot="residence", topic=place)


def _hometown(m: re.Match[str], clause: str) -> Fact | None:
    place = _clean_object(m.group("place"), 12)
    return make_fact(f"用户来自{place}", FactKind.PERSONAL, 0.7, slot="hometown", topic=place) if place else None


def _workplace(m: re.Match[str], clause: str) -> Fact | None:
    place = _clean_object(m.group("place"), 16)
    if not place or place in ("家", "家里", "公司", "这", "那"):
        return None
    verb = m.group("verb")
    if verb in ("上学", "读书", "念书", "读大学", "读研", "读博", "上大学", "读高中", "上高中"):
        return make_fact(f"用户在{place}{verb}", FactKind.PERSONAL, 0.7, slot="school", topic=place)
    return make_fact(f"用户在{place}{verb}", FactKind.PERSONAL, 0.7, slot="workplace", topic=place)


_NOT_AN_IDENTITY = re.compile(r"^(?:说|不|在|想|真|挺|有点|觉得|因为|为了|怎么|这样|那样|跟|和|被|把|对|来|去|第一次|故意)")
_LEADING_MEASURE = re.compile(r"^(?:一名|一个|一位|个|名|位)")


def _identity(m: re.Match[str], clause: str) -> Fact | None:
    what = _clean_object(m.group("what"), 16)
    if not what or _NOT_AN_IDENTITY.match(what):
        return None
    bare = _LEADING_MEASURE.sub("", what)
    if _DIET_WORDS.match(bare):
        return make_fact("用户吃素", FactKind.HEALTH, 0.8, topic="吃素")
    if bare.endswith("人") and not _OCCUPATION_SUFFIX.search(bare[:-1] or "x"):
        return make_fact(f"用户是{bare}", FactKind.PERSONAL, 0.7, slot="hometown", topic=bare[:-1])
    if _OCCUPATION_SUFFIX.search(bare):
        return make_fact(f"用户是{bare}", FactKind.PERSONAL, 0.8, slot="job", topic=bare)
    return None


def _job(m: re.Match[str], clause: str) -> Fact | None:
    what = _clean_object(m.group("what"), 16)
    return make_fact(f"用户的工作是{what}", FactKind.PERSONAL, 0.8, slot="job", topic=what) if what else None


def _diet(m: re.Match[str], clause: str) -> Fact | None:
    return make_fact("用户吃素", FactKind.HEALTH, 0.8, topic="吃素")


_LEADING_AGAIN_OR_WILL = re.compile(r"^(?:再|会)")
_LEADING_GO = re.compile(r"^去")


def _reversal(m: re.Match[str], clause: str) -> Fact | None:
    what = _clean_object(m.group("what"), 16)
    if not what:
        return None
    what = _LEADING_AGAIN_OR_WILL.sub("", what)
    # 不去健身房了: the place is the topic, the going stays in the fact ("用户不再健身房" said nothing).
    topic = _LEADING_GO.sub("", what)
    if len(topic) < 2:
        return None  # 不减了 / 不吃了: what is no longer done is not said
    if _STATE_ONLY.fullmatch(what):  # 我不紧张了: how the user feels now
        return make_fact(f"用户不再{what}", FactKind.STATE, 0.3, topic=what, slot=MOOD_SLOT, negated=True)
    return make_fact(f"用户不再{what}", _kind_of_habit(topic), 0.7, topic=_topic_of(topic), negated=True)


def _quit(m: re.Match[str], clause: str) -> Fact | None:
    what = _clean_object(m.group("what"), 10)
    if not what:
        return None
    return make_fact(f"用户戒了{what}", FactKind.HEALTH, 0.7, topic=_topic_of(what), negated=True)


_TRAILING_LIVE = re.compile(r"(?:住|去住|来住|定居|生活)$")  # 搬到杭州去住 → 杭州


def _moved(m: re.Match[str], clause: str) -> Fact | None:
    place = _clean_object(m.group("place"), 16)
    if not place:
        return None
    place = _TRAILING_LIVE.sub("", place)
    return make_fact(f"用户搬到了{place}", FactKind.PERSONAL, 0.8, slot="residence", topic=place)


def _new_job(m: re.Match[str], clause: str) -> Fact | None:
    place = _clean_object(m.group("place"), 16)
    if not place:
        return None
    return make_fact(f"用户现在在{place}{m.group('verb') or '工作'}", FactKind.PERSONAL, 0.8, slot="workplace", topic=place)


_EATS_DRINKS_SMOKES = re.compile(r"^(?:吃|喝|抽|戒)")
_TOPIC_DEGREE = re.compile(r"^(?:很|最|超|特别|非常|挺|蛮|也|还|都|真的|一直|比较|有点)+")
_TOPIC_LIKING = re.compile(r"^(?:喜欢|爱|热爱)")
_TOPIC_TRAILING_DE = re.compile(r"的?东西$|的$")


def _kind_of_habit(what: str) -> FactKind:
    if _EATS_DRINKS_SMOKES.match(what) or "素" in what:
        return FactKind.HEALTH
    return FactKind.PREFERENCE


def _topic_of(what: str) -> str:
    """喜欢吃辣 / 不吃辣 / 爱吃辣的 → 吃辣: the thing a preference is about, so reversals can be recognised."""
    what = _TOPIC_DEGREE.sub("", what)
    what = _TOPIC_LIKING.sub("", what)
    what = _TOPIC_TRAILING_DE.sub("", what)
    return what


_STARTS_WITH_DE = re.compile(r"^(?:的)")


def _likes(m: re.Match[str], clause: str) -> Fact | None:
    what = _clean_object(m.group("what"))
    if not what or what.startswith(("上你", "和你", "跟你", "听你", "看你")):
        return None
    if _STARTS_WITH_DE.match(what):
        return None
    text = to_third_person("我" + clause[m.start("lead"):m.end("what")].lstrip("我"))
    text = _TRAILING.sub("", text)
    verb = m.group("verb")
    prefix = verb if verb not in ("喜欢", "爱", "热爱", "钟爱", "偏爱", "迷上", "迷上了", "爱上", "爱上了") else ""
    return make_fact(text, FactKind.PREFERENCE, 0.5, topic=_topic_of(prefix + what))


_DOES_NOT_EAT = re.compile(r"不(?:吃|喝)")


def _dislikes(m: re.Match[str], clause: str) -> Fact | None:
    what = _clean_object(m.group("what"))
    if not what:
        return None
    verb = m.group("verb")
    text = _TRAILING.sub("", f"用户{m.group('deg') or ''}{verb}{what}")
    eats = _DOES_NOT_EAT.match(verb)
    topic = _topic_of(verb[1:] + what) if eats else _topic_of(what)
    kind = FactKind.HEALTH if eats else FactKind.PREFERENCE
    return make_fact(text, kind, 0.6 if eats else 0.5, topic=topic, negated=True)


def _favorite(m: re.Match[str], clause: str) -> Fact | None:
    thing, value = _clean_object(m.group("thing"), 10), _clean_object(m.group("value"), 16)
    if not thing or not value:
        return None
    return make_fact(f"用户最喜欢的{thing}是{value}", FactKind.PREFERENCE, 0.6, slot=f"favorite:{thing}", topic=value)


_NAMED = re.compile(r"^[，,]?(?:叫|名叫|名字叫)")  # 我有个妹妹，叫小雨
_NAMED_OR_IS = re.compile(r"^(?:叫|名叫|名字叫|是)")


def _has_relation(m: re.Match[str], clause: str) -> Fact | None:
    relation = _RELATION_NAMES.get(m.group("rel"), m.group("rel"))
    tail = _clean_object(clause[m.end("rel"):], 16) or ""
    count = m.group("count") or ("一只" if relation in _PETS else "一个")
    verb = m.group("verb")
    text = f"用户{verb}{count}{m.group('mod') or ''}{relation}" + (tail if _NAMED.match(tail) else "")
    return make_fact(_TRAILING.sub("", text.replace("，", "").replace(",", "")), FactKind.RELATIONSHIP, 0.7,
                 topic=relation)


def _relation_fact(m: re.Match[str], clause: str) -> Fact | None:
    rest = _clean_object(m.group("rest"), 24)
    if not rest or _QUESTION.search(rest):
        return None
    relation = _RELATION_NAMES.get(m.group("rel"), m.group("rel"))
    owner = "用户家的" if m.group("own") == "我家" else "用户的"
    importance = 0.8 if _NAMED_OR_IS.match(rest) else 0.6
    return make_fact(to_third_person(f"{owner}{relation}{rest}"), FactKind.RELATIONSHIP, importance, topic=relation,
                     negated=bool(_GONE.search(rest)))


def _plan(m: re.Match[str], clause: str) -> Fact | None:
    rest = _clean_object(m.group("rest"), 28)
    if not rest:
        return None
    time = m.group("t1") or m.group("t2") or ""
    verb = m.group("verb")
    if not time and verb in ("要", "想", "会", "想要", "得", "需要"):
        time_in_rest = _TIME.search(rest)
        if not time_in_rest:
            return None  # 我想吃东西 / 我要一杯水: a wish of the moment, not a plan
    return make_fact(to_third_person(f"用户{time}{verb}{rest}"), FactKind.PLAN, 0.5)


_RELIEVED = re.compile(_RELIEF)
_HEALTH_WORD = re.compile(_HEALTH)
_FEELING_BETTER = re.compile(r"(?:心情)?好多了|没那么")
_AT_LAST = re.compile(r"终于|总算")
_JUST_NOW = re.compile(r"今天|刚才|现在")


def _state(m: re.Match[str], clause: str) -> Fact | None:
    end = m.end("change") if m.group("change") else m.end("state")
    text = _TRAILING.sub("", to_third_person("我" + clause[m.end("me"):end]))
    if text.endswith("多") or (_RELIEVED.match(m.group("state")) and clause.endswith("了") and not m.group("change")):
        text += "了"  # 轻松多了 / 终于踏实了: the 了 is part of the change
    state = m.group("state")
    health = _HEALTH_WORD.search(state) is not None
    change = bool(m.group("change")) or _FEELING_BETTER.match(state) is not None or (
        _RELIEVED.match(state) is not None and (clause.endswith("了") or _AT_LAST.search(clause) is not None))
    if not health and not change and _JUST_NOW.search(clause):
        return None  # 今天好累: the moment's mood, not worth a memory (现在轻松多了 is news about now)
    if health:
        return make_fact(text, FactKind.HEALTH, 0.6, topic=state)
    return make_fact(text, FactKind.STATE, 0.3, topic=state, slot=MOOD_SLOT)


# --- habits, and what ends them ----------------------------------------------------------------------------------

_FREQUENCY = (r"(?:每天|每日|每晚|每早|每周[一二三四五六日天]?|每个?星期[一二三四五六日天]?|每个?礼拜[一二三四五六日天]?|每个?月|每年|"
              r"天天|经常|平时|通常|一般|总是|隔天|一周[一两二三四五六七]次|一天[一两二三]次)")
# What a routine is about: its activity, the same word for 跑步 / 跑 / 晨跑 so that 不能跑了 ends 每天跑步.
_ACTIVITY_WORDS = {"跑": "跑步", "慢跑": "跑步", "晨跑": "跑步", "夜跑": "跑步", "长跑": "跑步", "跑跑步": "跑步",
                   "游": "游泳", "撸铁": "健身", "健身房": "健身", "练": "健身", "骑": "骑车", "骑行": "骑车",
                   "单车": "骑车", "香烟": "烟", "抽烟": "烟", "吸烟": "烟", "喝酒": "酒", "白酒": "酒", "啤酒": "酒",
                   "红酒": "酒", "葡萄酒": "酒", "洋酒": "酒", "泳": "游泳"}
# Verbs whose object is the activity (喝咖啡 → 咖啡, 练瑜伽 → 瑜伽); the others are it (跑步, 游泳, 健身).
_LIGHT_VERBS = frozenset("吃 喝 抽 吸 打 弹 练 学 看 玩 做 踢 下 写 读 听 背 买 点 去 上 泡 追 刷 逛 骑 拉".split())
_NOT_ACTIVITY = re.compile(r"^(?:[\d一二两三四五六七八九十几半百千万]+.*|每天|天天|每周|每晚|每月|每年|平时|经常|早上|晚上|中午|下午|上午|凌晨|半夜|睡前|饭后|下班|下班后|"
                           r"起来|起床|起床后|醒来|都|会|要|得|也|还|就|再|能|可以|坚持|习惯|一直|去|出去|的|很|最|不|没|"
                           r"一下|一会儿|时候|小时|分钟|公里|杯|次|至少|最少|大概|差不多|基本|几乎|只|才|到)$")


_VERB_WORDS = frozenset("学习 上班 上学 上课 打算 写作 看病 打工 打卡 下班 上网 做饭 做梦 看看 玩玩 听说 读书会 打扰".split())


_AMOUNT = re.compile(r"[\d一二两三四五六七八九十几半]+(?:杯|瓶|罐|碗|个|次|包|根|口|块|片|份|公里|小时|个小时|分钟|趟|圈|束|本)")
_WORD_OF_LETTERS = re.compile(r"[\u4e00-\u9fffA-Za-z]+")


def activity_key(what: str) -> str | None:
    """The activity a routine or a restriction is about: 每天早上跑步五公里 → 跑步, 喝两杯咖啡 → 咖啡, 练半小时瑜伽 → 瑜伽,
    去健身房 → 健身; None when no activity is named (至少两杯)."""
    what = _AMOUNT.sub("", what)
    words = []
    for word in rjieba.cut(what):
        if not _WORD_OF_LETTERS.fullmatch(word):
            continue
        if len(word) >= 2 and word[0] in _LIGHT_VERBS and word not in _ACTIVITY_WORDS and word not in _VERB_WORDS \
                and word not in _ACTIVITY_WORDS.values():
            words += [word[0], word[1:]]  # 买花 → 买 花, 喝咖啡 → 喝 咖啡
        else:
            words.append(word)
    while words and _NOT_ACTIVITY.match(words[0]) and words[0] not in _ACTIVITY_WORDS:
        words = words[1:]
    if not words:
        return None
    head = words[0]
    if head in _LIGHT_VERBS:
        rest = [w for w in words[1:] if not _NOT_ACTIVITY.match(w)]
        if rest:
            head = rest[0]
        elif head not in _ACTIVITY_WORDS:
            return None
    else:
        rest = words
    # The segmenter cuts a word it does not know into characters (拿铁 → 拿 铁): they are one word again.
    if len(head) == 1 and rest and rest[0] == head:
        while len(rest) > 1 and len(rest[1]) == 1 and len(head) < 4:
            head, rest = head + rest[1], rest[1:]
    return _ACTIVITY_WORDS.get(head, head)


_HOW_IT_IS = re.compile(r"^(?:的|是|很|好|挺|太|特别|有点|都很|都是)")
_HOW_IT_FEELS = re.compile(r"(?:好|很|太|真|超|挺)[^，,]{1,3}$")
_ENDS_DOUBLED = re.compile(r"(.)\1$")  # 乐呵呵


# What someone else makes the user do (她天天让我回去找个稳定工作, said on from "她在老家当牙医"): the routine is theirs.
_MADE_TO = re.compile(r"^(?:让|叫|逼|催|劝|要|求|喊)我")


def _habit(m: re.Match[str], clause: str) -> Fact | None:
    """我每天早上跑步五公里 / 我平时每周游两次泳: a routine, one per activity (slot habit:<activity>)."""
    act = _TRAILING.sub("", m.group("act"))
    key = activity_key(act)
    if not key or _MADE_TO.match(act) or _HOW_IT_IS.match(act) or _STATE_ONLY.match(act) \
            or _HOW_IT_FEELS.search(act) or _ENDS_DOUBLED.search(key):
        return None  # 每天接送好麻烦, 每天都乐呵呵的: how it feels, not what is done
    text = _TRAILING.sub("", to_third_person("我" + clause[m.end("me"):]))
    if len(text) > 30:
        return None
    return make_fact(text, FactKind.PREFERENCE, 0.5, topic=key, slot=habit_slot(key))


_STATE_ONLY = re.compile(r"^(?:都|很|好|特别|非常|挺)*(?:" + _STATES + "|" + _HEALTH + ")")


_NOT_AN_ACTIVITY_OFF = re.compile(r"^(?:说|想|理解|接受|相信|确定|喜欢|吃素)")  # 不能理解, 不能说: no routine stops


def _cannot(m: re.Match[str], clause: str) -> Fact | None:
    """暂时不能跑步了 / 我已经停了游泳: the activity is off for now; it ends the routine (same habit slot)."""
    act = _TRAILING.sub("", m.group("act"))
    key = activity_key(act)
    if not key or _NOT_AN_ACTIVITY_OFF.match(act):
        return None
    text = _TRAILING.sub("", to_third_person("我" + clause[m.end("me"):]))
    return make_fact(text, FactKind.HEALTH, 0.6, topic=key, slot=habit_slot(key), negated=True)


_FORBIDDEN = re.compile(r"(?:别再?|不要再?|不能再?|不准|不许|少)(?P<act>.+)$")


def _doctor(m: re.Match[str], clause: str) -> Fact | None:
    """医生说我心律不齐 → 用户心律不齐; 医生说暂时不能跑步 → 医生说用户暂时不能跑步; 医生让我少吃盐 → 医生让用户少吃盐."""
    rest = _TRAILING.sub("", m.group("rest"))
    if not rest or _QUESTION.search(rest):
        return None
    verb = m.group("verb")
    forbidden = _FORBIDDEN.match(rest)
    if verb in ("不让", "不许", "不准") or (forbidden and verb != "说"):
        key = activity_key(forbidden.group("act") if forbidden else rest)
        if key:
            return make_fact(to_third_person(f"医生{verb}我{rest}"), FactKind.HEALTH, 0.7, topic=key,
                             slot=habit_slot(key), negated=True)
    said = "我" + rest
    inner = first_fact(RULES, said)
    if inner is None:
        inner = _generic(rest, "我")
    if verb != "说":  # an instruction: keep who gave it
        return make_fact(to_third_person(f"医生{verb}我{rest}"), FactKind.HEALTH, 0.7,
                         topic=inner.topic if inner else None, slot=inner.slot if inner else None,
                         negated=inner.negated if inner else False)
    if inner is None:
        return None
    if inner.negated and inner.slot:
        inner.text = "医生说" + inner.text  # 医生说用户暂时不能跑步: why the routine stopped
    inner.kind = FactKind.HEALTH
    inner.importance = max(inner.importance, 0.7)
    return inner


_BODY = (r"(?:耳朵|喉咙|嗓子|鼻子|膝盖|腰|脚踝|脚|腿|小腿|大腿|手腕|手|胳膊|肩膀|肩|脖子|背|后背|颈椎|腰椎|韧带|半月板|跟腱|手指|脚趾|眼睛|牙|"
         r"牙齿|肋骨|尾椎|腰肌|腱鞘)")


_LEADING_MY = re.compile(r"^我的?")


def _injury(m: re.Match[str], clause: str) -> Fact | None:
    text = _TRAILING.sub("", to_third_person("我" + _LEADING_MY.sub("", clause[:m.end("what")])))
    return make_fact(text, FactKind.HEALTH, 0.7, topic=m.group("part") + "受伤")


_STARTS_WITH_PRONOUN = re.compile(r"^(?:这|那|它|你|他|她)")


def _necessity(m: re.Match[str], clause: str) -> Fact | None:
    """拿铁已经成了我每天的必需品 / 我每天都离不开咖啡: a habit said as a need."""
    thing = _clean_object(m.group("thing") or m.group("thing2"), 8)
    if not thing or _STARTS_WITH_PRONOUN.match(thing):
        return None
    key = (activity_key(thing) if thing[0] in _LIGHT_VERBS else None) or _ACTIVITY_WORDS.get(thing, thing)
    text = _TRAILING.sub("", to_third_person(clause[m.start():]))
    return make_fact(text, FactKind.PREFERENCE, 0.6, topic=key, slot=habit_slot(key))


_ACTION_VERBS = r"(?:买|喝|吃|点|去|跑|游|练|看|做|打|逛|学|煮|订|报|办|领养|健身|跑步|游泳|上|泡|追|刷|骑|拉|弹|写|读|听|加班|熬夜)"
_DAY_TIMES = (r"(?:" + "(?:上班|下班|回家|放学)(?:路上|后|的时候)|午休|午饭后|今早|今天早上|今天|早上|上午|中午|下午|晚上|傍晚|昨天|昨晚|前天|刚刚|刚才|上周[一二三四五六日天末]?|周末|"
              r"这周[一二三四五六日天末]?|周[一二三四五六日天]|今晚" + ")")


_NOT_DONE_BY_USER = re.compile(r"你|被|死了|没$")
_NOTHING_IN_PARTICULAR = re.compile(r"(?:了|过)?(?:个|一个|一下|点|些|一些|一会儿?)(?:视频|东西|饭|觉|会|书|剧)?$")


def _done(m: re.Match[str], clause: str) -> Fact | None:
    """早上买了一杯拿铁 / 今天又去健身房了: something the user did, said without 我 (Chinese drops it)."""
    if not (m.group("time") or m.group("again")) or _NOT_DONE_BY_USER.search(clause):
        return None
    if _NOTHING_IN_PARTICULAR.match(clause[m.end():]):
        return None  # 昨天看了个视频: nothing in particular
    if statement_kind(clause) is not FactKind.EVENT:
        return None
    text = _TRAILING.sub("", to_third_person("我" + clause))
    return make_fact(text, FactKind.EVENT, 0.4) if len(text) <= 30 else None


def _illness(m: re.Match[str], clause: str) -> Fact | None:
    what = m.group("what")
    return make_fact(f"用户有{what}", FactKind.HEALTH, 0.85, topic=what, core=True)


_ME = r"(?P<me>我)"
_DEG = r"(?:最|很|超|超级|特别|非常|挺|蛮|真的|一直|也|还|都|比较|巨|贼|好|真|其实)*"

_RUN_BY_SOMEONE_ELSE = re.compile(r"会|课|航班|快递|订单|外卖|比赛")
_EATS_OR_DRINKS = re.compile(r"^(?:吃|喝)")  # 不能吃辣, with no time and no 了: a diet, not a pause
_DATE_LIKE = re.compile(r"\d|月|号|日")  # 我是北京出生的 says no birthday
_RELIEVED_OR_HAPPY = re.compile(_RELIEF + "|开心|高兴")  # 终于开心了: a mood said with 终于 / 总算 is a change


def _called_off(m: re.Match[str], clause: str) -> Fact | None:
    """婚礼取消了 / 去日本的计划泡汤了: a plan of the user's that is off (it replaces the plan, offline.decide)."""
    what = _clean_object(m.group("what"), 12)
    if not what or _RUN_BY_SOMEONE_ELSE.search(what):
        return None  # a meeting, a class, a flight someone else cancelled: not the user's plan
    owner = "用户" if what.startswith(("去", "的")) else "用户的"
    return make_fact(f"{owner}{what}{m.group('verb')}", FactKind.PLAN, 0.6, topic=what)


RULES: tuple[Rule, ...] = (
    Rule("called-off", re.compile(r"^(?:我们?的?)?(?P<what>[^，,。！？我]{1,12}?)(?P<verb>取消了|泡汤了|黄了|不办了|延期了)$"),
         _called_off),
    Rule("doctor", re.compile(r"^(?:医生|大夫|医师)(?:也|还|都)?(?P<verb>说|让|叫|建议|嘱咐|要求|不让|不许|不准|交代)(?:我)?(?P<rest>.{2,20})$"),
          _doctor),
    Rule("cannot", re.compile(r"^(?P<me>我?)(?P<when>(?:现在|目前|暂时|以后|这段时间|最近|短期内|这(?:几|两)个月|半年|一段时间|"
                               r"[一二两三四五六七八九十半几]+(?:个月|周|年|天)(?:内|之内)?)*)(?:都|也|就|还|又)?"
                               r"(?P<neg>不能再?|不可以再?|不能够|没法再?|没办法再?|不准再?|不许再?|不敢再?|停了|暂停了)"
                               r"(?P<act>[^，,。]{1,10})$"),
          lambda m, c: _cannot(m, c) if (m.group("when") or c.endswith("了") or m.group("neg").endswith("了")
                                         or not _EATS_OR_DRINKS.match(m.group("act"))) else None),
    Rule("reversal", re.compile(r"我(?:现在|已经|早就|后来|从今年起|这两年)?(?:不再|已经不|早就不|再也不|不)(?P<what>.{1,14}?)了$"),
          _reversal),
    Rule("no-longer", re.compile(r"我(?:现在|已经|早就|后来)?(?:不再|再也不)(?P<what>.{1,14})$"), _reversal),
    Rule("quit-short", re.compile(r"我(?:已经|终于|早就|去年|今年)?戒(?P<what>烟|酒|糖|奶茶|咖啡|可乐|游戏)了?$"),
          lambda m, c: make_fact(f"用户戒{m.group('what')}了", FactKind.HEALTH, 0.7, topic=m.group("what"), negated=True)),
    Rule("quit", re.compile(r"我(?:已经|终于|早就)?(?:戒了|戒掉了|把(?P<obj>.{1,6}?)戒了)(?P<what>.{0,10})$"),
          lambda m, c: _quit(m, c) if m.group("what") else (
              make_fact(f"用户戒了{m.group('obj')}", FactKind.HEALTH, 0.7, topic=m.group("obj"), negated=True)
              if m.group("obj") else None)),
    Rule("moved", re.compile(r"我(?:们)?(?:已经|刚刚?|最近|上个月|去年|今年)?(?:搬到|搬去|搬家到|搬来)了?(?P<place>.{1,16})$"),
          _moved),
    Rule("new-job", re.compile(r"^我(?:现在|目前|已经|刚)?(?:换到|跳槽到|调到|入职|转到|去了)(?P<place>.{1,14}?)(?P<verb>工作|上班|实习)?了?$"),
          _new_job),
    Rule("allergy", re.compile(r"(?:我|^)(?:对)?(?P<what>[^，,。我你]{1,12}?)过敏"), _allergy),
    Rule("illness", re.compile(r"我(?:有|得了|患有|患了|查出了?|确诊了?)(?P<what>高血压|糖尿病|哮喘|抑郁症|焦虑症|胃病|胃炎|鼻炎|"
                                r"偏头痛|颈椎病|心脏病|痛风|贫血|腰椎间盘突出|失眠症?)"), _illness),
    Rule("name", re.compile(r"(?:我叫|我的名字(?:是|叫)|我名字(?:是|叫)|叫我)(?P<name>[^，,。！!？?\s]{1,10}?)(?:就行|就好|就可以)?(?:[，,。！!]|$)"),
          _name),
    Rule("age", re.compile(r"我(?:今年|已经|快)?(?P<age>" + _NUM + r")岁|我今年(?P<age2>\d{1,2})$"),
          lambda m, c: _age(m, c) if m.group("age") else
          make_fact(f"用户今年{m.group('age2')}岁", FactKind.PERSONAL, 0.6, slot="age")),
    Rule("injury", re.compile(r"^(?:我的?)?(?:前阵子|前两天|前几天|上周|上个月|昨天|最近|今天|刚刚?|之前|去年)?(?:我的?)?"
                               r"(?P<part>" + _BODY + r")(?:又|也)?(?P<what>受伤了?|扭伤了?|扭了|拉伤了?|骨折了?|断了|伤了|摔伤了?|"
                               r"发炎了?|做了手术|动了手术)"), _injury),
    Rule("necessity", re.compile(r"^(?P<thing>[^，,。我你]{1,8}?)(?:已经|早就|现在|简直|基本上?|真的)?(?:成了|成为了?|变成了?|是|算是)"
                                  r"我(?:的)?(?:每天|每日|日常|生活|每天早上|每天晚上|工作日|早上)?(?:中|里)?的?(?:必需品|必备品?|刚需|"
                                  r"标配|日常|续命[水神器]?|一部分|习惯)|我(?:现在)?(?:每天|天天)?都?(?:离不开|少不了|戒不掉)"
                                  r"(?P<thing2>[^，,。]{1,8})$"), _necessity),
    Rule("birthday", re.compile(r"(?:我的?生日(?:是|在)?(?P<date>.{2,12}?)(?:[，,。]|$)|我(?:是)?(?P<d2>.{2,10}?)(?:出生|生日)的?)"),
          lambda m, c: _birthday(m, c) if m.group("date") else (
              make_fact(f"用户的生日是{m.group('d2')}", FactKind.PERSONAL, 0.9, slot="birthday", core=True)
              if _DATE_LIKE.search(m.group("d2")) else None)),
    Rule("favorite", re.compile(r"我最(?:喜欢|爱)的(?P<thing>.{1,8}?)(?:是|就是)(?P<value>.{1,16})$"), _favorite),
    Rule("residence", re.compile(r"我(?:现在|目前|一直|平时)?(?:住在|住|家在|定居在|生活在)(?P<place>[^，,。]{1,16}?)(?:住)?$"),
          _residence),
    Rule("hometown", re.compile(r"(?:我来自|我老家(?:是|在)|我是从)(?P<place>[^，,。]{1,12}?)(?:来的)?$"), _hometown),
    Rule("workplace", re.compile(r"我(?:现在|目前|一直)?在(?P<place>[^，,。]{1,14}?)(?P<verb>工作|上班|实习|上学|读书|念书|读大学|"
                                  r"读研|读博|上大学|读高中|上高中)"), _workplace),
    Rule("job", re.compile(r"我的(?:工作|职业)是(?P<what>.{1,14})$|我(?:是)?(?:做|干|搞)(?P<w2>.{1,10}?)(?:工作的?|的)$"),
          lambda m, c: _job(m, c) if m.group("what") else (
              make_fact(f"用户做{m.group('w2')}工作", FactKind.PERSONAL, 0.7, slot="job", topic=m.group("w2"))
              if m.group("w2") else None)),
    Rule("diet", re.compile(r"我(?:一直|平时|从小|现在)?(?:是)?(?:吃素|素食者|素食主义者|纯素食?者?)"), _diet),
    Rule("relationship-status", re.compile(r"^我?(?:现在|目前|还是|一直|依然|仍然)*(?:是)?(?P<status>单身|已婚|离异|未婚|恢复单身)了?$"),
          lambda m, c: make_fact(f"用户{'目前' if m.group('status') == '单身' else ''}{m.group('status')}",
                                 FactKind.PERSONAL, 0.7, slot="relationship-status", topic=m.group("status"))),
    Rule("identity", re.compile(r"我(?:现在|目前|其实|本来)?是(?P<what>.{1,16})$"), _identity),
    # 我会弹钢琴 / 我根本不会弹钢琴: a skill, and saying it is not one
    Rule("skill", re.compile(r"^我(?P<neg>(?:根本|完全|其实|并|也|都)*不)?会(?P<what>(?:弹|拉|吹|说|讲|做|游|开|画|唱|跳|写|编|下|打|"
                              r"滑|骑|织|修)[^，,。]{0,8})$"),
          lambda m, c: make_fact(_TRAILING.sub("", to_third_person(c)), FactKind.PERSONAL, 0.6,
                                 topic=_TRAILING.sub("", m.group("what")), negated=bool(m.group("neg")))),
    Rule("favorite-likes", re.compile(r"(?P<lead>我" + _DEG + r")(?P<verb>喜欢|爱吃|爱喝|爱看|爱玩|爱听|热爱|爱上了?|迷上了?|"
                                       r"钟爱|偏爱|爱)(?P<what>.{1,22})$"), _likes),
    Rule("dislikes", re.compile(r"我(?P<deg>" + _DEG + r")(?P<verb>不喜欢|讨厌|受不了|最烦|不爱|不太喜欢|不吃|不喝|不能吃|"
                                 r"不能喝|吃不了|喝不了|怕|害怕)(?P<what>.{1,20})$"), _dislikes),
    Rule("has-relation", re.compile(r"我(?P<verb>有|养了|养着|还有|家有|领养了|收养了)(?P<count>" + _COUNT + r")"
                                     r"(?P<mod>(?<=[只条])[\u4e00-\u9fff]{1,2}?)?(?P<rel>" + RELATIONS + ")"),
          _has_relation),
    Rule("relation-fact", re.compile(r"(?P<own>我的?|我家)(?P<rel>" + RELATIONS + r")(?P<rest>(?:叫|名叫|名字叫|是|在|今年|也|还|"
                                      r"住在|住|喜欢|爱|做|当|有|得了|生病|怀孕|刚|下个?月|明天|下周|特别|很|最近).{1,22})$"),
          _relation_fact),
    Rule("plan", re.compile(r"(?:(?P<t1>" + TIME_WORDS + r")[，,]?)?我(?:们)?(?P<t2>" + TIME_WORDS + r")?(?P<verb>打算|准备|计划|决定|"
                             r"要|将要|想要|会|得|需要|正在准备|约了)(?P<rest>.{2,28})$"), _plan),
    Rule("state", re.compile(r"(?P<me>我)(?:最近|这几天|这阵子|这段时间|今天|现在|一直|老是|总是|又|还是|终于|总算)*(?:也|都)?"
                              r"(?:的)?(?:心情|情绪|状态|精神)?(?:有点儿?|有些|很|好|特别|非常|超|挺|"
                              r"太|比较|真的|经常|总|都快)?(?:感觉|觉得)?(?:整个人)?(?P<state>" + _STATES + "|" + _HEALTH + ")"
                              r"(?P<change>" + _CHANGE + ")?"),
          _state),
    Rule("habit", re.compile(r"(?P<me>我)(?:平时|一般|通常|现在|目前|基本上?|几乎|也|还)*(?:都)?(?:会)?" + _FREQUENCY +
                              r"(?P<act>[^，,。]{2,18})$"), _habit),
    # 现在住浦东 / 目前住在城西: where the user lives now, said without 我
    Rule("residence-now", re.compile(r"^(?:现在|目前|如今)(?:已经)?(?:住在?|定居在?)(?P<place>[^，,。]{1,12}?)(?:了|啦)?$"), _residence),
    # 最近加班好多 / 这阵子在备考: what the user has been doing lately, said without 我
    Rule("lately", re.compile(r"^(?:最近|这阵子|这段时间|这几天|近期|这两周)(?:一直|经常|老是|总是|天天|都|也)*(?:在)?"
                               r"(?:加班|熬夜|健身|跑步|学|练|减肥|准备|备考|考研|找工作|追|忙着?|出差|写|带娃|装修|搬家)"),
          lambda m, c: make_fact(_TRAILING.sub("", to_third_person("我" + c)), FactKind.OTHER, 0.4)
          if len(c) <= 20 else None),
    # 留学不去了 / 咖啡不喝了: the thing first, then that it is off
    Rule("dropped", re.compile(r"^(?!这|那|它|算了|" + TIME_WORDS + r"|晚上|早上|中午|下午|上午)(?P<obj>[^我你他她，,了]{2,6}?)"
                                r"(?:也|就|还是|先|都|暂时)?不(?P<verb>去|学|考|买|办|搬|读|喝|吃|玩|练|做|"
                                r"结|要|养|报|跑|抽|减)了$"),
          lambda m, c: make_fact(f"用户不{m.group('verb')}{m.group('obj')}了", _kind_of_habit(m.group("verb")), 0.6,
                                 topic=m.group("obj"), negated=True)),
    # 现在改喝茶了 / 后来改成游泳了: a switch to something else
    Rule("switched", re.compile(r"^(?P<me>我?)(?:现在|目前|后来|已经|最近)*(?:都)?改(?:成|为)?(?=喝|吃|用|去|练|玩|学|喜欢|听|看|"
                                 r"游|跑|骑|做|坐)(?P<what>[^，,。]{1,10})$"),
          lambda m, c: make_fact(_TRAILING.sub("", to_third_person("我" + c[m.end("me"):])), FactKind.PREFERENCE, 0.6,
                                 topic=_topic_of(m.group("what")))),
    # 瘦了十斤 / 又胖了三公斤: a change of weight
    Rule("weight", re.compile(r"^(?P<me>我?)(?:最近|这个月|已经|一共|总共|又)*(?P<verb>瘦|胖|长胖|减|重|轻)了(?P<amount>[\d一二两三四五六七八九十几半]+"
                               r"(?:斤|公斤|kg|磅))"),
          lambda m, c: make_fact(_TRAILING.sub("", to_third_person("我" + c[m.end("me"):m.end("amount")])), FactKind.HEALTH,
                                 0.6, topic="体重")),
    Rule("done-to-me", re.compile(r"^(?P<who>[^我你，,]{1,6}?)(?:要|准备|打算|想|会|已经|又)?(?:把|将)我(?P<rest>[^，,]{2,14})$"),
          lambda m, c: make_fact(_TRAILING.sub("", to_third_person(c)), statement_kind(c), 0.5)
          if statement_kind(c) is not FactKind.OTHER else None),
    Rule("plan-subjectless", re.compile(r"^(?P<verb>打算|准备|计划|决定)(?P<rest>.{2,24})$"),
          lambda m, c: make_fact(to_third_person(f"用户{m.group('verb')}{_TRAILING.sub('', m.group('rest'))}"), FactKind.PLAN, 0.5)),
    Rule("state-subjectless", re.compile(r"^(?P<me>)(?:最近|这几天|这阵子|这段时间|一直|老是|总是|经常)+(?:心情|情绪|状态|精神)?"
                                          r"(?:有点儿?|有些|很|好|特别|总是)?"
                                          r"(?P<state>" + _STATES + "|" + _HEALTH + ")(?P<change>" + _CHANGE + ")?"), _state),
    # 现在轻松多了 / 感觉好多了: a change of mood, said without 我
    Rule("mood-change", re.compile(r"^(?P<me>)(?:现在|目前|终于|总算|已经|感觉|觉得|整个人|心情)+(?:也|都)?(?:有点儿?|很|好|特别|非常|超|挺|比较)?"
                                    r"(?P<state>" + _STATES + ")(?P<change>" + _CHANGE + ")?"),
          lambda m, c: _state(m, c) if (m.group("change") or _RELIEVED.match(m.group("state"))
                                         or (_AT_LAST.match(c) and _RELIEVED_OR_HAPPY.match(m.group("state")))
                                         or (_RELIEVED.match(m.group("state")) and c.endswith("了"))) else None),
    Rule("habit-subjectless", re.compile(r"^(?P<me>)" + _FREQUENCY + r"(?P<act>[^，,。]{2,18})$"), _habit),
    Rule("done", re.compile(r"^(?P<time>(?:" + _DAY_TIMES + r")+)?(?P<again>又|也|还|照例|照常|再次|再一次)?(?:去了?)?"
                             r"(?:在[^，,你他她]{1,6}?)?"
                             + _ACTION_VERBS), _done),
)

_PRONOUN_NAME = re.compile(r"^(?:她|他|它)?(?:叫|名叫|的名字(?:是|叫))(?P<name>[^，,。！!？?\s]{1,8})")


def last_relation_in(texts: list[str]) -> str | None:
    return last_relation(extract_chinese, texts)


# --- who 她 / 他 / 它 is -----------------------------------------------------------------------------------------

_FEMALE = frozenset("妈妈 妈 母亲 老婆 妻子 女朋友 女友 未婚妻 妹妹 姐姐 女儿 闺女 奶奶 外婆 姥姥 姑姑 阿姨 表妹 表姐 堂妹 堂姐 "
                    "闺蜜".split())
_MALE = frozenset("爸爸 爸 父亲 老公 丈夫 男朋友 男友 未婚夫 哥哥 弟弟 儿子 爷爷 外公 姥爷 舅舅 叔叔 表哥 表弟 堂哥 堂弟 "
                  "兄弟".split())
_PLURALS = "爸妈|父母|孩子们|两个孩子|俩孩子"
_NAME_END = r"(?=$|[，,。！!？?\s]|是|今年|已经|特别|很|也|都|才|最近|啦|了|呢|吧|的|，)"
_MENTION = re.compile(
    r"(?P<own>我们家的?|我家的?|我的?)?(?:(?P<have>(?:有|养了|养着|领养了|收养了|捡了|还有|新养了)(?:一|两|几)?(?:个|只|条|位|头|匹)?)"
    r"(?P<mod>[\u4e00-\u9fff]{0,2}?))?(?P<rel>" + _PLURALS + "|" + RELATIONS + r")"
    r"(?:[，,]?(?:叫|名叫|名字叫)(?P<name>[\u4e00-\u9fffA-Za-z]{1,4}?)" + _NAME_END + ")?")
_THING = re.compile(r"(?:我的|我新买的|我刚买的|我买的|我家的|我们家的|我(?:新|刚|刚刚)?买了(?:一|两)?[辆台部个只件双套本块条把]?)"
                    r"(?P<thing>[\u4e00-\u9fffA-Za-z]{1,8})")
_NOT_THINGS = re.compile(r"^(?:天|妈呀|意思|想法|问题|建议|感觉|心情|话|错|事|事情|名字|生日|工作|身体|时候|东西|一个|这个|那个|"
                         r"家|家人|意见|经验|理解|看法|梦想|目标)$")


_PLURAL_RELATION = re.compile(_PLURALS)
_CAT_OR_DOG = re.compile(r"猫|狗")
_ASKS_A_NAME = re.compile(r"什么|啥|谁")  # 叫什么 is no name
_SOMEONE_ELSES_RELATION = re.compile(r"(?<!我)(?<!我家)的(?P<rel>" + RELATIONS + ")")  # 同事的猫
_STARTS_WITH_RELATION = re.compile(RELATIONS)


def _gender(noun: str) -> str:
    if _PLURAL_RELATION.fullmatch(noun):
        return PLURAL
    if noun in _PETS or _CAT_OR_DOG.search(noun):
        return ANIMAL
    return FEMALE if noun in _FEMALE else MALE if noun in _MALE else PERSON


def _relation_mention(relation: str) -> Mention:
    noun = _RELATION_NAMES.get(relation, relation)
    return Mention("我" + noun, noun, _gender(noun), True)


def _mentions(clause: str) -> list[Mention]:
    """The people, pets and things a clause names, in order: 我家猫叫煤球 → 我家的猫 (named 煤球)."""
    found: list[tuple[int, Mention]] = []
    for m in _MENTION.finditer(clause):
        noun = _RELATION_NAMES.get(m.group("rel"), m.group("rel"))
        own = m.group("own") or ""
        if not own and not m.group("have") and clause[max(0, m.start() - 1):m.start()] == "的":
            continue  # 同事的猫: found below as nobody's, it is someone else's
        owned = bool(own or m.group("have")) or (m.start() == 0 and noun not in _PETS)
        if m.group("have") and own.startswith("我的"):
            own = "我"
        phrase = ("我家的" if own.startswith(("我家", "我们家")) else "我的" if m.group("have") else "我") + noun
        name = m.group("name")
        if name and _ASKS_A_NAME.search(name):
            name = None
        found.append((m.start("rel"), Mention(phrase, noun, _gender(noun), owned, name)))
    for m in _SOMEONE_ELSES_RELATION.finditer(clause):
        noun = _RELATION_NAMES.get(m.group("rel"), m.group("rel"))
        found.append((m.start("rel"), Mention(noun, noun, _gender(noun), False)))
    for m in _THING.finditer(clause):
        words = [w for w in rjieba.cut(m.group("thing")) if w.strip()]
        thing = words[0] if words else ""
        if not thing or _NOT_THINGS.match(thing) or _STARTS_WITH_RELATION.match(thing) or any(p == m.start("thing")
                                                                                          for p, _ in found):
            continue
        found.append((m.start("thing"), Mention("我的" + thing, thing, THING, True)))
    return [mention for _, mention in sorted(found, key=lambda item: item[0])]


def mentions_in(text: str) -> list[Mention]:
    """Everyone and everything the user named in a message, in the order named."""
    return [m for clause, _, _ in _sentences_with_marks(text) for m in _mentions(_LEADING_CHATTER.sub("", clause))]


_PRONOUN = re.compile(r"^(?P<p>她|他|它)(?![们人])(?P<of>的)?")
_OBJECT_PRONOUN = re.compile(r"(?<![吉其])(?P<p>她|他|它)(?![们人])")
_PRONOUN_GENDER = {"她": FEMALE, "他": MALE, "它": THING}
# 她好可爱啊: an exclamation about the moment, not a fact about her.
_ADMIRING = re.compile(r"^(?:好|真|太|超|超级|特别)(?:可爱|漂亮|帅|聪明|厉害|棒|乖|好看|萌|搞笑|逗|烦人|调皮|惨|可怜)(?:啊|呀|了|的|哦|呢|吧|！|!)*$")


def _resolved(clause: str, mentions: Sequence[Mention]) -> str | None:
    """The clause with 她 / 他 / 它 (or a pet's or person's name) at its start replaced by who it is ("我女儿…");
    None when the pronoun is not about anyone of the user's."""
    m = _PRONOUN.match(clause)
    if m:
        who = resolve(mentions, _PRONOUN_GENDER[m.group("p")])
        rest = clause[m.end():]
        if who is None or _ADMIRING.match(rest):
            return None
        return who.phrase + ("的" if m.group("of") else "") + rest
    for mention in reversed(mentions):
        if mention.name and clause.startswith(mention.name) and len(clause) > len(mention.name):
            who = named(mentions, mention.name)
            if who is None or _ADMIRING.match(clause[len(mention.name):]):
                return None
            return who.phrase + clause  # 胖虎最近不爱吃饭 → 我家的猫胖虎最近不爱吃饭
    return clause


_USER_SUBJECT = re.compile(r"^[^我，,]{0,6}我(?!们)")


def _objects_resolved(clause: str, mentions: Sequence[Mention]) -> str:
    """我每周都回家看他 → 我每周都回家看爸爸: a pronoun inside a clause about the user, replaced by who it is."""
    def replace(m: re.Match[str]) -> str:
        who = resolve(mentions, _PRONOUN_GENDER[m.group("p")])
        return who.noun if who is not None else m.group(0)
    me = _USER_SUBJECT.match(clause)  # 我… / 现在我…: a clause whose subject is the user
    if me is None or len(clause) < 3:
        return clause
    return clause[:me.end()] + _OBJECT_PRONOUN.sub(replace, clause[me.end():])


# First-person clauses that talk about the conversation, not about the user's life.
_CHAT_OPENERS = re.compile(
    r"^我(?:觉得|感觉|想知道|知道|不知道|是说|也是|也一样|看|明白|懂|同意|记得|猜|试试|去|来|先|还好|没事|就是|要是|想想|问你|跟你说|"
    r"告诉你|说|刚才|以为|相信|希望|保证|发现|好像|怎么|服了|晕|靠|的天|哭了|笑了|错了|随便|都行|可以|也想|还想|想(?!要)|"
    r"在想|估计|认为|当然|马上|这就|等下|等会|一会儿|现在就|随口|开玩笑|逗你)")
_EXCLAIMED = r"(?:死了|极了|啊啊|哈哈|呜呜|嘿嘿|hhh|233)$"
_EXCLAIMED_CLAUSE = re.compile(_EXCLAIMED)
_EXCLAMATION = re.compile(_EXCLAIMED + r"|^.{0,3}$")
_REPORTED = re.compile(r"说|让我|叫我|推荐我|催我|问我|告诉我|再想想|考虑考虑|考虑一下|看看吧|还没想好")
# A clause that only says more about the fact before it (how often, how long, how bad): folded into that fact.
_ELABORATION = re.compile(r"^(?:每|天天|一.{1,3}就|至少|很严重|已经坚持|坚持|都.{0,4}了|特别|非常|超|很|挺|蛮|想(?!想)|从小|当年|"
                          r"是条|是只|是一[只条个]|在(?![^，,]*[做干当教读学开写带])[^，,]{1,10}(?:上班|工作)?$|"
                          r"(?:" + TIME_WORDS + r")就(?!要|会|得).{0,4}$)")
_CONTINUATION = re.compile(
    r"^(?:每天|每周|每个?月|每年|平时|经常|一直|现在|目前|已经|今年|明年|去年|下个?月|下周|明天|后天|特别|非常|很|也|还|又|都|"
    r"主要|正在|刚|学的是|学的|在|做|是|有|单身|住|喜欢|爱|打算|准备|要|会|不|没|从小|一.{1,3}就|最近|基本|坚持|"
    r"早上|晚上|中午|周末|天天|想(?!想)|超|挺|蛮|有点|太|好(?=(?:很|特别|有点)?(?:" + _STATES + r")))(?!是)")


_OTHERS = frozenset("朋友 好朋友 同事 同学 室友 领导 老板 闺蜜 兄弟 导师".split())  # not the user's household
_PRAISE = re.compile(r"(?:特别|很|好|太|超|真|挺|超级)(?:可爱|漂亮|好看|帅|萌|好吃|好玩|有趣|厉害|棒|乖)(?:啊|呀|了|的|哦)*$")


_OWN_USER_SUBJECT = re.compile(r"^[^我，,]{1,6}我(?!们)")
_RELATIONS_OWN = re.compile(r"^(?:我的?)?(?P<rel>" + RELATIONS + r")的")


def _generic(clause: str, subject: str, *, implied: bool = False) -> Fact | None:
    """A first-person statement no specific rule knows, kept as it was said: 我在字节做后端开发 → 用户在字节做后端开发.
    `implied`: the subject was not said in this clause but carried over from the sentence's first one."""
    if implied and _OWN_USER_SUBJECT.match(clause):
        # 现在我每周都回家: the clause has its own 我. Not when the subject was said: in 我家的狗豆豆是我最好的朋友 or
        # 我妈是我最好的朋友 the first 我 is still the subject.
        subject = ""
    text = _TRAILING.sub("", to_third_person(subject + clause))
    owner = _RELATIONS_OWN.match(clause if subject == "" else subject[1:] + clause)
    if owner and (_PRAISE.search(clause) or owner.group("rel") in _OTHERS):
        return None  # 我同事的猫丢了 / 我同事的猫特别可爱: about someone else's, said in passing
    if len(text) > 34 or _EXCLAMATION.search(clause) or _EXCLAMATION.search(text) or _REPORTED.search(clause):
        return None
    return make_fact(text, statement_kind(clause), 0.4)


_FUTURE = re.compile(r"要|打算|准备|计划|将|想去|明天|明早|明晚|后天|下周|下礼拜|下星期|下个?月|明年|下半年|过几天|过段时间")
_PAST = re.compile(r"昨|前天|上周|上礼拜|上星期|上个?月|去年|刚才|刚刚|之前|[^为除]了(?!解)|过(?=[^，。！？]{0,6}$)")


def statement_kind(clause: str) -> FactKind:
    """A plan (said with a future), an event (something that happened), or neither."""
    if _FUTURE.search(clause):
        return FactKind.PLAN
    if _PAST.search(clause):
        return FactKind.EVENT
    return FactKind.PLAN if _TIME.search(clause) else FactKind.OTHER


def _same_thing(new: Fact, old: Fact) -> bool:
    """Whether a clause's own fact is about what the fact before it is about (我喜欢跑步，每周跑三次)."""
    if new.slot == MOOD_SLOT and old.slot == MOOD_SLOT:
        return True
    if new.kind is FactKind.RELATIONSHIP:
        return False  # 我女儿今年5岁，特别爱画画: two things about her
    a, b = (new.topic or "").lower(), (old.topic or "").lower()
    return bool(a and b) and (a in b or b in a)


_ENDS_EXCLAIMED = re.compile(_EXCLAIMED)


def _folds_into(said: str, own: Fact | None, previous: Fact) -> bool:
    """Whether a subjectless clause only says more about the fact just made from its sentence."""
    if len(previous.text) + len(said) > 40 or _ENDS_EXCLAIMED.search(said) or (_REPORTED.search(said) and not (
            own is not None and own.negated and own.slot and previous.kind is FactKind.HEALTH)):
        return False
    if own is not None:
        if own.slot == MOOD_SLOT and previous.slot == MOOD_SLOT:
            return True  # 最近压力特别大，很紧张: one mood
        if own.negated and own.slot and own.slot.startswith("habit:") and previous.kind is FactKind.HEALTH \
                and not previous.slot:
            return True  # 膝盖受伤了，医生说暂时不能跑步: why the routine stops
        if previous.slot == "job" and own.slot == "workplace":
            return True  # 我是护士，在儿童医院上班
    if _EXCLAMATION.search(said):
        return False
    if _shares_verb(said, previous):
        return True  # 我下周要搬家，搬到滨江那边
    return bool(_ELABORATION.match(said)) and (own is None or _same_thing(own, previous))


_LEADING_ADVERB = re.compile(r"^(?:又|也|还|都|就|再)")


def _shares_verb(said: str, previous: Fact) -> bool:
    verb = _LEADING_ADVERB.sub("", said)[:1]
    return bool(verb) and verb not in "在是有也还都不没每很好我你他她它的了一天" and verb in previous.text[2:]


def _fold(previous: Fact, said: str, own: Fact | None) -> None:
    previous.text += "，" + _TRAILING.sub("", to_third_person(said))
    if own is not None and own.slot and own.negated and not previous.slot:
        # 膝盖受伤了，医生说暂时不能跑步: the memory is the restriction (a liking keeps no routine's slot)
        previous.slot, previous.topic, previous.negated = own.slot, own.topic, own.negated


# What happened just before a mood, said in the same sentence (项目顺利上线了，现在轻松多了): kept with the mood.
_CAUSE = re.compile(r"^[^你我，,]{2,14}了$")


_HAS_SUBJECT = re.compile(r"^[^，,]{0,6}?我|^(?:" + _PLURALS + "|" + RELATIONS + ")")


def extract_chinese(text: str, last_relation: str | None = None, context: Sequence[str] = ()) -> list[Fact]:
    """Facts about the user in one Chinese message. `context` holds the user's earlier messages, so that 她 / 他 / 它
    (and a pet's name) can be resolved to the last person or thing the user named; `last_relation` is an older way of
    saying who 她 is."""
    mentions = [m for earlier in context for m in mentions_in(earlier)]
    if last_relation and not any(m.noun == last_relation for m in mentions):
        mentions.append(_relation_mention(last_relation))
    facts: list[Fact] = []
    sentence_subject: str | None = None  # who a subjectless clause is about: 我今年28，单身 → 用户单身
    previous_sentence = -1
    sentence_start, first_clause = len(mentions), True  # where this sentence's mentions begin; its first clause
    cause: str | None = None
    for clause, asked, sentence in _sentences_with_marks(text):
        if sentence != previous_sentence:
            sentence_subject, previous_sentence, cause = None, sentence, None
            sentence_start, first_clause = len(mentions), True
        clause = _LEADING_CHATTER.sub("", clause)
        clause = _LEADING_CHATTER.sub("", clause)
        if not clause or asked or _QUESTION.search(clause) or _HYPOTHETICAL.search(clause):
            cause = None
            continue
        previous = facts[-1] if facts and facts[-1].sentence == sentence else None
        fact, said = _extract_clause(clause, mentions, facts, mentions[sentence_start:], previous,
                                     opens_sentence=first_clause)
        first_clause = False
        subjectless = said is not None and said == clause and not _HAS_SUBJECT.match(said)
        if said is not None and subjectless and fact is not _MERGED and (sentence_subject or previous is not None) \
                and (_CONTINUATION.match(said) or fact is not None or (previous and _shares_verb(said, previous))) \
                and not (sentence_subject == "我" and _CHAT_OPENERS.match("我" + said)):
            fact = _continuation(said, fact, sentence_subject, previous, mentions)
        if said is not None:
            mentions.extend(_mentions(said))
        if fact is None and subjectless and previous is not None and _keeps_going(said, previous):
            # 我最近压力特别大，老是掉头发: what the sentence goes on to say about its subject stays with its fact
            previous.text += f"，{to_third_person(said or '')}"
            continue
        if fact is None:
            cause = clause if _CAUSE.match(clause) and not _CHAT_OPENERS.match(clause) else None
            continue
        if said is not None and said.startswith("我") and not said.startswith("我们"):
            sentence_subject = "我"
        if fact is _MERGED:
            continue
        if fact.slot == MOOD_SLOT and cause and not fact.text.startswith(cause):
            fact.text = f"{cause}，{fact.text}"  # 项目顺利上线了，用户现在轻松多了
        cause = None
        fact.sentence = sentence
        facts.append(fact)
        if fact.text.startswith("用户") and not fact.text.startswith(("用户的", "用户家的")):
            sentence_subject = sentence_subject or "我"
        if fact.kind is FactKind.RELATIONSHIP and fact.topic:
            if fact.text.startswith("用户的"):
                sentence_subject = f"我的{fact.topic}"
            elif fact.text.startswith("用户家的"):
                sentence_subject = f"我家的{fact.topic}"
    return unique_facts(facts)


_MERGED = Fact(text="merged")  # marks a clause folded into the previous fact
FOLDED_MAX_CHARS = 60  # a fact that grows longer than this by its sentence's further clauses stops growing


# A clause that speaks to the assistant ("别推荐海鲜", "你帮我记着") tells it what to do, not more about the user.
_TO_THE_ASSISTANT = re.compile(r"^(?:别|不要|不用|请|麻烦|帮我|给我|替我|记得|记住|你|您|快|赶紧)")


def _keeps_going(said: str | None, previous: Fact) -> bool:
    """A subjectless clause with no fact of its own that says more about the fact before it in its sentence: not
    chatter ("我觉得…"), not an instruction to the assistant, not an exclamation, and the fact still short."""
    return (said is not None and len(said) >= 2 and not _CHAT_OPENERS.match("我" + said)
            and not _TO_THE_ASSISTANT.match(said) and not _EXCLAIMED_CLAUSE.search(said)
            and len(previous.text) + len(said) <= FOLDED_MAX_CHARS)


def _continuation(said: str, fact: Fact | None, subject: str | None, previous: Fact | None,
                  mentions: Sequence[Mention]) -> Fact | None:
    """A clause without a subject in a sentence that has one (我喜欢跑步，每周跑三次 / 我男朋友是程序员，天天加班): folded
    into the fact before it when it only says more about it (_MERGED), else its own fact about the sentence's subject."""
    about_relation = subject is not None and subject != "我"
    if about_relation and _OBJECT_PRONOUN.search(said):
        return _MERGED  # 胖虎最近不爱吃饭，好担心它: how the user feels about them, said in passing
    own = first_fact(RULES, _objects_resolved(subject + said, mentions)) if subject else None
    if not about_relation:
        own = own or fact
    if previous is not None and _folds_into(said, own, previous):
        _fold(previous, said, own)
        return _MERGED
    if subject and (fact is None or about_relation) and _CONTINUATION.match(said):
        return own or _generic(_objects_resolved("我" + said, mentions)[1:], subject, implied=True)
    return own if about_relation else fact
_ABOUT_RELATION = re.compile(r"^我(?:家)?的?(?P<rel>" + _PLURALS + "|" + RELATIONS + ")")


_NOT_NAMING = re.compile(r"[了过着]")
_USER_HAS = re.compile(r"^用户.{0,6}(?:有|养|领养|收养|捡)")


def _extract_clause(clause: str, mentions: Sequence[Mention], facts: list[Fact], sentence_mentions: Sequence[Mention],
                    previous: Fact | None, opens_sentence: bool) -> tuple[Fact | None, str | None]:
    """The clause's fact, and the clause as said by the user with its pronoun resolved (None: about someone else).
    `sentence_mentions`: who this sentence named before the clause; `previous`: this sentence's fact before it;
    `opens_sentence`: no clause of the sentence comes before it."""
    pronoun = _PRONOUN_NAME.match(clause)
    if pronoun and not _NOT_NAMING.match(pronoun.group("name")):  # 他叫了外卖: calling for, not naming
        name = _TRAILING.sub("", pronoun.group("name"))
        if clause[0] in _PRONOUN_GENDER:
            who = resolve(mentions, _PRONOUN_GENDER[clause[0]])
        else:
            # A bare 叫X names what this sentence just spoke of: 我有个妹妹，叫小雨 — but 周末去看了场话剧，叫《恋爱的犀牛》
            # names the play, not the brother of an earlier message.
            who = next((m for m in reversed(sentence_mentions) if m.owned and m.gender != THING), None)
            if who is None and previous is not None:
                if "叫" in previous.text:
                    return None, None
                previous.text += f"，叫{name}"
                return _MERGED, clause
            if who is None and opens_sentence:  # 我有个妹妹 / 叫小雨, sent as two messages
                who = next((m for m in reversed(mentions) if m.owned and m.gender != THING), None)
        if who is None:
            return None, None
        if facts and (facts[-1].topic == who.noun or who.noun in facts[-1].text) \
                and _USER_HAS.match(facts[-1].text) and "叫" not in facts[-1].text:
            facts[-1].text += f"叫{name}"  # 我有个妹妹，叫小雨: one fact
            facts[-1].importance = 0.8
            return _MERGED, clause
        return make_fact(to_third_person(f"{who.phrase}叫{name}"), FactKind.RELATIONSHIP, 0.8, topic=who.noun), clause
    said = _resolved(clause, mentions)
    if said is None or _NOT_ABOUT_USER.match(said):
        return None, None
    said = _objects_resolved(said, mentions)
    fact = first_fact(RULES, said)
    if fact is None and said.startswith("我") and not said.startswith("我们") and not _CHAT_OPENERS.match(said):
        fact = _generic(said[1:], "我")
    relation = _ABOUT_RELATION.match(said)
    if fact is not None and relation and fact.kind in (FactKind.OTHER, FactKind.PLAN, FactKind.EVENT) \
            and fact.text.startswith(("用户的", "用户家的")):
        fact.kind, fact.topic = FactKind.RELATIONSHIP, _RELATION_NAMES.get(relation.group("rel"), relation.group("rel"))
    if fact is not None and relation and fact.kind is FactKind.RELATIONSHIP and _GONE.search(said) \
            and not said[relation.end():].startswith("的"):
        fact.negated = True  # 我家猫去年走了: no longer "用户养了一只猫"
    return fact, said


_GONE = re.compile(r"去世|过世|离世|走了|不在了|病逝|没了|丢了|跑丢了|送人了")


_SENTENCE = re.compile(r"([^。！!？?；;\n]+)([。！!？?；;\n]*)")
_COMMA = re.compile(r"[，,]")


def _sentences_with_marks(text: str) -> list[tuple[str, bool, int]]:
    """Clauses split at sentence ends and commas, each with whether it is the asking part of a question
    (the last clause before a question mark: in 我吃素，你呢？ only 你呢 asks) and its sentence's number."""
    out: list[tuple[str, bool, int]] = []
    for number, (sentence, mark) in enumerate(_SENTENCE.findall(text)):
        clauses = [c.strip(" \t") for c in _COMMA.split(sentence)]
        clauses = [c for c in clauses if c]
        for i, clause in enumerate(clauses):
            out.append((clause, ("？" in mark or "?" in mark) and i == len(clauses) - 1, number))
    return out
