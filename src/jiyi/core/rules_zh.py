"""Offline fact extraction for Chinese: first-person statements rewritten as facts about the user.

Each rule recognises one kind of statement (我对海鲜过敏, 我搬到杭州了, 下周我要去北京出差) in one clause and says
what it is: its kind, whether it fills a single-valued slot (where the user lives), what topic it is about and whether
it reverses an earlier fact (我不再吃素了). Clauses that ask, wonder or suppose are not facts and are skipped.
"""

from __future__ import annotations

import re

from jiyi.core.facts import Fact, FactKind
from jiyi.core.rule_base import Rule, first_fact, last_relation, make_fact, unique_facts

# Words that end a captured object: particles and trailing chatter.
_TRAILING = re.compile(r"[了啊呀呢啦哦哈吧嘛呗哟噢嗯的~～…。！!？?，,、；;：:\s]+$")
_LEADING_CHATTER = re.compile(r"^(?:哈+|嗯+|唉|哎|诶|对了|其实|不过|但是|可是|而且|然后|所以|另外|顺便说一下|说起来|跟你说|"
                              r"告诉你|我跟你说|不对|不是|说错了|纠正一下|话说|对|是的|是啊|嗯嗯|好吧|反正)[，,、\s]*")
_QUESTION = re.compile(r"[？?]|吗$|呢$|什么|怎么|怎样|哪|谁|几[个点天次岁]|多少|是不是|要不要|能不能|可不可以|有没有|会不会|"
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
           "沮丧|崩溃|心情不好|心情很好|不开心|抑郁|emo|迷茫|害怕|担心|生气|委屈|想家|失恋|分手")
_HEALTH = ("失眠|睡不着|睡不好|生病|感冒|发烧|咳嗽|头疼|头痛|胃疼|胃痛|牙疼|腰疼|不舒服|住院|骨折|怀孕|过敏|"
           "高血压|糖尿病|哮喘|抑郁症|焦虑症|胃病|胃炎|鼻炎|近视|贫血|偏头痛|颈椎病|腰椎间盘突出|心脏病|痛风")
_OCCUPATION_SUFFIX = re.compile(
    r"(?:程序员|工程师|设计师|医生|护士|老师|教师|教授|律师|会计|司机|厨师|警察|记者|作家|画家|歌手|演员|模特|"
    r"销售|经理|总监|老板|店主|主播|博主|学生|大学生|研究生|博士生?|硕士生?|本科生|高中生|初中生|小学生|"
    r"产品经理|运营|公务员|军人|农民|工人|自由职业者|全职妈妈|家庭主妇|退休|上班族|打工人|码农|"
    r"[师员生家手工长官]|者)$")
_DIET_WORDS = re.compile(r"^(?:吃素|素食者?|纯素|素食主义者|穆斯林)$")


def _clean_object(text: str, limit: int = 24) -> str | None:
    text = _TRAILING.sub("", text.strip())
    text = re.sub(r"^[，,、\s]+", "", text)
    if not text or len(text) > limit:
        return None
    if re.match(r"^(?:这|那|它|你|您|他|她)(?!们家)", text) and not text.startswith(("这边", "那边")):
        return None  # 我喜欢这个 / 我喜欢你说的: about the moment, not a lasting fact
    return text


def to_third_person(text: str) -> str:
    """我 → 用户 for the facts we store: 我妈 → 用户的妈妈, 我家猫 → 用户家的猫, 我的 → 用户的."""
    text = re.sub(r"我(妈|爸)(?!妈|爸)", lambda m: "我的" + _RELATION_NAMES[m.group(1)], text)
    text = re.sub(r"我家(?=" + RELATIONS + ")", "我家的", text)
    text = re.sub(r"我们家", "用户家", text)
    text = re.sub(r"我(?=" + RELATIONS + r")(?!的)", "我的", text)
    return text.replace("我自己", "用户自己").replace("我", "用户")


def _name(m: re.Match[str], clause: str) -> Fact | None:
    name = _clean_object(m.group("name"), 12)
    if not name or re.search(r"[，,\s]|什么|啥", name):
        return None
    return make_fact(f"用户叫{name}", FactKind.PERSONAL, 0.9, slot="name", topic=name, core=True)


def _age(m: re.Match[str], clause: str) -> Fact | None:
    return make_fact(f"用户今年{m.group('age')}岁", FactKind.PERSONAL, 0.6, slot="age")


def _birthday(m: re.Match[str], clause: str) -> Fact | None:
    date = _clean_object(m.group("date"), 14)
    return make_fact(f"用户的生日是{date}", FactKind.PERSONAL, 0.9, slot="birthday", core=True) if date else None


def _allergy(m: re.Match[str], clause: str) -> Fact | None:
    what = _clean_object(m.group("what"), 12)
    if not what or what in ("有点", "有", "会"):
        return None
    what = re.sub(r"^(?:有点|有些|严重|特别|很|会|也|还)+", "", what)
    return make_fact(f"用户对{what}过敏", FactKind.HEALTH, 0.95, topic=f"{what}过敏", core=True) if what else None


def _residence(m: re.Match[str], clause: str) -> Fact | None:
    place = _clean_object(m.group("place"), 16)
    if not place or re.match(r"^(?:家|家里|这|那|哪)$", place):
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


def _identity(m: re.Match[str], clause: str) -> Fact | None:
    what = _clean_object(m.group("what"), 16)
    if not what or re.match(r"^(?:说|不|在|想|真|挺|有点|觉得|因为|为了|怎么|这样|那样|跟|和|被|把|对|来|去|第一次|故意)", what):
        return None
    bare = re.sub(r"^(?:一名|一个|一位|个|名|位)", "", what)
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


def _reversal(m: re.Match[str], clause: str) -> Fact | None:
    what = _clean_object(m.group("what"), 16)
    if not what:
        return None
    what = re.sub(r"^(?:再|去|会)", "", what)
    return make_fact(f"用户不再{what}", _kind_of_habit(what), 0.7, topic=_topic_of(what), negated=True)


def _quit(m: re.Match[str], clause: str) -> Fact | None:
    what = _clean_object(m.group("what"), 10)
    if not what:
        return None
    return make_fact(f"用户戒了{what}", FactKind.HEALTH, 0.7, topic=_topic_of(what), negated=True)


def _moved(m: re.Match[str], clause: str) -> Fact | None:
    place = _clean_object(m.group("place"), 16)
    if not place:
        return None
    place = re.sub(r"(?:住|去住|来住|定居|生活)$", "", place)
    return make_fact(f"用户搬到了{place}", FactKind.PERSONAL, 0.8, slot="residence", topic=place)


def _new_job(m: re.Match[str], clause: str) -> Fact | None:
    place = _clean_object(m.group("place"), 16)
    if not place:
        return None
    return make_fact(f"用户现在在{place}{m.group('verb') or '工作'}", FactKind.PERSONAL, 0.8, slot="workplace", topic=place)


def _kind_of_habit(what: str) -> FactKind:
    if re.match(r"^(?:吃|喝|抽|戒)", what) or "素" in what:
        return FactKind.HEALTH
    return FactKind.PREFERENCE


def _topic_of(what: str) -> str:
    """喜欢吃辣 / 不吃辣 / 爱吃辣的 → 吃辣: the thing a preference is about, so reversals can be recognised."""
    what = re.sub(r"^(?:很|最|超|特别|非常|挺|蛮|也|还|都|真的|一直|比较|有点)+", "", what)
    what = re.sub(r"^(?:喜欢|爱|热爱)", "", what)
    what = re.sub(r"的?东西$|的$", "", what)
    return what


def _likes(m: re.Match[str], clause: str) -> Fact | None:
    what = _clean_object(m.group("what"))
    if not what or what.startswith(("上你", "和你", "跟你", "听你", "看你")):
        return None
    if re.match(r"^(?:的)", what):
        return None
    text = to_third_person("我" + clause[m.start("lead"):m.end("what")].lstrip("我"))
    text = _TRAILING.sub("", text)
    verb = m.group("verb")
    prefix = verb if verb not in ("喜欢", "爱", "热爱", "钟爱", "偏爱", "迷上", "迷上了", "爱上", "爱上了") else ""
    return make_fact(text, FactKind.PREFERENCE, 0.5, topic=_topic_of(prefix + what))


def _dislikes(m: re.Match[str], clause: str) -> Fact | None:
    what = _clean_object(m.group("what"))
    if not what:
        return None
    verb = m.group("verb")
    text = _TRAILING.sub("", f"用户{m.group('deg') or ''}{verb}{what}")
    eats = re.match(r"不(?:吃|喝)", verb)
    topic = _topic_of(verb[1:] + what) if eats else _topic_of(what)
    kind = FactKind.HEALTH if eats else FactKind.PREFERENCE
    return make_fact(text, kind, 0.6 if eats else 0.5, topic=topic, negated=True)


def _favorite(m: re.Match[str], clause: str) -> Fact | None:
    thing, value = _clean_object(m.group("thing"), 10), _clean_object(m.group("value"), 16)
    if not thing or not value:
        return None
    return make_fact(f"用户最喜欢的{thing}是{value}", FactKind.PREFERENCE, 0.6, slot=f"favorite:{thing}", topic=value)


def _has_relation(m: re.Match[str], clause: str) -> Fact | None:
    relation = _RELATION_NAMES.get(m.group("rel"), m.group("rel"))
    tail = _clean_object(clause[m.end("rel"):], 16) or ""
    count = m.group("count") or ("一只" if relation in _PETS else "一个")
    verb = m.group("verb")
    text = f"用户{verb}{count}{relation}" + (tail if re.match(r"^[，,]?(?:叫|名叫|名字叫)", tail) else "")
    return make_fact(_TRAILING.sub("", text.replace("，", "").replace(",", "")), FactKind.RELATIONSHIP, 0.7,
                 topic=relation)


def _relation_fact(m: re.Match[str], clause: str) -> Fact | None:
    rest = _clean_object(m.group("rest"), 24)
    if not rest or _QUESTION.search(rest):
        return None
    relation = _RELATION_NAMES.get(m.group("rel"), m.group("rel"))
    owner = "用户家的" if m.group("own") == "我家" else "用户的"
    importance = 0.8 if re.match(r"^(?:叫|名叫|名字叫|是)", rest) else 0.6
    return make_fact(to_third_person(f"{owner}{relation}{rest}"), FactKind.RELATIONSHIP, importance, topic=relation)


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


def _state(m: re.Match[str], clause: str) -> Fact | None:
    text = to_third_person("我" + clause[m.end("me"):m.end("state")])
    text = _TRAILING.sub("", text)
    state = m.group("state")
    health = re.search(_HEALTH, state) is not None
    if not health and re.search(r"今天|刚才|现在", clause):
        return None  # 今天好累: the moment's mood, not worth a memory
    return make_fact(text, FactKind.HEALTH if health else FactKind.STATE, 0.6 if health else 0.3, topic=state)


def _illness(m: re.Match[str], clause: str) -> Fact | None:
    what = m.group("what")
    return make_fact(f"用户有{what}", FactKind.HEALTH, 0.85, topic=what, core=True)


_ME = r"(?P<me>我)"
_DEG = r"(?:最|很|超|超级|特别|非常|挺|蛮|真的|一直|也|还|都|比较|巨|贼|好|真|其实)*"

RULES: tuple[Rule, ...] = (
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
    Rule("new-job", re.compile(r"我(?:现在|目前|已经|刚)?(?:换到|跳槽到|调到|入职|转到|去了)(?P<place>.{1,14}?)(?P<verb>工作|上班|实习)?了?$"),
          _new_job),
    Rule("allergy", re.compile(r"(?:我|^)(?:对)?(?P<what>[^，,。我你]{1,12}?)过敏"), _allergy),
    Rule("illness", re.compile(r"我(?:有|得了|患有|患了|查出了?|确诊了?)(?P<what>高血压|糖尿病|哮喘|抑郁症|焦虑症|胃病|胃炎|鼻炎|"
                                r"偏头痛|颈椎病|心脏病|痛风|贫血|腰椎间盘突出|失眠症?)"), _illness),
    Rule("name", re.compile(r"(?:我叫|我的名字(?:是|叫)|我名字(?:是|叫)|叫我)(?P<name>[^，,。！!？?\s]{1,10}?)(?:就行|就好|就可以)?(?:[，,。！!]|$)"),
          _name),
    Rule("age", re.compile(r"我(?:今年|已经|快)?(?P<age>" + _NUM + r")岁"), _age),
    Rule("birthday", re.compile(r"(?:我的?生日(?:是|在)?(?P<date>.{2,12}?)(?:[，,。]|$)|我(?:是)?(?P<d2>.{2,10}?)(?:出生|生日)的?)"),
          lambda m, c: _birthday(m, c) if m.group("date") else (
              make_fact(f"用户的生日是{m.group('d2')}", FactKind.PERSONAL, 0.9, slot="birthday", core=True)
              if re.search(r"\d|月|号|日", m.group("d2")) else None)),
    Rule("favorite", re.compile(r"我最(?:喜欢|爱)的(?P<thing>.{1,8}?)(?:是|就是)(?P<value>.{1,16})$"), _favorite),
    Rule("residence", re.compile(r"我(?:现在|目前|一直|平时)?(?:住在|住|家在|定居在|生活在)(?P<place>[^，,。]{1,16}?)(?:住)?$"),
          _residence),
    Rule("hometown", re.compile(r"(?:我来自|我老家(?:是|在)|我是从)(?P<place>[^，,。]{1,12}?)(?:来的)?$"), _hometown),
    Rule("workplace", re.compile(r"我(?:现在|目前|一直)?在(?P<place>[^，,。]{1,14}?)(?P<verb>工作|上班|实习|上学|读书|念书|读大学|"
                                  r"读研|读博|上大学|读高中|上高中)"), _workplace),
    Rule("job", re.compile(r"我的(?:工作|职业)是(?P<what>.{1,14})$|我(?:是)?(?:做|干|搞)(?P<w2>.{1,10}?)(?:工作)?的$"),
          lambda m, c: _job(m, c) if m.group("what") else (
              make_fact(f"用户做{m.group('w2')}工作", FactKind.PERSONAL, 0.7, slot="job", topic=m.group("w2"))
              if m.group("w2") else None)),
    Rule("diet", re.compile(r"我(?:一直|平时|从小|现在)?(?:是)?(?:吃素|素食者|素食主义者|纯素食?者?)"), _diet),
    Rule("identity", re.compile(r"我(?:现在|目前|其实|本来)?是(?P<what>.{1,16})$"), _identity),
    Rule("favorite-likes", re.compile(r"(?P<lead>我" + _DEG + r")(?P<verb>喜欢|爱吃|爱喝|爱看|爱玩|爱听|热爱|爱上了?|迷上了?|"
                                       r"钟爱|偏爱|爱)(?P<what>.{1,22})$"), _likes),
    Rule("dislikes", re.compile(r"我(?P<deg>" + _DEG + r")(?P<verb>不喜欢|讨厌|受不了|最烦|不爱|不太喜欢|不吃|不喝|不能吃|"
                                 r"不能喝|吃不了|喝不了|怕|害怕)(?P<what>.{1,20})$"), _dislikes),
    Rule("has-relation", re.compile(r"我(?P<verb>有|养了|养着|还有|家有)(?P<count>" + _COUNT + r")(?P<rel>" + RELATIONS + ")"),
          _has_relation),
    Rule("relation-fact", re.compile(r"(?P<own>我的?|我家)(?P<rel>" + RELATIONS + r")(?P<rest>(?:叫|名叫|名字叫|是|在|今年|也|还|"
                                      r"住在|住|喜欢|爱|做|当|有|得了|生病|怀孕|刚|下个?月|明天|下周|特别|很|最近).{1,22})$"),
          _relation_fact),
    Rule("plan", re.compile(r"(?:(?P<t1>" + TIME_WORDS + r")[，,]?)?我(?:们)?(?P<t2>" + TIME_WORDS + r")?(?P<verb>打算|准备|计划|决定|"
                             r"要|将要|想要|会|得|需要|正在准备|约了)(?P<rest>.{2,28})$"), _plan),
    Rule("state", re.compile(r"(?P<me>我)(?:最近|这几天|这阵子|这段时间|今天|现在|一直|老是|总是|又|还是)?(?:有点儿?|有些|很|好|特别|非常|超|挺|"
                              r"太|比较|真的|经常|总|都快)?(?:感觉|觉得)?(?P<state>" + _STATES + "|" + _HEALTH + ")"),
          _state),
    Rule("plan-subjectless", re.compile(r"^(?P<verb>打算|准备|计划|决定)(?P<rest>.{2,24})$"),
          lambda m, c: make_fact(to_third_person(f"用户{m.group('verb')}{_TRAILING.sub('', m.group('rest'))}"), FactKind.PLAN, 0.5)),
    Rule("state-subjectless", re.compile(r"^(?P<me>)(?:最近|这几天|这阵子|这段时间|一直|老是|总是|经常)+(?:有点儿?|有些|很|好|特别|总是)?"
                                          r"(?P<state>" + _STATES + "|" + _HEALTH + ")"), _state),
)

_PRONOUN_NAME = re.compile(r"^(?:她|他|它)?(?:叫|名叫|的名字(?:是|叫))(?P<name>[^，,。！!？?\s]{1,8})")


def last_relation_in(texts: list[str]) -> str | None:
    return last_relation(extract_chinese, texts)


_PRONOUN_SUBJECT = re.compile(r"^(?:她|他)(?=叫|是|在|今年|也|还|住|喜欢|爱|有|得了|生病|怀孕|刚|下个?月|明天|下周|最近|特别|很)"
                              r"(?P<rest>.{1,22})$")


# First-person clauses that talk about the conversation, not about the user's life.
_CHAT_OPENERS = re.compile(
    r"^我(?:觉得|感觉|想知道|知道|不知道|是说|也是|也一样|看|明白|懂|同意|记得|猜|试试|去|来|先|还好|没事|就是|要是|想想|问你|跟你说|"
    r"告诉你|说|刚才|以为|相信|希望|保证|发现|好像|怎么|服了|晕|靠|的天|哭了|笑了|错了|随便|都行|可以|也想|还想|想(?!要)|"
    r"在想|估计|认为|当然|马上|这就|等下|等会|一会儿|现在就|随口|开玩笑|逗你)")
_EXCLAMATION = re.compile(r"(?:死了|极了|啊啊|哈哈|呜呜|嘿嘿|hhh|233)$|^.{0,3}$")
_REPORTED = re.compile(r"说|让我|叫我|推荐我|催我|问我|告诉我|再想想|考虑考虑|考虑一下|看看吧|还没想好")
_ELABORATION = re.compile(r"^(?:每|一.{1,3}就|至少|很严重|已经坚持|坚持|都.{0,4}了|特别|非常|从小|当年|是条|是只|是一[只条个]|学的|学了|"
                          r"在[^，,]{1,10}(?:上班|工作)?$)")
_CONTINUATION = re.compile(
    r"^(?:每天|每周|每个?月|每年|平时|经常|一直|现在|目前|已经|今年|明年|去年|下个?月|下周|明天|后天|特别|非常|很|也|还|又|都|"
    r"主要|正在|刚|学的是|在|做|是|有|单身|住|喜欢|爱|打算|准备|要|会|不|没|从小|一.{1,3}就|最近|基本|坚持)(?!是)")


def _generic(clause: str, subject: str) -> Fact | None:
    """A first-person statement no specific rule knows, kept as it was said: 我在字节做后端开发 → 用户在字节做后端开发."""
    text = _TRAILING.sub("", to_third_person(subject + clause))
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


def extract_chinese(text: str, last_relation: str | None = None) -> list[Fact]:
    """Facts about the user in one Chinese message; `last_relation` is who 她/他 refers to from earlier."""
    facts: list[Fact] = []
    sentence_subject: str | None = None  # who a subjectless clause is about: 我今年28，单身 → 用户单身
    previous_sentence = -1
    for clause, asked, sentence in _sentences_with_marks(text):
        if sentence != previous_sentence:
            sentence_subject, previous_sentence = None, sentence
        clause = _LEADING_CHATTER.sub("", clause)
        clause = _LEADING_CHATTER.sub("", clause)
        if not clause or asked or _QUESTION.search(clause) or _HYPOTHETICAL.search(clause):
            continue
        fact = _extract_clause(clause, last_relation, facts)
        if fact is None and sentence_subject and _CONTINUATION.match(clause) and not _CHAT_OPENERS.match("我" + clause):
            if facts and facts[-1].sentence == sentence and len(facts[-1].text) + len(clause) <= 40 \
                    and _ELABORATION.match(clause) \
                    and not _EXCLAMATION.search(clause) and not _REPORTED.search(clause):
                # 我喜欢跑步，每周跑三次: the clause says more about the fact just made
                facts[-1].text += "，" + _TRAILING.sub("", to_third_person(clause))
                continue
            fact = _generic(clause, sentence_subject)
        if clause.startswith("我") and not clause.startswith("我们"):
            sentence_subject = "我"
        if fact is None:
            continue
        if fact is not _MERGED:
            fact.sentence = sentence
            facts.append(fact)
            if fact.kind is FactKind.RELATIONSHIP and fact.topic:
                last_relation = fact.topic
                if fact.text.startswith("用户的"):
                    sentence_subject = f"我的{fact.topic}"
                elif fact.text.startswith("用户家的"):
                    sentence_subject = f"我家的{fact.topic}"
    return unique_facts(facts)


_MERGED = Fact(text="merged")  # marks a clause folded into the previous fact


def _extract_clause(clause: str, last_relation: str | None, facts: list[Fact]) -> Fact | None:
    subject = _PRONOUN_SUBJECT.match(clause)
    if subject and last_relation and last_relation not in _PETS and not _PRONOUN_NAME.match(clause):
        rest = _clean_object(subject.group("rest"), 22)
        if not rest:
            return None
        return make_fact(to_third_person(f"用户的{last_relation}{rest}"), FactKind.RELATIONSHIP, 0.6, topic=last_relation)
    if _NOT_ABOUT_USER.match(clause):
        return None
    pronoun = _PRONOUN_NAME.match(clause)
    if pronoun and last_relation:
        name = _TRAILING.sub("", pronoun.group("name"))
        if facts and facts[-1].topic == last_relation and facts[-1].text.startswith(("用户有", "用户养了")):
            facts[-1].text += f"叫{name}"  # 我有个妹妹，叫小雨: one fact
            facts[-1].importance = 0.8
            return _MERGED
        return make_fact(f"用户的{last_relation}叫{name}", FactKind.RELATIONSHIP, 0.8, topic=last_relation)
    fact = first_fact(RULES, clause)
    if fact is not None:
        return fact
    if clause.startswith("我") and not clause.startswith("我们") and not _CHAT_OPENERS.match(clause):
        return _generic(clause[1:], "我")
    return None


def _sentences_with_marks(text: str) -> list[tuple[str, bool, int]]:
    """Clauses split at sentence ends and commas, each with whether it is the asking part of a question
    (the last clause before a question mark: in 我吃素，你呢？ only 你呢 asks) and its sentence's number."""
    out: list[tuple[str, bool, int]] = []
    for number, (sentence, mark) in enumerate(re.findall(r"([^。！!？?；;\n]+)([。！!？?；;\n]*)", text)):
        clauses = [c.strip(" \t") for c in re.split(r"[，,]", sentence)]
        clauses = [c for c in clauses if c]
        for i, clause in enumerate(clauses):
            out.append((clause, ("？" in mark or "?" in mark) and i == len(clauses) - 1, number))
    return out
