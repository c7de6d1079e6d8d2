"""What a reply must not be told any more: an older memory that a newer one says has changed.

People tell a change the way they talk, not as a correction of a stored fact: "kabir and I are done" weeks after "this
guy Kabir, we've been talking every night"; "No soda! Thirty days clean" after "probably three Cokes a day";
"因为我调岗了！从ICU调到门诊了" after "我在ICU当护士 三班倒". Extraction catches some of these and updates the fact
(core/offline.py); the messages kept as evidence, and what extraction missed, stay as they were said. So before a
reply gets its memories, a candidate is left out when a newer candidate (1) says that something changed — it stopped,
ended, was given up, moved, replaced, sold, died, recovered — and (2) speaks of the same thing: they share a word
that is not common in the user's memories (a name, a thing), or words the lexicon joins (core/lexicon.py). People
also say a change in other words than the fact ("两个礼拜没碰烟了" after "抽烟 一天一包", "pulled out of the race"
after "training for Oceanside"): then the question joins them, when it asks about the thing the change's own clause
names and the older memory speaks of (`asked_of_both`). That leaves an older memory out only for questions about
the part that changed; it still answers questions about the rest of what it says.

What is not a change, though it holds a word of change: a wish, a plan, a doubt or a near miss ("想放弃",
"要不要辞职", "thinking about quitting"), a word of change inside another word or with an object that makes it
another verb ("差不多了", "老板也分了几个"), a participle that describes ("a retired symphony player"). And a
change to one person's life changes nothing of another's, nor of what the person it names does, unless it is said
of them ("my brother moved to Denver" and where the sister lives; "我表姐婚期改了" and her job): `changed_subject`,
`other_people`.

On the development half of bench/context.py before this: a superseded value was injected for 14 of 31 Chinese and
19 of 27 English questions asked after a change. A question about the past ("what did I use to…", "我以前…") keeps
the older memories: it asks for them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime
from typing import NamedTuple

import numpy as np

from jiyi.core import entity_rules_en, entity_rules_zh
from jiyi.core.intent import asks_about_now
from jiyi.core.traditional_zh import to_simplified
from jiyi.errors import Conflict
from jiyi.records import Category, Event, MemoryRecord, Scope, SearchHit, revise
from jiyi.stores.base import MemoryIndex
from jiyi.text import analyze_for_index, has_cjk, segment, starts_a_word, stem

# Words that say a state, a habit, a relationship or a plan came to an end or was replaced (a closed class of
# verbs and phrases of change, not any one topic's words).
_CHANGED_EN = re.compile(
    r"\b(?:no longer|not any ?more|anymore|any more|no more|stopp?(?:ed|ing)|quit(?:ting)?|gave up|given up|"
    r"giving up|broke up|broken up|split up|(?:are|were|is|was|'re) (?:done|over|finished)|ended(?! up)|ending it|"
    r"called (?:it )?off|cancel+ed|moved (?:out|away|to|in)|moving (?:out|to)|relocated|switched|swapped|"
    r"sold (?:my|our|the|it|them|off|up)|"
    r"replaced|instead|changed (?:to|jobs?|my|our|the)|shifted (?:to|out|away|back|house)|transferred|promoted|"
    r"resigned|retir(?:ed|ing)|fired|"
    r"laid off|let go|pulled out|withdr[ae]w|postponed|rescheduled|pushed back|brought forward|"
    r"handed in my notice|new job|died|passed away|put (?:her|him|it) down|lost (?:her|him)|recovered|healed|"
    r"cleared up|all better|got rid of|dropped out|weaned|cut out|"
    # "off" says a habit ended after a verb of being or going ("i'm off the pills", "been off sugar"), not as a
    # preposition of place ("fishing off the pier" had made a message about a boat a change of a fishing trip).
    r"(?:(?<=\bi'm )|(?<=\bam )|(?<=\bbeen )|(?<=\bwent )|(?<=\bgone )|(?<=\bgoing )|(?<=\bstayed )|(?<=\bstaying )|"
    r"(?<=\bgot )|(?<=\bcame )|(?<=\bcoming ))off (?:the|alcohol|sugar|caffeine|meat)|"
    r"(?:\d+|thirty|twenty|ten|two|three|four) (?:days|weeks|months) (?:clean|sober|without))\b",
    re.IGNORECASE)
_CHANGED_ZH = re.compile(
    r"不再|再也不|不[^，。！？,.!?\s]{1,6}了|没再|停了|停掉|戒了|戒掉|放弃|不干了|辞职|离职|辞了|调岗|调到|换了|换成|"
    r"改成|改为|改学|改去|搬到|搬去|搬走|搬出|搬家|卖了|卖掉|分手|离婚|去世|过世|取消|黄了|泡汤|"
    r"痊愈|康复|出院|好利索|断奶|退休|转行|跳槽|结束了|到期了|没碰|"
    # Verbs that say a change only when nothing follows them in their clause: "我们分了" (broke up), "他走了",
    # "工作没了"; with an object they say something else ("老板也分了几个", "走了两个小时", "没了解").
    r"(?:分了|走了|没了)(?=[吧啊呀啦呢嘛哦。！？，；,.!?;~\s]|$)")
# A wish, a plan, a doubt, a fear or a near miss is not a change ("想放弃", "琢磨着以后不开车了", "要不要辞职", "差点
# 分手", "thinking about quitting", "almost gave up"): the word of change is said, the thing has not changed. Read in
# the clause before the word (in Chinese the wish may stand a few words before it). Not 要 alone: "下个月要搬到朝阳"
# is a change with a date, which the memory's time cannot tell from one that has come.
_NOT_YET_ZH = re.compile(r"想|要不要|打算|准备|考虑|琢磨|寻思|犹豫|纠结|以后|将来|差点|差一点|怕|担心|万一|如果|要是|"
                         r"会不会|该不该|能不能|可能|也许|说不定")
_CLAUSE_END = re.compile(r"[，。！？；,.!?;\n]")
_NOT_YET_EN = re.compile(
    r"\b(?:want(?:s|ed)? to|wanna|thinking (?:about|of)|think(?:ing)? about|plan(?:ning)? (?:to|on)|might|(?-i:may)|"
    r"should|considering|about to|almost|nearly|if|whether|afraid|scared|worried)"
    r"(?: (?:i|we|he|she|they|just|have to|be|not))*\s*$",
    re.IGNORECASE)
_DETERMINER_EN = re.compile(r"\b(?:a|an|the|my|our|his|her|their|your)\s+$", re.IGNORECASE)
# "不…了" says "no longer" when 不 is a word of its own (不, 不想, 不来), not a character inside another word:
# "差不多了" (almost), "受不了了" (can't stand it), "对不起了".
_NO_LONGER_ZH = re.compile(r"不[^，。！？,.!?\s]{1,6}了")
# Nor when 不 begins a word that negates nothing: a conjunction or an adverb ("不过下山吃了一碗咸豆浆 值得了": but;
# 不管, 不然, 不仅, 不停, 不少).
_NOT_A_NEGATION_ZH = re.compile(r"不[过過管然如仅僅但论論光料止少久断斷停只错錯]")
# Nor when what stops is the talk itself: a verb of saying alone after 不 closes this conversation ("不说了 他们叫我
# 打扑克去了", "不跟你聊了"); it tells no change of the life it speaks of. With an object it may ("我俩不说话了").
_STOPS_TALKING_ZH = re.compile(r"不(?:[跟和同与][你您])?多?[说聊讲唠扯]了")
# Weaker signs of change, counted only when the question asks about what their clause speaks of (`asked_of_both`),
# never on the write path: a rescheduled plan ("婚期改了 推到十月"; "目标院校改了" also said the major, which did
# not change). Not "finally" / 终于: "房东终于松口了，说可以养猫" answers "房东同意了没" with the older "房东不让"
# beside it as what the question asks about (bench/zh_retrieval.py counts both), and "I finally watched Dune"
# changes no fact.
_MOVED_EN = re.compile(r"\b(?:pushed (?:it |the \w+ )?(?:back )?to|bumped (?:it |the \w+ )?to|delayed|"
                       r"new (?:date|time|venue))\b", re.IGNORECASE)  # "ROM confirmed new date 20 march"
_MOVED_ZH = re.compile(r"改了|改期|推迟|推到|延期|新日期|新的日子")
# A question about the past asks for the older memories.
_ASKS_ABOUT_BEFORE = re.compile(
    r"\b(?:used to|use to|before|previously|originally|at first|back then|back when|in the past|formerly|last year)\b|"
    r"以前|之前|原来|过去|曾经|当初|那时|起初|一开始|去年",
    re.IGNORECASE)


# Words that say when or how, not what: two memories sharing only these are not about the same thing. Nor is the
# word extraction writes for the user in every fact ("User quit the gym", "User loves pizza"; 用户): in a store too
# small for document frequencies to tell it is common (COMMON_TOPIC_MIN_STORE), it made any two facts one subject.
# Nor a verb of motion that goes with any subject: "went" joined "pepper died … went downhill fast" to "the crew
# went out … I got a ginger ale", and the reply about going to a bar lost that the user is sober (bench/context.py).
# Nor a verb of beginning (as 开始: "joined badminton" and "joined on monday", a job), a word of praise or blame that
# goes with anything ("hayfever is mad down here" / "it'd be mad to turn it down"), or the particles of the languages
# people mix into English chat (Singlish "liao", Hinglish "toh", Taglish "naman"; those of two letters: _particle).
GENERIC_WORDS = frozenset(stem(w) for w in """
    user 用户
    today yesterday tomorrow tonight now lately recently week weekend day days month year morning evening night time
    afternoon noon midnight mornings evenings nights afternoons
    times thing things stuff lot bit really actually still though lol haha omg ok okay yeah yep nope sure well
    think thought know feel felt want like love say said tell told guess mean good great bad nice little big new old
    won given anyth anywher someth someon everyon everyth noth gonna wanna kinda way back last next first ago soon later
    go goe went gone come came get got start started began begin join joined
    mad crazy insane amazing awesome terrible awful weird super pretty
    lah leh lor liao meh sia hor hai nahi toh bhi yaar naman lang yung mga
    今天 昨天 明天 今晚 昨晚 现在 最近 这周 周末 上周 下周 礼拜 星期
    早上 晚上 中午 下午 上午 傍晚 凌晨 半夜 深夜 时候 时间 一天 天天 每天 好久 这个 那个
    事情 东西 感觉 觉得 知道 喜欢 真的 其实 还是 有点 一点 一直 已经 开始 终于 终究 突然 今年 去年 明年
""".split())


def _is_said(match: re.Match[str], text: str) -> bool:
    """Whether a word of change says that something changed, not that it may (see _NOT_YET_ZH)."""
    before = text[:match.start()]
    if has_cjk(text):
        before = _CLAUSE_END.split(before)[-1]
        if _NO_LONGER_ZH.fullmatch(match.group()) and (
                _STOPS_TALKING_ZH.fullmatch(match.group()) or _NOT_A_NEGATION_ZH.match(match.group())
                or not starts_a_word(text, match.start())):
            return False
        return not _NOT_YET_ZH.search(before)
    # "a retired symphony player", "the cancelled flight": a participle before a noun describes, it tells no change.
    return not _NOT_YET_EN.search(before) and not (match.group().endswith("ed") and _DETERMINER_EN.search(before))


def _says(cue: re.Pattern[str], text: str) -> bool:
    return any(_is_said(match, text) for match in cue.finditer(text))


def says_it_changed(text: str) -> bool:
    """Whether a memory tells that something ended or was replaced."""
    return _says(_CHANGED_ZH if has_cjk(text) else _CHANGED_EN, text)


def says_it_moved(text: str) -> bool:
    """Whether a memory tells, in weaker words, that a plan moved (see _MOVED_EN)."""
    return _says(_MOVED_ZH if has_cjk(text) else _MOVED_EN, text)


# Clauses end at punctuation; in Chinese chat, a space between two characters ends one too ("对了她婚期改了
# 推到十月一号了 男方那边奶奶要做手术 我伴娘还是当": people type spaces where they would write commas).
_CLAUSE = re.compile(r"[，。！？；,.!?;\n]+|(?<=[\u3400-\u9fff])\s+(?=[\u3400-\u9fff])")


def what_changed(text: str, beside: int = 1, moved: bool = False) -> str:
    """The part of a memory that says the change: each clause that holds a word of change, with the `beside`
    clauses just before and after it ("No soda! Thirty days clean." / "因为我调岗了！从ICU调到门诊了"). What else the
    message says ("搬过来两周了…再也不用挤地铁了" is about the commute, not the sister mentioned before) did not
    change. `moved`: a clause that says a plan moved counts too. A clause that turns to another subject ("also",
    "btw", 另外, 对了) is a border: "next march, after our ROM. also i moved out liao" changed where the user lives,
    not the date of the wedding."""
    clauses = [c.strip() for c in _CLAUSE.split(text) if c.strip()]
    cues = [_CHANGED_ZH, _MOVED_ZH] if has_cjk(text) else [_CHANGED_EN, _MOVED_EN]
    cues = cues if moved else cues[:1]
    around: set[int] = set()
    for i, clause in enumerate(clauses):
        if not any(_says(cue, clause) for cue in cues):
            continue
        around.add(i)
        for j in range(i - 1, i - beside - 1, -1):  # back to the clause that turned to this subject
            if j < 0 or _TURNS_TO_ANOTHER.match(clauses[j + 1]):
                break
            around.add(j)
        for j in range(i + 1, i + beside + 1):  # on to the clause that turns away from it
            if j >= len(clauses) or _TURNS_TO_ANOTHER.match(clauses[j]):
                break
            around.add(j)
    return " ".join(clauses[j] for j in sorted(around))


# Words that open a clause on another subject than the one before (a closed class of discourse markers).
_TURNS_TO_ANOTHER = re.compile(
    r"(?:also|btw|by the way|anyway|anyways|oh and|and also|plus|in other news|unrelated|other than that)\b|"
    r"另外|还有|還有|对了|對了|顺便|順便|话说|話說|同埋|仲有|另一件事", re.IGNORECASE)


def asks_about_before(question: str) -> bool:
    return bool(_ASKS_ABOUT_BEFORE.search(question))


def _words(text: str) -> set[str]:
    # Traditional characters read as simplified: 說 and 沒 are function words as 说 and 没 are ("跟你說 我咖啡戒了"
    # had made "她說是煮給我哥的 … 他在竹科當工程師" a change of the same subject by their 說).
    return set(analyze_for_index(to_simplified(text)).terms.split())


# On an older memory: the id of a newer one that said it changed (written when the newer one is kept; write_path).
CHANGED_BY = "changed-by:"


def changed_by(record: MemoryRecord) -> list[str]:
    return [tag[len(CHANGED_BY):] for tag in record.tags if tag.startswith(CHANGED_BY)]


def topic_words(text: str, common: Callable[[str], bool]) -> set[str]:
    """The words of a memory that can tell what it is about: not stopwords, not generic, not common in the store,
    not a Chinese word of one function character (没, 不, 去: "三个礼拜没碰咖啡了" and "烦恼都没了" share no thing)."""
    return {w for w in _words(text)
            if w not in GENERIC_WORDS and not common(w) and not (len(w) == 1 and w in _FUNCTION_CHARS)
            and not _particle(w)}


def _particle(word: str) -> bool:
    """A Latin word of one or two letters that names no relation: in the languages people mix into English chat these
    are particles and prepositions (Taglish "sa", Singlish "la", "ah"), which two memories share whatever they say
    ("no more traffic sa EDSA" changed nothing of "first week sa makati condo")."""
    return len(word) <= 2 and word.isascii() and word.isalpha() and _relation(word) is None


# Words for a person: kinship and roles ("表姐", "my boss"), each standing for its relation (妈 / 妈妈 / 母亲, "mom" /
# "mother": one person).
_RELATIONS = {stem(word): relation for word, (relation, _) in (*entity_rules_en.KIN.items(),
                                                               *entity_rules_zh.KIN.items()) if " " not in word}
_RELATIONS |= {stem(word): relation for word, relation in entity_rules_en.PARENT_NAMES.items()}
_RELATIONS |= {word: word for word in entity_rules_zh.UNIQUE if word not in _RELATIONS}
# English names: a capitalised word inside a sentence, not after a word that leads to a place or a time ("moved to
# Denver", "in May"), nor a month or a day. Chinese names are left out: the tagger reads 双休 and 白班 as names.
_NAME_EN = re.compile(r"(?<=[a-z,;] )(?<!\b(?:in|to|at|on|of) )(?<!\b(?:from|near|into) )(?<!\baround )[A-Z][a-z]+")
_NOT_NAMES_EN = frozenset(stem(w) for w in """january february march april may june july august september october
    november december monday tuesday wednesday thursday friday saturday sunday""".split())


class People(NamedTuple):
    kin: frozenset[str]  # the words for a relation, as topic_words writes them
    relations: frozenset[str]  # mother_of, sister_of, 老板 …
    names: frozenset[str]
    words: frozenset[str]  # all the text's words


def _relation(word: str) -> str | None:
    # 我妈, 我老公: the tokenizer keeps the possessive on.
    return _RELATIONS.get(word) or (_RELATIONS.get(word[1:]) if word[:1] == "我" else None)


def people_in(text: str) -> People:
    """Who a text speaks of, by relation and by name (see other_people)."""
    words = _words(text)
    kin = {w for w in words if _relation(w)}
    names = set() if has_cjk(text) else {w for name in _NAME_EN.findall(text) for w in _words(name)} - _NOT_NAMES_EN
    return People(frozenset(kin), frozenset(r for w in kin if (r := _relation(w))), frozenset(names),
                  frozenset(words))


def other_people(one: People, other: People) -> bool:
    """Whether two memories speak of different people: both by relation and none in common (a brother and a sister),
    and neither names anyone the other speaks of ("my brother Theo", "Theo's girlfriend"). A change to one person's
    life changes nothing of another's ("my brother just moved to Denver" and where the sister lives). Names alone do
    not tell people apart: a capitalised word is as often a team, a holiday or a drink ("Tucker", "Easter",
    "Cokes")."""
    if one.names & other.words or other.names & one.words:
        return False
    return bool(one.relations and other.relations and not one.relations & other.relations)


def _said_of(part: str, people: People) -> set[str]:
    """The relation words that are what a word of change is said of: the last topic word before it in its clause,
    past the person's name ("Coach Williams is retiring", "我表姐走了"; not 表姐 in "我表姐婚期改了", where 婚期
    changed)."""
    cues = (_CHANGED_ZH, _MOVED_ZH) if has_cjk(part) else (_CHANGED_EN, _MOVED_EN)
    said_of: set[str] = set()
    for clause in _CLAUSE.split(part):
        for cue in cues:
            for match in cue.finditer(clause):
                before = [w for w in segment(to_simplified(clause[:match.start()])) if w not in GENERIC_WORDS]
                while before and before[-1] in people.names and before[-1] not in people.kin:
                    before.pop()
                if before and before[-1] in people.kin:
                    said_of.add(before[-1])
    return said_of


def changed_people(text: str) -> People:
    """Whom a change is said of: the people of its text, by the relations a word of change is said of only ("my
    brother Theo just moved to Denver": the brother; not the boyfriend in "jess moved out to live w her boyfriend",
    nor the grandmother in "她婚期改了 男方那边奶奶要做手术")."""
    people = people_in(text)
    said_of = frozenset(_said_of(text, people))
    return people._replace(kin=said_of, relations=frozenset(r for w in said_of if (r := _relation(w))))


def changed_subject(part: str, common: Callable[[str], bool]) -> set[str]:
    """The topic words of the part of a change that says it (what_changed), less the people it names unless the
    change is said of them: "kabir and I are done", "我表姐走了" change what was said of the person; in "my
    sister's wedding moved to June" / "表姐婚期改了" the wedding changed, and what the sister does for a living
    still stands. What a clause of time names is when, not what ("考试那阵停了": the ukulele stopped during the
    exams; the exam did not change)."""
    part = _WHEN_ZH.sub(" ", part)
    people = people_in(part)
    return topic_words(part, common) - (people.kin - _said_of(part, people))


# A Chinese phrase of time: a few characters before a word that makes them a time ("考试那阵", "住院那会儿",
# "搬家的时候", "疫情期间").
_WHEN_ZH = re.compile(r"[\u3400-\u9fff]{1,4}?(?:那阵子?|那会儿?|那段时间|那几天|期间|的时候)")


def same_subject(new: set[str], old: set[str], joined: Callable[[str, str], bool] | None = None,
                 said: set[str] | None = None) -> bool:
    """Whether two memories' topic words meet: one in common, or one of the clause that says the change (`said`,
    all of `new` if not given) and one of the older memory's that the lexicon puts in one concept. A concept is wider
    than a thing (五一 / 假期, 打针 / 诊所): joined through a clause beside the change, it took
    "五一那个计划变了 不去云南了" for a change of "她在幼儿园当老师 … 假期就想去躺平", and
    "小时候打针休克过一次 后来换了别的药" for one of "去诊所看了下，扁桃体发炎" (two answers lost on
    bench/context.py's development half); the clause of change names what changed."""
    if new & old:
        return True
    return joined is not None and any(joined(a, b) for a in (new if said is None else said) for b in old)


# Characters that say no subject on their own: function words, negations, numbers, units of time and count, verbs
# that stand for any verb (做, 弄, 搞, 干), the verb that names or bids anyone (叫: "好朋友叫果果", "他们叫我打扑克"),
# noun suffixes (子, 儿, 头: 肚子 and 孩子 share no thing). What is left
# of a Chinese word's characters names a thing (烟 in 抽烟 and 碰烟, 婚 in 婚礼 and 婚期).
_FUNCTION_CHARS = frozenset(
    "的了着过吗呢吧啊呀哦嗯哈呗啦嘛么之而与及和跟同或是在也都就还又很太更最我你他她它们自己这那些么怎谁为"
    "把被给让对向从到以于上下里中个得地请能会可要想说问不没无别未非一二两三四五六七八九十百千万几半每各某"
    "年月日天号周时分点次回遍多少大小老有人家去来做弄搞干啥子儿头叫"
    "冇唔咗嘅喺佢哋啲咁")  # the same in Cantonese (冇 = 没, 咗 = 了, 嘅 = 的, 喺 = 在, 佢 = 他)


def subject_marks(words: set[str]) -> set[str]:
    """The words, and the characters of Chinese words that name a thing: a change and what it changed are often
    said in other words of one character (抽烟 / 碰烟, 住院 / 出院, 婚礼 / 婚期)."""
    return words | {c for w in words if len(w) > 1 and has_cjk(w) for c in w if c not in _FUNCTION_CHARS}


def asked_of_both(asked: set[str], change: set[str], old: set[str], about_now: bool,
                  joined: Callable[[str, str], bool] | None = None) -> bool:
    """Whether the question (its subject marks: `asked`) asks about the very thing a change and an older memory
    both speak of: one word or character of the question's that each holds, or, asked how things are now, one the
    question shares with each, or a word the lexicon joins to one of the question's ("still racing Oceanside?" /
    "pulled out of the race" / "training for Oceanside"; "where am I working these days?" / "got laid off" / "a
    fintech startup"). A character in common is too weak a sign on its own (an older memory that shares 期 or 烟 with
    a change may say something else, still true); the question names the part that changed, so an older memory that
    also says other things is left out only for questions about what changed. The lexicon joins a category word to
    its members ("daughter" / "children"): not asked about now, that is too loose ("where does my daughter live?"
    meets "she's driving up with the children for Easter instead")."""
    if not about_now:
        return bool(asked_in(asked, change) & asked_in(asked, old))
    return bool(asked_in(asked, change, joined)) and bool(asked_in(asked, old, joined))


def asked_in(asked: set[str], words: set[str], joined: Callable[[str, str], bool] | None = None) -> set[str]:
    """The question's subject marks that a memory's words hold, as they are or joined by the lexicon."""
    marks = subject_marks(words)
    return {mark for mark in asked
            if mark in marks or (joined is not None and any(joined(mark, other) for other in marks))}


def may_say_a_change(text: str) -> bool:
    """Whether a memory may say that an older one changed: in words of change, or that a wait is over."""
    return says_it_changed(text) or says_it_moved(text)


def supersedes(new: MemoryRecord, old: MemoryRecord) -> bool:
    """Whether `new` could say `old` changed: it says a change, and was said after."""
    return new.id != old.id and said_at(old) < said_at(new) and says_it_changed(new.content)


def superseded(hits: Sequence[SearchHit], question: str, common: Callable[[str], bool],
               joined: Callable[[str, str], bool] | None = None,
               near: Callable[[MemoryRecord, MemoryRecord], bool] | None = None) -> set[str]:
    """The ids of the hits a newer hit says have changed (see the module docstring and `superseded_by`)."""
    return set(superseded_by(hits, question, common, joined, near))


class Replacement(NamedTuple):
    by: str  # the id of the newest hit that says the older one changed
    asked: bool  # the question asks about what it says changed: it answers what the older one was found for


def superseded_by(hits: Sequence[SearchHit], question: str, common: Callable[[str], bool],
                  joined: Callable[[str, str], bool] | None = None,
                  near: Callable[[MemoryRecord, MemoryRecord], bool] | None = None) -> dict[str, Replacement]:
    """For each hit a newer hit says has changed, what replaced it (see the module docstring). `common(word)`: the
    word is in too many of the user's memories to tell a topic (家, "work"); `joined(a, b)`: the lexicon joins two
    words; `near(new, old)`: the two are close in meaning too (a word in common is not enough on its own: "she's
    driving up with the children for Easter instead" does not change where the daughter lives)."""
    if asks_about_before(question):
        return {}
    changes = sorted((h.record for h in hits if may_say_a_change(h.record.content)), key=said_at, reverse=True)
    if not changes:
        return {}
    words = {h.record.id: topic_words(h.record.content, common) for h in hits}
    changed = {c.id: changed_subject(what_changed(c.content), common) for c in changes if says_it_changed(c.content)}
    # What the question may find a change by: the clause that says it, not the clauses beside it ("had to cancel
    # Tampa. Pam's coming in May instead, for Marcus's graduation" changed the trip, not the graduation).
    said_changed = {c.id: changed_subject(what_changed(c.content, beside=0, moved=True), common) for c in changes}
    asked = subject_marks(topic_words(question, common))
    now = asks_about_now(question)
    people = {h.record.id: people_in(h.record.content) for h in hits}
    said_of = {c.id: changed_people(c.content) for c in changes}

    def changes_it(change: MemoryRecord, old: MemoryRecord) -> bool:
        if change.id == old.id or said_at(change) <= said_at(old):
            return False
        if other_people(said_of[change.id], people[old.id]):
            return False
        if change.id in changed and same_subject(changed[change.id], words[old.id], joined,
                                                 said_changed[change.id]) and (near is None or near(change, old)):
            return True
        return asked_of_both(asked, said_changed[change.id], words[old.id], now, joined)

    def asked_of(change: MemoryRecord) -> bool:  # as asked_of_both reads the question
        return bool(asked_in(asked, said_changed[change.id], joined if now else None))

    gone: dict[str, Replacement] = {}
    for hit in hits:
        change = next((c for c in changes if changes_it(c, hit.record)), None)
        if change is not None:
            gone[hit.record.id] = Replacement(change.id, asked_of(change))
    return gone


def put_in_place(hits: Sequence[SearchHit], gone: dict[str, Replacement]) -> list[SearchHit]:
    """The hits without those `gone` says have changed. What replaced one the question asks about takes its place
    (its rank and relevance), as a marked memory's replacement does (read_path): it answers what the older one was
    found for, which it may match less well in words ("am I still racing Oceanside?" finds the training plan that
    names Oceanside before "pulled out of the race"); left at its own rank, it can fall below the bar once the older
    one is out, and the question gets nothing. Otherwise it keeps its own place: found for another reason, an older
    memory's relevance says nothing of the change (a question about the user's father found a grandmother's fall)."""
    by_id = {h.record.id: h for h in hits}

    def standing_for(record_id: str) -> str:
        while record_id in gone and gone[record_id].asked:
            record_id = gone[record_id].by
        return record_id

    # A memory that stands for several takes the first one's place with the most relevant one's relevance: the one
    # that cleared the bar may not be the one ranked first ("跑单少了" standing for "跑了52单" and "单都没法跑").
    most_relevant: dict[str, SearchHit] = {}
    for hit in hits:
        record_id = standing_for(hit.record.id)
        if record_id not in most_relevant or hit.relevance > most_relevant[record_id].relevance:
            most_relevant[record_id] = hit
    standing: list[SearchHit] = []
    placed: set[str] = set()
    for hit in hits:
        record_id = standing_for(hit.record.id)
        if record_id in gone or record_id in placed:
            continue
        placed.add(record_id)
        newer, best = by_id[record_id], most_relevant[record_id]
        if newer is hit and best is hit:
            standing.append(hit)
        else:
            standing.append(replace(hit, record=newer.record, relevance=max(hit.relevance, best.relevance),
                                    details=best.details if best.relevance > hit.relevance else hit.details))
    return standing


def said_at(record: MemoryRecord) -> datetime:
    """When the memory was said: the time of its first dated source message. Not the time its words name ("we
    booked tickets for 10th May", said in February, is older than "we changed the tickets to July" said in March);
    the first, not the last, source: a summary of a stretch of chat, or a fact later said again, holds what was said
    from then on, which a change said since may have changed. A memory without a dated source falls back on its
    event time, then on when it was stored."""
    sources = [ref.created_at for ref in record.provenance if ref.created_at is not None]
    return min(sources) if sources else record.event_time or record.created_at




# How many of the nearest older memories a change is compared with (by meaning and by words, each).
CHANGE_NEIGHBOURS = 10
# A word in more than this share of the store's memories says too little to tell that two memories speak of the same
# thing (家, "work").
COMMON_TOPIC_SHARE = 0.2
COMMON_TOPIC_MIN_STORE = 50


def common_words(store: MemoryIndex, texts: Sequence[str], addressee: str | None = None) -> Callable[[str], bool]:
    """`common(word)` for the words of these texts, from the store's document frequencies (one query). The words of
    the assistant's name (`addressee`, a client's char_name) count as common whatever their frequency: a companion's
    user opens message after message with it ("小雪啊海南不去了" / "小雪 我这冬泳啊 算是告别了"), and it names no
    subject the two share."""
    words = sorted({w for text in texts for w in _words(text)})
    frequencies, total = store.document_frequencies(words)
    named = _words(addressee) if addressee else set()
    return lambda word: word in named or (
        total >= COMMON_TOPIC_MIN_STORE and frequencies.get(word, 0) > COMMON_TOPIC_SHARE * total)


def mark_changed(store: MemoryIndex, scope: Scope, records: Sequence[MemoryRecord], vectors: np.ndarray,
                 now: datetime, joined: Callable[[str, str], bool] | None = None) -> list[str]:
    """For each of these new memories (the user's messages just kept) that says something changed, mark the older
    memories of its scope that speak of the same thing as changed by it: a CHANGED_BY tag and an UPDATE history row
    whose reason holds what replaced them. A reply is then given the newer one in their place (read_path), even when
    only the older one matches the question ("am I still vegan?" finds "I'm vegan", not "doc talked me into eating
    fish again"). Returns the ids marked."""
    marked: list[str] = []
    for record, vector in zip(records, vectors, strict=True):
        if record.role != "user" or not says_it_changed(record.content):
            continue
        # The nearest in meaning only: a word in common with a memory on another subject ("视频" in a call with a
        # girlfriend and in a recorded talk) is not enough.
        near = {h.memory_id for h in store.vector_search(scope, vector, CHANGE_NEIGHBOURS)}
        older = [r for r in store.get_many(sorted(near - {record.id})).values()
                 if r.category not in (Category.EPISODE, Category.SYSTEM) and supersedes(record, r)
                 and record.id not in changed_by(r)]
        if not older:
            continue
        common = common_words(store, [record.content, *(r.content for r in older)])
        new_words = changed_subject(what_changed(record.content), common)
        said = changed_subject(what_changed(record.content, beside=0), common)
        new_people = changed_people(record.content)
        for old in older:
            if other_people(new_people, people_in(old.content)) or not same_subject(
                    new_words, topic_words(old.content, common), joined, said):
                continue
            marked_old, history = revise(old, Event.UPDATE, now, actor_id=None, role="user",
                                         reason=f"changed later: {record.content[:300]}",
                                         tags=[*old.tags, f"{CHANGED_BY}{record.id}"])
            try:
                store.update(marked_old, None, history, expected_version=old.version)
            except Conflict:  # changed meanwhile: left as it is now
                continue
            marked.append(old.id)
    return marked
