"""Chinese entity rules: kinship and role terms (我表姐叫小雅), pets (我家柯基豆豆), work and study (在美团干了三年),
places (住在徐汇, 搬到杭州), and what ends (分手, 离职, 走了), as Claims.

Chinese has no spaces, so where a name or a place ends is read from rjieba's segmentation and part-of-speech tags
(the dictionary jiyi.text already loads): "我爸念叨了七天" has no name after 我爸 because 念叨 is tagged a verb, while
"我老公志强又出差了" has 志强. Patterns are built once here over vocabularies (KIN, PETS, ...).
"""

from __future__ import annotations

import dataclasses
import itertools
import re

import rjieba

from jiyi.core import entity_names_zh, organisations_called_zh, organisations_zh, places_zh, traditional_zh
from jiyi.core.entity_claims import ME, Claim, Ref, kin_of, named, pronoun
from jiyi.core.not_names import not_a_name_zh
from jiyi.text import starts_a_word

KIN: dict[str, tuple[str, str | None]] = {
    **dict.fromkeys(("表姐", "表妹", "堂姐", "堂妹"), ("cousin_of", "f")),
    **dict.fromkeys(("表哥", "表弟", "堂哥", "堂弟"), ("cousin_of", "m")),
    **dict.fromkeys(("妈", "妈妈", "老妈", "母亲", "娘", "阿妈"), ("mother_of", "f")),
    **dict.fromkeys(("爸", "爸爸", "老爸", "父亲", "老爹"), ("father_of", "m")),
    **dict.fromkeys(("哥", "哥哥", "大哥", "弟弟", "小弟"), ("brother_of", "m")),
    **dict.fromkeys(("姐", "姐姐", "妹妹", "小妹"), ("sister_of", "f")),
    "儿子": ("son_of", "m"), "女儿": ("daughter_of", "f"), "闺女": ("daughter_of", "f"),
    # by birth order, as an older or more formal speaker says it (长子志明, 次女志芳)
    **dict.fromkeys(("长子", "次子", "幼子", "大儿子", "小儿子", "二儿子"), ("son_of", "m")),
    **dict.fromkeys(("长女", "次女", "幼女", "大女儿", "小女儿", "二女儿"), ("daughter_of", "f")),
    "孙子": ("grandson_of", "m"), "孙女": ("granddaughter_of", "f"),
    **dict.fromkeys(("老公", "丈夫", "先生"), ("husband_of", "m")),
    **dict.fromkeys(("老婆", "妻子", "媳妇", "太太", "爱人"), ("wife_of", "f")),
    "老伴": ("spouse_of", None),
    **dict.fromkeys(("男朋友", "男友"), ("boyfriend_of", "m")),
    **dict.fromkeys(("女朋友", "女友"), ("girlfriend_of", "f")),
    "对象": ("partner_of", None), "未婚夫": ("fiance_of", "m"), "未婚妻": ("fiancee_of", "f"),
    **dict.fromkeys(("前男友", "前任"), ("ex_partner_of", None)), "前女友": ("ex_partner_of", "f"),
    "闺蜜": ("friend_of", "f"),
    **dict.fromkeys(("好朋友", "朋友", "死党", "发小", "好友", "哥们"), ("friend_of", None)),
    **dict.fromkeys(("室友", "舍友"), ("roommate_of", None)), "邻居": ("neighbour_of", None),
    **dict.fromkeys(("老板", "领导", "上司", "组长", "主管", "经理", "总监"), ("boss_of", None)),
    "导师": ("advisor_of", None), "老师": ("teacher_of", None), "同事": ("coworker_of", None),
    "房东": ("landlord_of", None),
    "外孙": ("grandson_of", "m"), "外孙女": ("granddaughter_of", "f"),
    **dict.fromkeys(("前夫", "前妻"), ("ex_partner_of", None)),
    "同桌": ("deskmate_of", None), "班主任": ("teacher_of", None), "leader": ("boss_of", None),
    **dict.fromkeys(("师兄", "师弟"), ("labmate_of", "m")), **dict.fromkeys(("师姐", "师妹"), ("labmate_of", "f")),
    "弟": ("brother_of", "m"), "妹": ("sister_of", "f"), "娘": ("mother_of", "f"), "老娘": ("mother_of", "f"),
    **dict.fromkeys(("婆婆", "岳母", "丈母娘"), ("mother_in_law_of", "f")),
    **dict.fromkeys(("公公", "岳父", "老丈人"), ("father_in_law_of", "m")),
    **dict.fromkeys(("奶奶", "外婆", "姥姥"), ("grandmother_of", "f")),
    **dict.fromkeys(("爷爷", "外公", "姥爷"), ("grandfather_of", "m")),
    # Cantonese and Wu (Shanghainese) words for the same relatives
    **dict.fromkeys(("细妹", "家姐", "阿姐"), ("sister_of", "f")),
    **dict.fromkeys(("细佬", "阿哥", "阿弟"), ("brother_of", "m")),
    "老豆": ("father_of", "m"), "家婆": ("mother_in_law_of", "f"), "家公": ("father_in_law_of", "m"),
    **dict.fromkeys(("大仔", "细仔"), ("son_of", "m")), **dict.fromkeys(("阿嫲", "嫲嫲"), ("grandmother_of", "f")),
}
# Terms one person holds in a user's life at a time: said without a name ("我妈", "婆婆来杭州"), the term is the name.
UNIQUE = frozenset("妈 妈妈 老妈 母亲 爸 爸爸 老爸 父亲 老公 丈夫 老婆 妻子 媳妇 老伴 男朋友 男友 女朋友 女友 对象 "
                   "婆婆 公公 岳母 岳父 丈母娘 老板 老豆 家婆 家公".split())
PETS = tuple("橘猫 猫咪 小猫 猫 狗狗 小狗 狗 柯基 金毛 泰迪 柴犬 哈士奇 拉布拉多 边牧 比熊 布偶 英短 美短 鹦鹉 八哥 "
              "仓鼠 兔子 乌龟 金鱼 鱼 龙猫 刺猬".split())
# Tags of a word that cannot be a name: verbs, adverbs, prepositions, pronouns, conjunctions, particles, numbers.
_NOT_NAME_TAGS = ("v", "d", "p", "r", "c", "u", "m", "x", "y", "e", "a", "f", "q", "l", "i")
# Roles held towards whoever the sentence is about: 班主任, 房东 said without 我 are a child's teacher, a relative's
# landlord as often as the user's, so only 我的班主任 makes one the user's. (A boss said alone is the user's far more
# often: 组长老周人挺好.)
_ROLES = frozenset({"teacher_of", "advisor_of", "landlord_of", "coach_of"})
_NAME_TAGS = ("nr", "nrt", "nrfg", "nz", "eng")
_PERSON_TAGS = ("nr", "nrt", "nrfg")
_TIME_WORDS = frozenset("今天 明天 昨天 后天 现在 最近 刚才 刚刚 早上 晚上 下午 上午 中午 周末 今年 去年 明年 "
                        "平时 一直 已经 今晚 昨晚 这周 下周 上周 这个 那个 一起 一下 终于 居然 突然 其实 真的".split())
_NOT_PLACES = frozenset("这里 那里 家里 一起 附近 公司 学校 楼下 外面 里面 旁边 这边 那边 单位 宿舍 老家 家 "
                        "屋企 屋里 屋头".split())  # 屋企 (Cantonese), 屋里, 屋头: home

_KIN_TERMS = "|".join(sorted(KIN, key=len, reverse=True))
_PET_TERMS = "|".join(sorted(PETS, key=len, reverse=True))
# Whose the term is: mine (我, and 俺 / 咱 in the north), a pronoun's (她男朋友, 他姐) or, said before 的, a name's
# (陈蕾的男朋友: see _named_owner)
_OWNER = (r"(?P<owner>我们家的?|我家的?|我们的|我的|我们|我养的|我|俺们家的?|俺家的?|俺们|俺的|俺|咱们家的?|咱家的?|"
          r"咱们|咱|她家的?|他家的?|她的|他的|她|他)?")
_NAMING = re.compile(_OWNER + r"(?P<term>" + _KIN_TERMS + "|" + _PET_TERMS + r")(?P<call>叫做|名叫|叫|是)?")
_IS_MY_PET = re.compile(r"^(?P<name>[A-Za-z]+|[\u4e00-\u9fff]{2,3})是(?P<owner>我们家|我家|我|我养|俺|俺家|咱家)的?"
                        r"(?P<adj>[\u4e00-\u9fff]{0,2}?)(?P<term>" + _KIN_TERMS + "|" + _PET_TERMS
                        + r")(?:$|[了啊呀呢吧])")
# 我有个妹妹，叫小雨 / 我有一个表哥他叫阿杰: the name in the clause after the term
_HAVE_ONE_CALLED = re.compile(r"我(?:还)?有(?:一)?个(?P<term>" + _KIN_TERMS + r")[，,\s]*(?:她|他)?(?:叫做|名叫|叫)")
_CLAUSES = re.compile(r"[，,。．.！!？?；;：:～~…\s]+")
_WORK = re.compile(r"(?:在|去|加入了?)(?P<org>[A-Za-z][\w&.-]*|(?:(?!在)[\u4e00-\u9fffA-Za-z]){2,12}?)(?:那边|这边)?"
                   r"(?P<verb>干了|干|做|上班|工作|实习|打工|当|任职|报到|读书|读研|读博|读|上学|念书|教)")
# 小宇在云大附中, 豆豆转到宝安区新安小学了, a clause that is a school's name alone (曲江二小): the subject goes there
_AT_SCHOOL = re.compile(r"(?:在|转到了?|转学到|转进了?|考上了?)"
                        r"(?P<org>(?:(?!在|转|我|你|他|她)[\u4e00-\u9fffA-Za-z]){2,12}?"
                        r"(?:" + "|".join(organisations_zh.SCHOOLS) + r"))(?:了|读书|上学|念书)?$")
# 在呼和浩特开了个奶茶馆 (叫草原情), 阿弟在苏州开了个厂叫德顺五金, 经营一家五金厂: a business someone opened or runs,
# whose name is said after it (here or in the clause after) — theirs, where it is. Not 开会, 开车 (no shop word), nor
# 开了个会 (会 is no business).
_OPENED = re.compile(r"(?:在(?P<place>[\u4e00-\u9fffA-Za-z]{2,8}?))?(?:开了|开|经营|办了)(?:一)?(?:个|家|间)?"
                     r"(?P<kind>[\u4e00-\u9fff]{0,4}?(?:店|馆|厂|公司|民宿|酒楼|饭店|餐厅|工作室|超市|诊所|铺子))"
                     r"(?:(?:叫做?|名叫)(?P<org>[A-Za-z][\w&.-]*|[\u4e00-\u9fff]{2,8}))?$")
# 公司叫云栈科技, 叫金凤: the name of an organisation described in the clause before
_NAMED_LATER = re.compile(r"^(?P<noun>(?:公司|厂|店|那家|这家|单位)(?:的名字)?)?(?:叫做?|名叫|名字叫)"
                          r"(?P<org>[A-Za-z][\w&. -]*|[\u4e00-\u9fff]{2,8})$")
_NOT_A_NAME_SAID = re.compile(r"什么|啥|不|没|忘")  # 叫什么不重要, 叫啥忘了
_JOINED = re.compile(r"(?:入职|跳槽到|跳槽去|加入|offer签了?)(?P<org>[A-Za-z][\w&.-]*|[\u4e00-\u9fff]{2,6})")
# 今天顺丰第一天, 京东上班第一天: a first day at a workplace said by its bare name (not 开学第一天, 军训第一天: what
# starts is an event, one of FIRST_DAY_EVENTS)
_FIRST_DAY = re.compile(r"^(?:今天|明天|昨天|周一|下周一)?(?:在|去)?(?P<org>[A-Za-z][\w&.-]*|[\u4e00-\u9fff]{2,6}?)"
                        r"(?:上班|入职|报到)?(?:的)?第一天")
FIRST_DAY_EVENTS = frozenset("开学 上学 上课 军训 培训 放假 假期 新年 入学 住院 实习 复工 开工 试用 试用期 上班 入职 "
                             "报到 新工作 工作 搬家 结婚 恋爱 减肥 健身 跑步 戒烟 学车 高考 中考 考试".split())
_ADMITTED = re.compile(r"(?:保研到|考研考到)(?P<org>[\u4e00-\u9fffA-Za-z]{2,6}?)(?:录取|了|$)|"
                       r"被(?P<by>[\u4e00-\u9fffA-Za-z]{2,6}?)录取")  # not 被差评了: 被 alone is any passive
_LIVES = re.compile(r"(?:住在|搬到了?|搬去了?|搬来了?|租在|定居在?|安家在?)(?P<rest>.+)")
# 在周口老家带娃, 她回浏阳老家了: the home place where someone is now (not 过年回潍坊老家: a visit, said without 了;
# not 我老家在…: where one is from)
_HOME_PLACE = re.compile(r"(?:在|回到?)(?P<place>[\u4e00-\u9fff]{2,4}?)老家(?:了$|(?!了))")
_VISIT = re.compile(r"^回|过年|春节|清明|国庆|放假")
_ARRIVED = re.compile(r"(?:回|去|到)(?P<place>[\u4e00-\u9fff]{2,4})了$")
# 搬到Subang了, 住在Cheras: a place abroad written in Latin letters, capitalised as a name is
_CAME_TO = re.compile(r"(?<![回出起过下上进原本后未将])来(?:了|到)?(?P<place>[\u4e00-\u9fff]{2,4}?)"
                      r"(?:了|帮|看|玩|住|找|陪|照顾|出差|工作|上班|读书|上学|$)")
_IS_IN_AFTER = re.compile(r"(?:也|还|现在|一直|目前|都)?在(?P<place>[\u4e00-\u9fff]{2,4})$")
# 她住我那儿, 住在我家: someone living at the user's home (住我这儿两天, 这次住我这边: a visit, not a home)
_A_WHILE = r"(?:[一两二三四五六七八九十几半\d]+|几)(?:天|晚|夜|周|个?星期|个?礼拜|个月)"
_AT_MINE = re.compile(r"(?<!这次)(?<!这回)(?<!暂时)住(?:在|到)?(?:我|我们|俺|俺们)(?:那儿|这儿|那里|这里|家|那|这)"
                      r"(?!附近|旁边|楼下|对面|隔壁)"
                      r"(?!.{0,3}?" + _A_WHILE + ")")
_LATIN_PLACE = re.compile(r"[A-Z][a-z]+(?:[A-Z][a-z]+)*")
# 我女朋友小鹿也在深圳; 房子在宝安, 新家在滨江: a home is where one lives (not 老家在…: where one is from)
_IS_IN = re.compile(r"(?:^|也|还|现在|一直|目前|都|房子|(?<!老)家)在(?P<place>[\u4e00-\u9fff]{2,4})$")
_COMPANY_NAMED = re.compile(r"(?P<place>[\u4e00-\u9fff]{2,4})(?:一家|那家|的一家).{0,16}?(?:公司|学校|医院|店)\s*"
                            r"(?:叫|名叫)(?P<org>[A-Za-z][\w&.-]*|[\u4e00-\u9fff]{2,6})")
# 跟俺弟弟住, 婆婆跟我们住一起, 我们一起住在滨江: a shared home (not 住院, 住酒店: a stay)
_LIVES_WITH = re.compile(r"(?:(?:跟|和|与)(?P<with>[\u4e00-\u9fffA-Za-z]{1,6}?)(?:一起|在一起)?"
                         r"住(?!院|酒店|宾馆|了几天)|(?P<together>一起住|住一起|住在一起|同居))")
# 在青岛上大学 / 在英国曼彻斯特读研究生, then the university's name in the clause after (中国海洋大学, 读的是曼大)
_AT_UNIVERSITY = re.compile(r"(?:在(?P<place>[\u4e00-\u9fffA-Za-z]{2,8}?))?(?:也|还|现在)?(?:上|读|念)"
                            r"(?:大学|研究生|研|博士|博|本科)$")
_UNIVERSITY_NAMED = re.compile(r"^(?:读的是|上的是|念的是|是)?(?P<org>[\u4e00-\u9fff]{2,12})$")
# 一家游戏公司, 那个厂: an organisation described, not named
_SOME = ("一家", "一个", "一所", "一间", "那家", "这家", "那个", "这个", "某")
_WISH = re.compile(r"想|打算|准备|考虑|希望|如果|要是|干脆|可能|劝|让|等(?:她|他|我|你|[^等]{0,4}来了)|将来")
# What a clause opens with when it goes on with what the clause before planned (去…做, 搬到…)
_GOES_ON = ("去", "搬", "到", "转到", "进", "考", "回")
_TITLE = re.compile(r"《[^》]*》")
_NEGATED = re.compile(r"(?:不|没有?|别|未)(?:再|会|想|要|能|用|打算)?$")
_BROKE_UP = re.compile(r"分手|分了手|离婚")
_DIED = re.compile(r"走了|去世|过世|死了|没了|离开了我们|埋了")
_QUIT = re.compile(r"离职|辞职|裸辞|不干了|最后一天")
_MOVED_OUT = re.compile(r"搬出去|搬走|退租|房子(?:也)?退了")
_GRADUATED = re.compile(r"毕业了")
# 我们订婚了, Jason求婚了, 赵鹏和孙悦领证了: a couple that becomes more (core/entities.py picks the relation)
_COUPLE_NOW = re.compile(r"(?:(?P<a>[\u4e00-\u9fffA-Za-z]{2,4}?)[和跟与](?P<b>[\u4e00-\u9fffA-Za-z]{1,4}?))?"
                         r"(?:终于|已经|正式|今天|昨天)?(?P<what>求婚|订婚|领证|结婚)了")
_PRONOUNS = re.compile(r"(他|她|它|佢)(?!们|哋)")
_PRONOUN_WORD = {"他": "he", "她": "she", "它": "it", "佢": "they"}
_STARTS_A_PREDICATE = frozenset("会又也在说就还是都去来把被给跟和今昨最不没很太真刚才已要想能")
_LATIN_NAME = re.compile(r"[A-Za-z][A-Za-z'-]+")
_HAN = re.compile(r"[\u4e00-\u9fff]+")
_VERB_KIND = {"读书": "studies_at", "读研": "studies_at", "读博": "studies_at", "读": "studies_at",
              "上学": "studies_at", "念书": "studies_at", "实习": "interns_at"}


def gender_of_term(alias: str) -> str | None:
    for term in sorted(KIN, key=len, reverse=True):
        if term in alias:
            return KIN[term][1]
    return None


def pronouns(text: str) -> list[str]:
    return [_PRONOUN_WORD[m.group(1)] for m in _PRONOUNS.finditer(text)]


def _first_word(text: str) -> tuple[str, str] | None:
    for word, tag in rjieba.tag(text):
        if word.strip():
            return word, tag
    return None


def _name_at(text: str, person: bool = False) -> str | None:
    """The name that starts `text`, if the segmentation says one does; with `person`, a person's name in shape (a
    pet is called 年糕 or 团子, words of the dictionary)."""
    first = _first_word(text)
    if first is None:
        return None
    word, tag = first
    if _LATIN_NAME.fullmatch(word):
        return word
    latin_after = _LITTLE_LATIN.match(text)
    if latin_after:
        return latin_after.group()  # 阿Mei, 小K: a prefix and a Latin name
    if len(word) == 1 and len(text) >= 2 and word in "小阿老大":
        word, tag = text[:2], "nr"  # 小绿, 阿杰: a prefix and a character the dictionary split apart
    if not 2 <= len(word) <= 3 or not _HAN.fullmatch(word):
        return None
    if len(word) == 3 and word[2] in _STARTS_A_PREDICATE:
        word = word[:2]  # 小绿会说话了: the dictionary took 会 into the name
    if word in _TIME_WORDS or not_a_name_zh(word) or word in KIN or word in PETS or word[0] in "我你他她它这那姓":
        return None
    doubled = len(word) == 2 and word[0] == word[1] and not tag.startswith(("d", "v", "t"))  # 朵朵, 豆豆; not 天天
    if tag == "t" and word[0] not in "小阿老" and not doubled:
        return None  # 上个月, 暑假: a time (老周 is tagged one too, as "old week")
    if not doubled and tag.startswith(_NOT_NAME_TAGS) and tag not in _NAME_TAGS:
        return None
    if person and tag not in _NAME_TAGS and not doubled and word[0] not in "小阿老大" and (
            word[0] not in entity_names_zh.SURNAMES or text[len(word):].startswith(("得", "地"))):
        # 老婆高兴得很, 婆婆好心买了, 室友回家了: a word the dictionary does not call a name, after a term, is one
        # only in a name's shape — a surname first (林果), a doubled nickname (妞妞), 小 / 阿 / 老 / 大 before one
        return None
    return word


def _owner_ref(owner: str | None) -> Ref:
    if owner and owner[0] in "她他":
        return pronoun("she" if owner[0] == "她" else "he")
    return ME


def _is_mine(owner: str | None) -> bool:
    return bool(owner) and owner[0] in "我俺咱"  # type: ignore[index]


def _named_owner(clause: str, start: int) -> Ref | None:
    """陈蕾的男朋友: the name before 的, as the graph may know it."""
    if start < 3 or clause[start - 1] != "的":
        return None
    latin = _LATIN_OWNER.search(clause, 0, start - 1)
    if latin is not None:
        return named(latin.group())  # 阿May的老公, Kevin的女朋友
    words = [w for w in rjieba.cut(clause[:start - 1]) if w.strip()]
    if words and 2 <= len(words[-1]) <= 3 and _HAN.fullmatch(words[-1]) and words[-1] not in KIN:
        return named(words[-1])
    return None


# 我妈… / 俺弟弟… at the start of a clause: that person is its subject (我们 is the user and someone, still the user's)
_MY_KIN_AT_START = re.compile(r"^(?:我|俺|咱)(?!们)(?:家的?|的)?(?P<term>" + _KIN_TERMS + r")")
# 他妈…, 她老公…, 老周的女儿…, 豆豆他爸…: someone's relative at the start of a clause is its subject (not 他妈的, a
# curse)
_THEIR_KIN_AT_START = re.compile(r"^(?:(?P<pron>他|她)|(?P<name>[A-Za-z]+|[\u4e00-\u9fff]{2,3}?)(?:的|他|她))"
                                 r"(?:的|家的?)?(?P<term>" + _KIN_TERMS + r")(?!的)")
# 小名娟子, 大名叫刘德强: another name of whom the clauses before were about; they stay its subject
_ANOTHER_NAME = re.compile(r"^(?:小名|大名|外号|昵称|网名|英文名|全名|乳名)(?:叫做?|是)?"
                           r"(?P<name>[A-Za-z][A-Za-z'-]+|[\u4e00-\u9fff]{2,3})$")
# 大家都叫他老周, 组里私下都叫他吴老板, 我们管她叫小雅: the name others call the one just spoken of (not 他叫我…)
_NICKNAMED = re.compile(r"^(?:大家|我们|别人|同事们?|朋友们?|家里人|邻居们?|组里|村里人?|厂里|院里)?(?:私下)?"
                        r"(?:都|一般|平时)?(?:叫|喊|管)(?P<pron>他|她)(?:叫)?"
                        r"(?P<name>[A-Za-z][A-Za-z'-]+|[\u4e00-\u9fff]{2,3})$")
# 现在的丈夫姓周 / 我老公姓周: the clause before introduced a relative of the user by the term alone
# (我导师叫王立新: the given name, of which the one everyone uses is another)
_KIN_BEFORE = re.compile(r"^(?:我的?|俺的?|我现在的|现在的)?(?P<term>" + _KIN_TERMS + r")(?:姓|是|$|叫做?"
                         r"(?P<given>[\u4e00-\u9fff]{2,3}|[A-Za-z][A-Za-z'-]+)$)")
# The user's parents said together, as a clause's subject, and 他们 right after a clause that spoke of them
_PARENTS = re.compile(r"^(?:我|俺|咱)?(?:的)?(?:爸妈|父母|爹妈|爸爸妈妈)(?:都|也|还|一直|现在)*")
_PARENTS_SAID = re.compile(r"(?:我|俺|咱|跟|和|给)(?:的)?(?:爸妈|父母|爹妈|爸爸妈妈)")
_THEM = re.compile(r"^他们(?:都|也|还|一直|现在)*")
_HOMES = frozenset({"lives_in", "lives_with"})
_LITTLE_NAME_AT_START = re.compile(r"^[小阿](?:[A-Za-z]+|[\u4e00-\u9fff])")
_LITTLE_LATIN = re.compile(r"[小阿][A-Za-z]+")
_LATIN_OWNER = re.compile(r"(?:[小阿老]?[A-Za-z][A-Za-z'-]*)$")
# 我的小店… / 我家的车…: the user's thing is the subject, not the user (我家 alone is the user's home: 我家在…)
_MY_THING_AT_START = re.compile(r"^(?:我|俺|咱)的")
_MY_DESCRIBED = re.compile(r"(?:我|俺|咱)(?:的)?[\u4e00-\u9fff]{1,4}?(?P<term>" + _KIN_TERMS + r")")
# 在高新区 as a clause of its own, and the words that say the clause before spoke of an organisation
_ORG_IS_AT = re.compile(r"在(?P<place>[\u4e00-\u9fffA-Za-z]{2,6})")
_SPEAKS_OF_AN_ORG = re.compile(r"公司|厂|店|offer|单位|集团|医院|学校|餐厅|饭馆|工作室|事务所")
_SPEAKS_OF_A_HOME = re.compile(r"住|房子|(?<![一二两三几那这每])家")  # 住的是厂里分的老房子 在道外区: the home is there
_CALLED = re.compile(r"(?:叫做?|名叫)(?P<name>[A-Za-z][\w&.-]*|[\u4e00-\u9fff]{2,8})")
_BLOOD_AND_MARRIAGE = frozenset({
    "mother_of", "father_of", "brother_of", "sister_of", "son_of", "daughter_of", "grandson_of", "granddaughter_of",
    "husband_of", "wife_of", "mother_in_law_of", "father_in_law_of"})  # not 外婆: as often the children's
_ONE_OF = re.compile(r"(?:一)?个(?P<term>" + _KIN_TERMS + r")$")  # 她带来一个儿子 (，叫小宇)
_HAS_ONE = re.compile(r"(?P<whose>[\u4e00-\u9fff]{0,3}?)(?:还)?有(?:一)?个$")
_SPOUSE_BY_PRONOUN = {frozenset({"他"}): "husband_of", frozenset({"她"}): "wife_of"}


def _is_person_name(word: str) -> bool:
    first = _first_word(word)
    if first is None:
        return False
    doubled = len(word) == 2 and word[0] == word[1]  # 婷婷, 朵朵
    return first[1] in _NAME_TAGS or word[0] in "小阿老" or doubled or _LATIN_NAME.fullmatch(word) is not None


def _naming(clause: str, text: str = "") -> list[Claim]:
    found: list[Claim] = []
    m = _IS_MY_PET.match(clause)
    if m and m.group("name") not in KIN and _name_at(m.group("name")) is not None:  # 小雨是我姐, 年糕是我家的橘猫
        term = m.group("term")
        alias = f"{m.group('owner')}的{m.group('adj')}{term}" if term not in KIN else f"我{term}"
        if term in KIN:
            found.append(Claim(named(m.group("name"), "person", alias, term), KIN[term][0], ME))
        else:
            found.append(Claim(named(m.group("name"), "pet", alias), "pet_of", ME))
    for m in _NAMING.finditer(clause):
        owner, term = m.group("owner"), m.group("term")
        after_with = m.start() > 0 and clause[m.start() - 1] in "和跟陪给带"  # 和男朋友吃饭
        # 和男朋友吃饭: the one boyfriend, no name; 跟同桌林果去: a deskmate named 林果
        name = None if after_with and owner is None and term in UNIQUE else _name_at(clause[m.end():], term in KIN)
        if after_with and name is not None and clause.endswith(name, m.end()) and m.end() + len(name) == len(clause):
            name = None  # 跟我哥合租: what follows "with my brother" to the clause's end is what they do, not his name
        named_owner = _named_owner(clause, m.start()) if owner is None else None
        # a term inside a sentence introduces only when a name follows it (楼下邻居老孙头, 是朋友丽娜转给我的) and it
        # is a word of its own there
        if owner is None and m.start() != 0 and not (after_with and term in UNIQUE) and (
                name is None or len(term) < 2 or not starts_a_word(clause, m.start())):
            continue
        if named_owner is not None and name is not None and term in KIN:
            found.append(Claim(named(name, "person"), KIN[term][0], named_owner))
            continue
        if owner is None and m.start() > 0 and clause[m.start() - 1] == "的" and "我" not in clause[:m.start()]:
            continue  # 阿May的老公大刘: someone's husband, whose the rules could not read (我与前妻的女儿: mine)
        if name is None:
            alone = m.end() == len(clause)  # "妈妈" on its own is someone calling out, not a mention
            if term in UNIQUE and not m.group("call") and not alone and (_is_mine(owner) or (
                    owner is None and KIN[term][0] not in _ROLES)):
                # 我妈发了视频 / 婆婆来杭州: the term stands for the person (a name said later joins it)
                aliases = [f"{owner}{term}", term] if owner else [term]
                found.append(Claim(named(term, "person", *aliases), KIN[term][0], ME))
            continue
        if owner is None and not m.group("call") and term not in KIN:
            continue
        if m.group("call") == "是" and not _is_person_name(name):
            continue  # 她爸是海军退休的: what he is, not what he is called
        had = _HAS_ONE.search(clause[:m.start()]) if owner is None else None
        if had is not None:  # 老周有个女儿婷婷: 老周's daughter; 我有个妹妹小雨: mine
            whose = had.group("whose")
            # 邻居老许有个儿子: the owner is the name that ends what comes before, not 居老许
            person = next((r for i in range(len(whose) - 1) if (r := _person_named(whose[i:])) is not None), None)
            owner_said = ME if whose in ("我", "俺", "咱", "") else person or named(whose)
            if term in KIN:
                found.append(Claim(named(name, "person", *([term, f"我{term}"] if owner_said is ME else [])),
                                   KIN[term][0], owner_said))
            continue
        aliases = [term, f"{owner}{term}"] if _is_mine(owner) else [term]
        owner_ref = _owner_ref(owner)
        if term in KIN and owner is None and KIN[term][0] in _ROLES:
            found.append(Claim(named(name, "person", *aliases)))  # 班主任黄老师: whose teacher, the text does not say
            continue
        if term in KIN:
            relation = KIN[term][0]
            if relation == "spouse_of":  # 老伴: husband or wife by the pronoun the message uses for them
                relation = _SPOUSE_BY_PRONOUN.get(frozenset(_PRONOUNS.findall(text)) & {"他", "她"}, "")
                if not relation:
                    found.append(Claim(named(name, "person", *aliases)))
                    continue
            found.append(Claim(named(name, "person", *aliases), relation, owner_ref))
        else:
            found.append(Claim(named(name, "pet", *aliases[1:]), "pet_of", owner_ref))
    return found


def _is_bare_boss(claim: Claim) -> bool:
    """老板 said without whose: the claim the term alone makes (我老板 says whose)."""
    return claim.relation == "boss_of" and claim.object is ME and claim.subject.alias_forms() == [claim.subject.name]


def _subject_of(clause: str, running: Ref | None, introduced: list[Claim]) -> Ref | None:
    """Who a clause is about: whom it introduces, whom it starts with (我妈…, 阿Mei…, 他…), else the subject before
    it. None: a thing the user does not know as a person (饭馆搬到槐荫区了): nothing the clause says is the user's."""
    for claim in introduced:
        if claim.subject.kind == "person" and claim.subject.name not in KIN and _NAMING.search(clause):
            return claim.subject  # "我表姐叫小雅 在北京做产品经理": what follows is about 小雅
    mine = _MY_KIN_AT_START.match(clause)
    if mine and clause.startswith("的", mine.end()):
        return None  # 我姐的同学在华为上班: the classmate works there, someone the graph does not know
    if mine:
        term = mine.group("term")
        # 我妈腰不好 回咸阳了: 我妈 went back, not I; 俺弟弟 is what a 俺-speaker calls him
        return kin_of(ME, KIN[term][0], f"{clause[0]}{term}")
    theirs = _THEIR_KIN_AT_START.match(clause)
    if theirs and _ends_word(clause, theirs.end("term")):
        owner = pronoun(_PRONOUN_WORD[theirs.group("pron")]) if theirs.group("pron") else _person_named(
            theirs.group("name"))
        # someone's relative, whoever that someone is: never the user, so nobody when the owner is not a person;
        # 老周的女儿 is what the graph may call her until she is named
        term = theirs.group("term")
        said = f"{theirs.group('name')}的{term}" if theirs.group("name") else term
        return kin_of(owner, KIN[term][0], said) if owner is not None else None
    if _MY_THING_AT_START.match(clause) and not _NAMING.match(clause):
        return None
    described = _MY_DESCRIBED.fullmatch(clause)
    if described and _is_noun_phrase(clause[1:]):
        # 我大学室友 (还在武汉): "my college roommate", said of someone, is not the user doing anything
        term = described.group("term")
        return kin_of(ME, KIN[term][0], term)
    if clause.startswith(("我", "俺", "咱")):
        return ME
    if clause.startswith("姓"):
        return None  # 姓罗，在株洲中车当工程师: someone known by a surname, whom the graph cannot name
    if clause[0] in "他她它佢" and not clause.startswith(("他们", "她们")):
        if _owns_what_follows(clause):
            return None  # 她姐夫在上海, 他公司在滨江: about what is hers or his, which the graph does not hold
        return pronoun(_PRONOUN_WORD[clause[0]])
    person = _person_at_start(clause)
    if person is not None:
        return named(person, "person")  # 王磊在华为上班, 婷婷在北京读书: someone named, whom what follows is about
    little = _LITTLE_NAME_AT_START.match(clause)
    if little:
        return named(little.group())  # 阿Mei走了, 小芳说…: the dictionary splits 阿 from the name
    first = _first_word(clause)
    if first is None:
        return running
    if first[0] in KIN and KIN[first[0]][0] in _BLOOD_AND_MARRIAGE and len(clause) > len(first[0]):
        # 弟弟来上海出差, 婆婆来杭州: a relative's term said alone is the user's relative (one the graph knows by it,
        # or one it holds no other of)
        return kin_of(ME, KIN[first[0]][0], first[0])
    if first[0] in KIN or first[1] in _NAME_TAGS:
        return named(first[0])  # 表姐说… / 小雅下周一就去…
    if first[1].startswith("n") and not clause[len(first[0]):].startswith(("那边", "这边")) and \
            not _QUIT.search(clause):
        # 大军跟俺提…, 饭馆搬到槐荫区了: a noun starts the clause, and it is the subject — a person the graph knows by
        # that name or nobody; a place or company said as where (美团那边已经离职) leaves the subject as it was
        return named(first[0])
    return running


def _person_at_start(clause: str) -> str | None:
    """A person's name opening a clause, by the dictionary's name tags (王磊, 阿强), a doubled character (婷婷) or
    老 with a surname (老周, tagged a time) — not 小区, 老家, 小张 (tagged common nouns: whether a person is meant
    is the graph's to say, as before)."""
    first = _first_word(clause)
    if first is None:
        return None
    word, tag = first
    if word in "小阿老" and len(clause) >= 2 and _first_word(clause[1:]) == (clause[1], "nr"):
        word, tag = clause[:2], "nr"  # 老蔡被调去…: the dictionary split 老 from the surname
    if not (2 <= len(word) <= 3 and _HAN.fullmatch(word)) or word in KIN or word in _TIME_WORDS or not_a_name_zh(word):
        return None
    # 哈哈, 嘿嘿 (onomatopoeia, interjections) are doubled too and are nobody
    doubled = len(word) == 2 and word[0] == word[1] and not tag.startswith(("d", "v", "m", "q", "o", "e", "y"))
    surname = len(word) == 2 and word[0] == "老" and tag == "t"
    return word if tag in _PERSON_TAGS or doubled or surname else None


def _owns_what_follows(clause: str) -> bool:
    """The pronoun opening the clause is followed by a noun it owns (她 姐夫, 他 公司), not by what it does."""
    words = [(w, t) for w, t in rjieba.tag(clause[:12]) if w.strip()]
    return len(words) > 1 and words[0][0] in _PRONOUN_WORD and words[1][1].startswith("n")


def _ends_word(clause: str, end: int) -> bool:
    """A word of the clause ends here (她姐 in 她姐姐 or 她姐在…, not in 她姐夫: a brother-in-law)."""
    at = 0
    for word in rjieba.cut(clause):
        at += len(word)
        if at >= end:
            return at == end
    return False


def _person_named(said: str) -> Ref | None:
    """The name a whole word is, if it is one (老许 as much as 许亮: the dictionary tags 老许 an adverb)."""
    if said in KIN or said in _TIME_WORDS or not_a_name_zh(said) or said[0] in "我你他她它这那":
        return None
    return named(said) if _name_at(said) == said or _is_person_name(said) else None


def _is_noun_phrase(said: str) -> bool:
    """Nouns (and the adjectives and places that qualify them) only: 大学室友, not 去看室友."""
    words = [t for w, t in rjieba.tag(said) if w.strip()]
    return bool(words) and all(t.startswith(("n", "a", "b", "s")) for t in words)


def _is_proper_noun_phrase(candidate: str) -> bool:
    """Every word a noun, a name or an abbreviation: 蓝鲸广告, 小红书, Shein, 亚航; not 组跟导师 (a preposition
    inside)."""
    words = [(w, t) for w, t in rjieba.tag(candidate) if w.strip()]
    return bool(words) and all(t.startswith("n") or t in ("eng", "j") for _, t in words)


def _place_or_org(subject: Ref, candidate: str, verb: str) -> list[Claim]:
    if places_zh.is_place(candidate):
        # 在北京实习: a summer's internship is not a home
        return [] if verb == "实习" else [Claim(subject, "lives_in", named(candidate, "place"))]
    if candidate in _NOT_PLACES or candidate in KIN or candidate[0] in "我你他她这那家" or candidate.startswith(_SOME):
        return []
    placed = organisations_zh.split_places(organisations_zh.without_department(candidate))
    if places_zh.is_place(placed.name) or placed.name.startswith(_SOME) or placed.name in organisations_zh.INSTITUTIONS:
        # 在英国曼彻斯特读研究生: places all the way, no school named; 台北一家电子公司: one described, not named;
        # 在医院上班: a kind of workplace, not one named
        return []
    relation = _VERB_KIND.get(verb, "works_at")
    # 在川大读大二: a university by its short name (tagged an adjective) where someone studies
    short = relation == "studies_at" and organisations_zh.is_university_short(placed.name)
    if not (_is_proper_noun_phrase(placed.name) or organisations_zh.is_institution(placed.name) or short):
        return []
    if organisations_zh.is_school(placed.name) and relation == "studies_at":
        relation = "attends"  # a child's school: 在巴蜀中学读高一
    return [Claim(subject, relation, _organisation(placed)), *_where_placed(placed)]


def _described(candidate: str) -> organisations_zh.Placed | None:
    """一家外企, 深圳一家做跨境电商的公司: an organisation said by what it is (its places apart), not by its name."""
    placed = organisations_zh.split_places(candidate)
    return placed if placed.name.startswith(_SOME) else None


def _organisation(placed: organisations_zh.Placed) -> Ref:
    aliases = [placed.said] if placed.said != placed.name else []
    if placed.said == "".join(placed.places) + placed.name:
        # 浙江义乌小商品城 is also 义乌小商品城, as the user may say it next time
        aliases += ["".join(placed.places[i:]) + placed.name for i in range(1, len(placed.places))]
    return named(placed.name, "organisation", *aliases)


def _where_placed(placed: organisations_zh.Placed) -> list[Claim]:
    """深圳富达电子厂: the factory is in 深圳; 昆明盘龙区的金星小学: the school is in 盘龙区, and 盘龙区 in 昆明."""
    if not placed.places:
        return []
    places = [named(p, "place") for p in placed.places]
    found = [Claim(_organisation(placed), "located_in", places[-1])]
    return found + [Claim(smaller, "part_of", bigger) for bigger, smaller in itertools.pairwise(places)]


def _organisation_called(name: str, what: str) -> Ref:
    """The organisation named so, with the places said in what it was described as (苏州的一家养老院)."""
    return _organisation(organisations_zh.Placed(name, organisations_zh.split_places(what).places, name))


def _called_claims(called: organisations_called_zh.Called, running: Ref | None) -> list[Claim]:
    """一间会计师事务所叫立信德 (after 跳槽: the subject works there), 阿杰那间公司叫顺通物流 (阿杰 does)."""
    org = _organisation_called(called.name, called.what)
    placed = organisations_zh.split_places(called.what)
    found = [Claim(org), *[Claim(org, "located_in", named(p, "place")) for p in placed.places[-1:]]]
    owner = called.owner
    if owner in ("我", "我们", "俺", "俺们", "咱们"):
        worker: Ref | None = ME
    elif owner in ("他", "她"):
        worker = pronoun(_PRONOUN_WORD[owner])
    elif owner is not None:
        worker = named(owner, "person") if _person_named(owner) is not None else None  # whose company: a person's
    else:
        worker = running if called.joined else None
    return found + ([Claim(worker, "works_at", org)] if worker is not None else [])


def _school(clause: str, subject: Ref) -> list[Claim]:
    """Where the subject goes to school, said without a verb of study (小宇在云大附中, 转到了安宁的太平学校), or by the
    school's name alone after who was talked of (乐乐今天上一年级了 曲江二小) — never the user's, said so."""
    m = _AT_SCHOOL.search(clause)
    if m is not None and not _wished(clause, m.start()):
        said = m.group("org")
        before = clause[:m.start()]
        if before and _is_person_name(before):
            subject = named(before)  # 婷婷转到了…: the name before the verb, whoever the clause before was about
    elif m is None and organisations_zh.is_school(clause) and len(clause) <= 8 and \
            not any(t.startswith(("v", "t", "f", "d", "p", "r", "u")) for _, t in rjieba.tag(clause)):
        # the clause is a school's name (曲江二小), not what someone does (九月上小学)
        said = clause
    else:
        return []
    if subject is ME:
        return []  # 我在…小学 without 读 or 上学: a grown-up there is more likely to work there
    placed = organisations_zh.split_places(said)
    return [Claim(subject, "attends", _organisation(placed)), *_where_placed(placed)]


def _university_named(clause: str, studying: tuple[Ref, tuple[str, ...]] | None) -> list[Claim]:
    """俺闺女在青岛上大学 中国海洋大学: the university named in the clause after the one that said who studies
    where; it is in the place said there."""
    m = _UNIVERSITY_NAMED.match(clause) if studying is not None else None
    if studying is None or m is None:
        return []
    org = m.group("org")
    if not (organisations_zh.is_university(org) or organisations_zh.is_university_short(org)):
        return []
    who, places = studying
    university = named(org, "organisation")
    return [Claim(who, "studies_at", university),
            *[Claim(university, "located_in", named(p, "place")) for p in places[-1:]]]


def _wished(clause: str, start: int) -> bool:
    """想让小宇去大理读高中, 打算搬到余杭: what someone wants or plans, not where anyone is; 不去云南了, 没搬到杭州:
    what is not so."""
    return _WISH.search(clause[:start]) is not None or _NEGATED.search(clause[:start]) is not None


def _relations(clause: str, subject: Ref) -> list[Claim]:
    found: list[Claim] = []
    for m in _WORK.finditer(clause):
        if not _wished(clause, m.start()):
            found += _place_or_org(subject, m.group("org"), m.group("verb"))
    first_day = _FIRST_DAY.match(clause)
    if first_day and first_day.group("org") not in FIRST_DAY_EVENTS and subject is ME:
        started = _place_or_org(subject, first_day.group("org"), "")
        found += [c for c in started if c.relation != "lives_in"]  # 北京第一天: a town, not an employer
    for m in _JOINED.finditer(clause):
        if _wished(clause, m.start()):
            continue
        joined = _place_or_org(subject, m.group("org"), "")
        if joined and joined[0].relation == "works_at":
            found += joined
    if not any(c.relation in ("attends", "studies_at") for c in found):
        found += _school(clause, subject)
    for m in _ADMITTED.finditer(clause):
        org = m.group("org") or m.group("by")
        if org not in _NOT_PLACES and _is_proper_noun_phrase(org):
            found.append(Claim(subject, "admitted_to", named(org, "organisation")))
    lives = _LIVES.search(clause)
    if lives and not _wished(clause, lives.start()):
        first = _first_word(lives.group("rest"))
        if first is not None and first[0] not in _NOT_PLACES and len(first[0]) >= 2 and \
                (first[1].startswith(("ns", "nr", "nz")) or places_zh.is_place(first[0])
                 or _LATIN_PLACE.fullmatch(first[0])):
            found.append(Claim(subject, "lives_in", named(first[0], "place")))
    if not lives:
        found += _lives_bare(clause, subject)
    home = _HOME_PLACE.search(clause)
    if home and not _wished(clause, home.start()) and places_zh.is_place(home.group("place")) and \
            not (home.group().startswith("回") and not home.group().endswith("了")) and \
            not _VISIT.search(clause[:home.start()]):
        found.append(Claim(subject, "lives_in", named(home.group("place"), "place")))
    shared = _LIVES_WITH.search(clause)
    if shared and not _wished(clause, shared.start()):
        other = _housemate(shared.group("with")) if shared.group("with") else pronoun("they")
        if other is not None and other != subject:
            found.append(Claim(subject, "lives_with", other))
    at_mine = _AT_MINE.search(clause)
    if at_mine and subject is not ME and not _wished(clause, at_mine.start()):
        found.append(Claim(subject, "lives_with", ME))  # 她住我那儿: a home shared with the user
    arrived = _ARRIVED.search(clause) or _IS_IN.search(clause) or _subject_is_in(clause)
    if arrived and not _wished(clause, arrived.start()) and places_zh.is_place(arrived.group("place")):
        found.append(Claim(subject, "lives_in", named(arrived.group("place"), "place")))
    came = _CAME_TO.search(clause)
    if came and subject is not ME and not _wished(clause, came.start()) and places_zh.is_place(came.group("place")):
        # 婆婆来杭州帮我们带娃: 来 is towards the one speaking, so the user is where someone else came to
        found.append(Claim(ME, "lives_in", named(came.group("place"), "place"), inferred=True))
    return found


# rjieba joins 住 to the word before it (我住, 还住): 记住, 留住, 站住 are other verbs
_LIVE_WORDS = frozenset(("住", "我住", "你住", "他住", "她住", "俺住", "咱住", "还住", "也住", "都住", "就住"))


def _lives_bare(clause: str, subject: Ref) -> list[Claim]:
    """她现在住杭州, 我住广州天河: 住 with the place straight after it, no 在 (住酒店, 住院, 住我那儿: no place); the
    last of the places said is the home, each in the one before."""
    words = [w for w in rjieba.cut(clause) if w.strip()]
    found: list[Claim] = []
    for at, word in enumerate(words):
        if word not in _LIVE_WORDS or _wished(clause, len("".join(words[:at]))):
            continue
        places = list(itertools.takewhile(places_zh.is_place, words[at + 1:]))
        if places:
            refs = [named(p, "place") for p in places]
            found.append(Claim(subject, "lives_in", refs[-1]))
            found += [Claim(smaller, "part_of", bigger) for bigger, smaller in itertools.pairwise(refs)]
        break
    return found


def _subject_is_in(clause: str) -> re.Match[str] | None:
    """前夫在大理, 王磊现在在成都: the clause's subject, said first, is in a place, said last."""
    at = _IS_IN_AFTER.search(clause)
    if at is None or at.start() == 0:
        return None
    lead = clause[:at.start()]
    is_subject = lead in KIN or _MY_KIN_AT_START.fullmatch(lead) is not None or \
        _THEIR_KIN_AT_START.fullmatch(lead) is not None or _person_at_start(lead) == lead
    return at if is_subject else None


def _housemate(said: str) -> Ref | None:
    """Whom 跟…住 names: me / us (the user), my relative (俺弟弟), or a name after any role word (室友小林)."""
    if said in ("我", "我们", "俺", "俺们", "咱", "咱们"):
        return ME
    mine = _MY_KIN_AT_START.match(said)
    if mine and mine.end() == len(said):
        return named(mine.group("term"))
    role = _NAMING.match(said)
    name = _name_at(said[role.end():] if role else said)
    return named(name) if name is not None and (role or len(name) == len(said)) else None


def _known_in(clause: str) -> Ref | None:
    """The first word of a clause as a name the graph may know ("美团那边已经离职": 美团)."""
    first = _first_word(clause)
    if first is None or first[1].startswith(_NOT_NAME_TAGS):
        return None
    return named(first[0])


def _endings(clause: str, subject: Ref) -> list[Claim]:
    found: list[Claim] = []
    if _BROKE_UP.search(clause):
        found.append(Claim(ME, "couple", None, ends=True))
    if _DIED.search(clause) and subject is not ME:
        found.append(Claim(subject, "pet_of", None, ends=True))
    if _QUIT.search(clause):
        target = _known_in(clause)
        for relation in ("works_at", "interns_at"):
            found.append(Claim(subject, relation, None, ends=True) if target is None
                         else Claim(subject, relation, target, ends=True))
    if _MOVED_OUT.search(clause):
        for relation in ("lives_with", "roommate_of", "housemate_of"):
            found.append(Claim(subject, relation, None, ends=True))
        place = _known_in(clause)
        if place is not None:
            found.append(Claim(subject, "lives_in", place, ends=True))
    couple = _COUPLE_NOW.search(clause)
    if couple:
        what = "engaged" if couple.group("what") in ("求婚", "订婚") else "married"
        a, b = couple.group("a"), couple.group("b")
        if a and b and a not in KIN and b not in KIN:
            found.append(Claim(named(a, "person"), what, ME if b in ("我", "俺") else named(b, "person")))
        elif clause.startswith(("我们", "俺们", "咱们")) or subject is not ME:
            found.append(Claim(subject, what))
        else:
            found.append(Claim(ME, what))
    if _GRADUATED.search(clause):
        found.append(Claim(subject, "studies_at", None, ends=True))
    return found


# Cantonese written words with a Mandarin one the rules read: 喺 (在), 咗 (了), 嘅 (的), 嗰 (那). Each is
# Cantonese only, so a Mandarin text is left as it is (系 and 同 are Mandarin words too: not here).
_CANTONESE = str.maketrans({"喺": "在", "咗": "了", "嘅": "的", "嗰": "那"})
# Shanghainese 阿拉 is 我 / 我们 (阿拉阿弟: my brother), not in 阿拉伯, 阿拉丁, 阿拉斯加, 阿拉善
_WU_I = re.compile(r"阿拉(?![伯丁斯善])")


def claims(text: str) -> list[Claim]:
    if not traditional_zh.has_traditional(text):
        return _claims(text)
    # 長子志明在美國加州: read as simplified, the names kept as written
    simplified = traditional_zh.to_simplified(text)
    return [_as_written(claim, simplified, text) for claim in _claims(simplified)]


def _as_written(claim: Claim, simplified: str, written: str) -> Claim:
    def ref(said: Ref | None) -> Ref | None:
        if said is None or said.is_user:
            return said  # the rules tell the user by `is ME`

        def back(form: str | None) -> str | None:
            return traditional_zh.as_written(form, simplified, written) if form else form

        return dataclasses.replace(said, name=back(said.name), alias=back(said.alias), owner=ref(said.owner),
                                   extra_aliases=tuple(traditional_zh.as_written(a, simplified, written)
                                                       for a in said.extra_aliases))

    subject = ref(claim.subject)
    assert subject is not None
    return dataclasses.replace(claim, subject=subject, object=ref(claim.object))


def _claims(text: str) -> list[Claim]:
    text = _TITLE.sub(" ", text)  # 学生写《我的父亲》: a title names no one of the user's life
    text = _WU_I.sub("我", text.translate(_CANTONESE))  # 我细妹喺香港玛丽医院做护士: 在
    found: list[Claim] = []
    for m in _COMPANY_NAMED.finditer(text):
        first = _first_word(m.group("place"))
        if first is not None and first[1] == "ns":
            place = first[0]
            found.append(Claim(named(m.group("org"), "organisation"), "located_in", named(place, "place")))
    for shop in organisations_called_zh.called_before_kind(text):
        found += _called_claims(shop, None)
    for m in _HAVE_ONE_CALLED.finditer(text):
        name = _name_at(text[m.end():])
        if name is not None:
            term = m.group("term")
            found.append(Claim(named(name, "person", term, f"我{term}"), KIN[term][0], ME))
    running: Ref | None = ME
    clauses = [clause for clause in _CLAUSES.split(text) if clause]
    described: tuple[Ref, str, organisations_zh.Placed] | None = None  # who works where, said without its name
    org_before: Ref | bool = False  # the clause before spoke of an organisation: the one, or True if unnamed
    previous = ""
    wished_before = False  # the clause before said a wish or a plan
    org_said = False  # a clause before spoke of an organisation
    parents_before = False  # the clause before spoke of the user's parents: 他们 is them
    unnamed_org: str | None = None  # an organisation a clause described (一家养老院), whose name may follow
    studying: tuple[Ref, tuple[str, ...]] | None = None  # the clause before: who is at a university, and where
    for clause in clauses:
        where = _ORG_IS_AT.fullmatch(clause) if org_before is not False else None
        if where is not None:
            # 一家公司 叫熊猫传媒 在高新区 / 收到米哈游的offer 在上海: where the organisation is, not anyone's home
            if isinstance(org_before, Ref) and places_zh.is_place(where.group("place")):
                found.append(Claim(org_before, "located_in", named(where.group("place"), "place")))
            org_before = False
            continue
        university = _university_named(clause, studying)
        studying = None
        if university:
            found += university
            previous = clause
            continue
        said_before = len(found)
        later = _NAMED_LATER.match(clause)
        if later and described is not None and not _NOT_A_NAME_SAID.search(later.group("org")) and (
                later.group("noun") or _is_proper_noun_phrase(later.group("org")) or described[1] == "owns"):
            # after 开了家奶茶店, 叫一口甜 is the shop's name whatever words make it
            # 我在滨江一家做电商的公司写后端 公司叫云栈科技: the name of the one described; 叫 alone after it too
            who, relation, placed = described
            org = named(later.group("org"), "organisation")
            found.append(Claim(who, relation, org))
            found += [Claim(org, "located_in", named(placed.places[-1], "place"))] if placed.places else []
            described = None
            continue
        alone = organisations_called_zh.named_alone(clause)
        if alone is not None and (unnamed_org is not None or organisations_zh.is_institution(alone)):
            # 住进苏州的一家养老院，离静儿家二十分钟，叫颐和苑: the name of the one described; 叫小橙子托育: a name
            # that says what it names
            org_before = _organisation_called(alone, unnamed_org or "")
            places = organisations_zh.split_places(unnamed_org or "").places
            found += [Claim(org_before), *[Claim(org_before, "located_in", named(p, "place")) for p in places[-1:]]]
            unnamed_org, previous = None, clause
            continue
        inline = organisations_called_zh.called_in(clause, text)
        if inline is not None:
            found += _called_claims(inline, running)
            unnamed_org = None
        elif (what := organisations_called_zh.described_in(clause)) is not None:
            unnamed_org = what
        called = _CALLED.fullmatch(clause) if running is not None else None
        person = _name_at(called.group("name")) if called is not None else None
        if called is not None and person is not None and person == called.group("name") and _is_person_name(person):
            # 她带来一个儿子，叫小宇，在长安中学读初三: 小宇 is her son, and what follows is about him
            one = _ONE_OF.search(previous)
            term = one.group("term") if one is not None else None
            found.append(Claim(named(person, "person", *([term] if term else [])), KIN[term][0], running)
                         if term is not None and running is not None else Claim(named(person, "person")))
            running, previous = named(person, "person"), clause
            continue
        nickname = _NICKNAMED.match(clause)
        if nickname is not None and nickname.group("name") not in KIN and not not_a_name_zh(nickname.group("name")):
            # 现在的丈夫姓周，大家都叫他老周，在昆钢…: the one the clause before spoke of, by the name everyone uses
            name, kin = nickname.group("name"), _KIN_BEFORE.match(previous)
            if running is not None and running.name and running.kind == "person":
                found.append(Claim(named(running.name, "person", name)))
            elif kin is not None:
                term, given = kin.group("term"), kin.group("given")
                found.append(Claim(named(given, "person", term, f"我{term}", name) if given else
                                   named(name, "person", term, f"我{term}"), KIN[term][0], ME))
                running = named(given or name, "person")
            previous = clause
            continue
        previous = clause
        another = _ANOTHER_NAME.match(clause)
        if another and running is not None and running.name and running.kind == "person" and \
                another.group("name") not in KIN:
            found.append(Claim(named(running.name, "person", another.group("name"))))
            continue
        introduced = _naming(clause, text)
        if org_said and not any(c.subject is ME and c.relation in ("works_at", "interns_at") for c in found):
            # 阿杰嗰间公司叫顺通物流，老板系佢表哥 / Kopi Lab开了分店 老板又找我画墙画: after an organisation that
            # is not the user's job, 老板 said alone is its boss
            introduced = [c for c in introduced if not _is_bare_boss(c)]
        running = _subject_of(clause, running, introduced)
        if running is not None and (work := _WORK.search(clause)) and not _wished(clause, work.start()) and \
                (somewhere := _described(work.group("org"))) is not None:
            described = (running, _VERB_KIND.get(work.group("verb"), "works_at"), somewhere)
        opened = _OPENED.search(clause) if running is not None else None
        if running is not None and opened is not None and not _wished(clause, opened.start()):
            places = tuple(w for w in rjieba.cut(opened.group("place") or "") if places_zh.is_place(w))
            business = organisations_zh.Placed(opened.group("kind"), places, opened.group("kind"))
            if opened.group("org"):
                org = named(opened.group("org"), "organisation")
                found += [Claim(running, "owns", org), *[Claim(org, "located_in", named(places[-1], "place"))
                                                          for _ in places[-1:]]]
            else:
                described = (running, "owns", business)  # named in the clause after: 叫草原情
        found += introduced
        if wished_before and clause.startswith(_GOES_ON):
            continue  # 打算直接找工作，去教育科技公司做课程研发: the plan goes on into the clause it opens
        wished_before = _WISH.search(clause) is not None
        if running is not None and running.held is not None and running.owner is ME:
            found.append(Claim(running))  # 弟弟来上海出差: the brother is someone, whatever else the clause says
        if running is not None:
            found += _relations(clause, running) + _endings(clause, running)
        at_university = _AT_UNIVERSITY.search(clause) if running is not None else None
        if running is not None and at_university is not None and not _wished(clause, at_university.start()):
            places = tuple(w for w in rjieba.cut(at_university.group("place") or "") if places_zh.is_place(w))
            studying = (running, places)
        parents = _PARENTS.match(clause) or (_THEM.match(clause) if parents_before else None)
        if parents is not None and not _wished(clause, parents.end()):
            # 我爸妈都在乐山 / 跟爸妈说了 他们在宜昌: what follows is said of each parent
            rest = clause[parents.end():]
            for term, relation in (("妈", "mother_of"), ("爸", "father_of")):
                found += [c for c in _relations(rest, kin_of(ME, relation, f"我{term}")) if c.relation in _HOMES]
        parents_before = _PARENTS_SAID.search(clause) is not None
        orgs = [ref for claim in found[said_before:] for ref in (claim.object,) if ref is not None
                and ref.kind == "organisation"]
        org_said = org_said or bool(orgs) or _SPEAKS_OF_AN_ORG.search(clause) is not None
        called = _CALLED.fullmatch(clause)
        if called is not None and org_before is not False:
            org_before = named(called.group("name"), "organisation")  # 一家新媒体公司 叫熊猫传媒 (在高新区)
        else:
            org_before = orgs[-1] if orgs else (_SPEAKS_OF_AN_ORG.search(clause) is not None
                                                and _SPEAKS_OF_A_HOME.search(clause) is None)
    # Names in passing first, so that the relations' subjects (王姐说她在腾讯上班) are known; not a name a rule above
    # introduces with its kind (我们家鹦鹉小绿 is a pet).
    claimed = {ref.name for claim in found for ref in (claim.subject, claim.object)
               if ref is not None and ref.name and ref.kind}
    passing = [claim for clause in clauses for claim in entity_names_zh.claims(clause)
               if claim.subject.name not in claimed]
    return passing + found
