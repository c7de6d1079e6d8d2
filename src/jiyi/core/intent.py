"""What a query asks for, where that changes what to recall.

A request for a recommendation or advice ("晚饭推荐什么？", "any ideas for a gift?") rarely names the user's
constraints, yet an answer that ignores them is wrong: recommending seafood to someone allergic to it. Such queries
bring the user's preferences and constraints along (the rules path in retrieval.py), whatever their similarity.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from jiyi.core.facts import slot_filter
from jiyi.core.question_words import opener_alternation
from jiyi.filters import Node, parse_filters
from jiyi.text import ENGLISH_STOPWORDS, has_cjk, query_terms

_ADVICE_ZH = re.compile(
    # Not a fact asked in the past or with 是…的: 读的什么专业, 是做什么工作的.
    r"推荐|建议|介绍[一几]?[个家款部本首]|(?<!是)[吃喝玩买送穿看听读做点](?![了过的])[^，。？！,.?!]{0,4}(?:什么|啥)|"
    # "where to go" asks for advice when it is a plan (该/想/可以去哪, 去哪玩/吃/比较好), not a fact (我昨天去哪了,
    # 人死了会去哪)
    r"(?:该|应该|要|可以|能|想)去哪|去哪[里儿]?(?:玩|吃|逛|旅[游行]|度假|约会|过|比较好|好)|"
    # 啥 and 咋 are how 什么 and 怎么 are said in chat (有啥办法, 寄啥好, 咋办): every form takes either.
    r"做(?:什么|啥)菜|做点(?:什么|啥)|点(?:什么|啥)|有(?:什么|啥)好|(?:什么|啥)好呢|(?:有|用)?(?:什么|啥)办法|"
    r"(?:怎么|咋)办|(?:怎么|咋)选|选哪|哪[个些种样家款][比较]*好|适合|帮我[选挑想找订安排]|出出主意|给点意见|安排一下|"
    # Asking what to watch out for is asking for advice ("爬山有啥要注意的", "要注意什么", "注意事项").
    r"注意(?:些|点)?(?:什么|啥)|要注意的|注意事项"
)
_ADVICE_EN = re.compile(
    r"\b(recommend\w*|suggest\w*|advice|advise|ideas? for|any (tips|ideas)|tips for|where should (i|we)|"
    r"what( \w+){0,2} (should|shall) (i|we)|"
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


# A question about who did something ("推荐我吃咖喱的人是谁", "who recommended the pizza") asks for a person, not for
# advice, whatever verb it names.
_ASKS_WHO = re.compile(r"谁|\bwho(?:m|se)?\b", re.IGNORECASE)


def asks_for_advice(query: str) -> bool:
    if _ASKS_WHO.search(query):
        return False
    return bool(_ADVICE_ZH.search(query) or _ADVICE_EN.search(query))


def names_what_advice_is_for(query: str) -> bool:
    """Whether a request for advice says what it is about once the asking is taken out ("今晚想点个外卖，推荐吃啥",
    "what should I bring to the potluck?"): a Chinese word of two characters or more, or an English word. A bare
    request ("有啥办法没？", "any suggestions?") names nothing a constraint could bear on."""
    rest = query_terms(_ADVICE_EN.sub(" ", _ADVICE_ZH.sub(" ", query)))
    return any(not has_cjk(term) or len(term) > 1 for term in rest)


# --- Questions about one attribute of the user ---------------------------------------------------------------------
# "我老家是哪里的？" shares no word with "用户来自贵阳", and on a small multilingual embedder the two are not close
# either: a month of chit-chat and one-off events outranks the answer. A question that asks for a single-valued
# attribute brings the memories that hold it — extracted facts carry it as a `slot:<name>` tag (core/facts.py),
# memories stored as they were said are found by the words that state it.


@dataclass(frozen=True, slots=True)
class Attribute:
    slot: str
    question: re.Pattern[str]
    stated_by: tuple[str, ...]  # index terms (jiyi/text.py) of words that state it

    @property
    def tag_filter(self) -> Node | None:
        return slot_filter(self.slot)


def _attribute(slot: str, question: str, stated_by: str) -> Attribute:
    terms = tuple(dict.fromkeys(query_terms(stated_by)))
    return Attribute(slot, re.compile(question, re.IGNORECASE), terms)


ATTRIBUTES: tuple[Attribute, ...] = (
    _attribute("hometown",
               r"老家|家乡|故乡|哪里人|哪儿人|什么地方人|来自哪|从哪[里儿]?来|(?:出生|长大)在哪|在哪[里儿]?(?:出生|长大)|"
               r"\b(?:hometown|originally|grow up|grew up|born|where (?:am|was) i from|where do i come from)\b",
               "老家 家乡 故乡 来自 出生 长大 hometown grew born originally"),
    _attribute("residence",
               r"住[在哪]|住哪|在哪[个座]?城市|哪个城市|搬到哪|搬去哪|家在哪|"
               r"\b(?:where do i live|where i live|which city|what city|live now|living now|moved to)\b",
               "住在 搬到 搬家 定居 live lives living moved move"),
    _attribute("job",
               r"(?:做|干)什么工作|什么工作|哪[里儿家个]?(?:公司|单位)?(?:上班|工作)|职业|干什么的|做什么的|"
               r"\b(?:where do i work|my job|for a living|what do i do|my work|employer|occupation)\b",
               "工作 上班 职业 入职 公司 work works job employed engineer"),
    _attribute("name",
               r"我叫什么|我的名字|我名字|\b(?:my name|what am i called)\b",
               "名字 name called"),
)


# Whose attribute a question asks for. Companion chats talk about family and friends as much as about the user:
# "我妈老家是哪的", "我邻居住在哪里", "what does her husband do for a living" must not bring the user's own hometown,
# home or job. In Chinese, within the clause of the matched words: after the last 我 (or, without one, in the whole
# clause) a person word (妈, 邻居, 老板, 你, 他…) makes it someone else's; otherwise it is the user's — also when
# the subject is left out, as chat does ("国庆回老家…", "住哪来着"). A name alone is not recognised.
_CLAUSE_END = re.compile(r"[，。？！、,.?!；;：:\s]")
_SOMEONE_ELSE_ZH = re.compile(
    r"[你您他她它]|[爸妈哥姐弟妹叔舅姨婶嫂]|爷爷|奶奶|姥姥|姥爷|伯伯|姑姑|父亲|母亲|外公|外婆|老公|老婆|丈夫|妻子|媳妇|儿子|女儿|孩子|"
    r"宝宝|朋友|对象|闺蜜|兄弟|同事|同学|领导|老板|上司|邻居|室友|舍友|老师|医生|师傅|亲戚|老人|家人|男友|女友|"
    r"爱人|另一半|老爷子|老太太|侄[子女]|外甥|孙[子女]|徒弟|客户|网友|前任")
_SOMEONE_ELSE_EN = re.compile(
    r"\b(?:he|she|they|you|his|her|their|your)\b|\w'?s\s+(?:job|work|name|hometown|home)\b|"
    r"\bmy\s+(?:mom|mum|mother|dad|father|parents?|wife|husband|spouse|hubby|fianc[ée]e?|son|daughter|kids?|"
    r"children|brother|sister|bro|sis|siblings?|friends?|bff|boss|manager|colleagues?|co-?workers?|neighbou?rs?|"
    r"partner|girlfriend|boyfriend|grand\w+|step\w+|aunt|uncle|cousins?|nephew|niece|in-laws?|roommates?|"
    r"flatmates?|landlord|teacher|doctor|ex)\b",
    re.IGNORECASE,
)


def _about_the_user(query: str, match: re.Match[str]) -> bool:
    if not any("\u4e00" <= c <= "\u9fff" for c in match.group()):
        return not _SOMEONE_ELSE_EN.search(query)
    clause = _CLAUSE_END.split(query[: match.start()])[-1]
    last_me = max(clause.rfind("我"), clause.rfind("咱"))
    return not _SOMEONE_ELSE_ZH.search(clause[last_me + 1:] if last_me >= 0 else clause)


def asked_attributes(query: str) -> tuple[Attribute, ...]:
    """The user's attributes a question asks for (usually none, sometimes one); not someone else's."""
    return tuple(a for a in ATTRIBUTES if any(_about_the_user(query, m) for m in a.question.finditer(query)))


# Episode summaries ("[2026-01-03 18:00] 聊了面试、游戏") answer questions about past conversations; for anything else
# their list of topics matches too much too weakly.
_ABOUT_CHATS = re.compile(
    r"聊[过了到]|聊天|谈[过到]|说[过起]|提[过到起]|上次|那次|之前|以前|还记得|记得吗|那天|那时|"
    r"\b(?:talk(?:ed)?|chat(?:ted)?|discuss(?:ed)?|conversation|mention(?:ed)?|last time|remember|told you|said)\b",
    re.IGNORECASE,
)


def asks_about_past_chats(query: str) -> bool:
    return bool(_ABOUT_CHATS.search(query))


# A question that asks to be reminded of something the user said ("我之前学的那个软件叫啥来着", "你还记得我爸腿脚那事
# 吗", "what was the name of my trainer again?"): the user vouches that a memory answers it, in words of their own.
_REMINDER = re.compile(
    r"还记得|记得吗|记不记得|记得不|来着|忘了吗|忘没忘|(?:跟|和|给|对)你(?:说|讲|提)过|"
    r"我(?:之前|以前|上次|那次|前几天|前阵子)?(?:说|讲|提)过|我(?:之前|以前|上次)(?:说|讲|提)|"
    r"\b(?:do|did|can|could) you (?:still )?(?:remember|recall)\b|\bremember (?:when|what|where|who|how|the|my)\b"
    r"[^.!]*\?|\bremind me\b|\bdid I (?:ever )?(?:tell|mention|say)\b|\bI (?:told|mentioned to) you\b|"
    r"\bwhat was (?:the|that|it|his|her|my)\b[^.!]*\?|\bagain\?",
    re.IGNORECASE,
)


# ...of something about the user: "明天周几来着" tries to recall a date, not a memory.
_FIRST_PERSON = re.compile(r"[我咱俺]|\b(?:I|my|me|mine|we|our|us)\b", re.IGNORECASE)


# ...or asked of the assistant's memory outright, about something ("过年那档子事你还记得不", "do you remember the
# storm?"): what it would remember is what it was told. Not the bare question ("你还记得吗？"), which names nothing.
_ASKS_ITS_MEMORY = re.compile(
    r"你(?:还)?(?:记得|记不记得)|\b(?:do|did|can|could) you (?:still )?(?:remember|recall)\b", re.IGNORECASE)
_CONTENT = re.compile(r"[\u4e00-\u9fff]|[^\W\d_]+")  # a Chinese character or an alphabetic word
# Characters that ask or point rather than name ("你还记得是多少不", "你还记得那个吗"): a question of these alone
# names nothing to look for.
_FUNCTION_CHARACTERS = frozenset("是的了吗呢吧啊呀嘛不没有个些这那哪谁啥什么怎样么多少几时候还也都就你我他她它们在")


def _asks_its_memory_about_something(query: str) -> bool:
    if not _ASKS_ITS_MEMORY.search(query):
        return False
    rest = _CONTENT.findall(_REMINDER.sub(" ", _ASKS_ITS_MEMORY.sub(" ", query)))
    named = [t for t in rest if t not in _FUNCTION_CHARACTERS and t.casefold() not in ENGLISH_STOPWORDS]
    return len(named) >= 2


def asks_to_be_reminded(query: str) -> bool:
    return bool(_REMINDER.search(query)) and (bool(_FIRST_PERSON.search(query))
                                              or _asks_its_memory_about_something(query))


# Who a question is about: the one asking ("do I…", "my sister…", "我…", "咱家…"), or the two of them ("are we…").
_ASKER = re.compile(r"[我咱俺]|\b(?:I|my|me|mine|myself|I'm|I've|I'd|I'll|we|our|us|ours|we're|we've)\b", re.IGNORECASE)


# Words of greeting, thanks and small talk (as jiyi.text analyses them): they name nothing of a user's life.
GREETINGS = frozenset(query_terms(
    "hi hii hey heya hello yo sup wassup hiya howdy morning afternoon evening night gm gn gday g'day cheers thanks "
    "thank thx ty bye goodnight nite lol lmao haha hehe omg wow hmm ugh yay nice cool good great dear sweetie hon babe "
    "mate buddy "
    "早 早上好 晚上好 中午好 下午好 晚安 早安 午安 你好 您好 在吗 在不在 嗨 哈喽 嘿 谢谢 谢啦 多谢 拜拜 再见 嗯嗯 哦哦 "
    "好哒 好滴 么么哒 笑死 哈哈哈哈"))


# The fillers of chat, which say nothing of what a message is about ("nova ur goated fr", "pls tell me a joke"), and
# the particles of the languages mixed into English chat (Singlish "lah", Hinglish "yaar").
CHAT_FILLERS = frozenset(query_terms(
    "pls plz please fr frfr ngl tbh idk imo btw rn ya yeah yep yup nah nope ok okay kk bro bruh dude lowkey "
    "literally basically honestly srsly smh tho yaar lah leh lor liao meh sia hor"))
_DRAWN_OUT = re.compile(r"(\w)\1{2,}")  # "hiii", "heyyy", "soooo"


def greets(word: str) -> bool:
    """Whether a word (as jiyi.text analyses it) is one of greeting or small talk, drawn out or not ("heyyy"): a
    greeting, a filler of chat, a stop word, or a Latin word of one or two letters ("ur", "ya", "la")."""
    forms = {word, _DRAWN_OUT.sub(r"\1", word), _DRAWN_OUT.sub(r"\1\1", word)}
    return (not forms.isdisjoint(GREETINGS) or not forms.isdisjoint(CHAT_FILLERS)
            or not forms.isdisjoint(ENGLISH_STOPWORDS) or (len(word) <= 2 and word.isascii() and word.isalpha()))


def asks_about_the_user(query: str) -> bool:
    """Whether a message asks about the user or their life — in the first person, or as a request for advice that
    their preferences and constraints should shape — rather than being small talk, a question about the assistant or
    one of general knowledge ("good night Tara", "tell me a joke", "why is the sky blue")."""
    return bool(_ASKER.search(query)) or asks_for_advice(query)


# A message that asks — by its mark, a question word or a question's ending — rather than one that tells or exclaims
# ("哈哈哈哈哈哈笑死我了", "谢谢你一直听我絮叨", "I'm so done with today lol"): the first person of an exclamation
# makes it "about the user" (asks_about_the_user), yet nothing of the user's memories answers it. Written for the
# ways people ask in chats: no question mark ("我现在还游泳吗", "what's my sister's name"), A-not-A (有没有, 去没去),
# dialect and traditional characters (咩, 么子, 伐, 几多, 甚麼).
_ASKS_ZH = re.compile(
    r"[？?]|[吗嗎呢么麼嘛没沒不伐未冇]\s*[。！!~～…\s]*$|什么|什麼|甚么|甚麼|啥|咩|乜|么子|怎|咋|哪(?!怕)|谁|誰|几(?!乎)|幾|多少|"
    r"多[大久长長远遠高重]|([\u4e00-\u9fff])[不没沒]\1|来着|來著|如何|还是|還是|是否")
_ASKS_EN = re.compile(  # a whole message: its contractions and "had" too ("whats my dads name", "had I told you")
    r"\?|^\W*(?:" + opener_alternation("what's", "whats", "who's", "whose", "where's", "how's", "had") + r")\b",
    re.IGNORECASE)


def asks_something(query: str) -> bool:
    """Whether a message is a question or a request for something (advice, a reminder), not a statement or an
    exclamation."""
    return (bool(_ASKS_ZH.search(query)) or bool(_ASKS_EN.search(query))
            or asks_to_be_reminded(query) or asks_for_advice(query))


# A question to the assistant about itself ("星星你住在哪里呀", "阿澈你会弹琴吗", "do you like sweets?"):
# companion users tell the character who it is ("助手设定是一个会弹钢琴的男生") and ask it back. Not "你说…",
# "你觉得…" or "你还记得…", which ask the assistant for an opinion or for a memory of the user's.
_ABOUT_YOU = re.compile(
    r"你(?:平时|一般|平常|最|真的|以前|小时候)?(?:会不会|会|喜欢|爱|住|叫|是|来自|多大|几岁|的名字|属|养)|"
    r"\b(?:do|are|were|can|did|have) you\b|\byour (?:name|favou?rite|hobby|hobbies|age|home)\b|\bwhere do you\b",
    re.IGNORECASE,
)
# A memory that says who the assistant is: the user told it its persona, or named it as the assistant.
_THE_ASSISTANT = re.compile(r"助手|人设|设定|\bassistant\b|\bAI\b|\bpersona\b", re.IGNORECASE)


def asks_about_the_assistant(query: str) -> bool:
    return bool(_ABOUT_YOU.search(query))


def describes_the_assistant(text: str, name: str | None = None) -> bool:
    """Whether a memory speaks of the assistant itself (its persona), by that word or by its name."""
    return bool(_THE_ASSISTANT.search(text)) or bool(name and name in text)


# A question about how things are now ("我最近心情怎么样", "我现在还跑步吗", "do I still cycle?"): of memories that
# answer it, the newest does; an older state or habit has been replaced, even when it matches the words better.
_ABOUT_NOW = re.compile(
    r"最近|现在|目前|如今|这阵子|这段时间|这些天|近来|近况|还[^，。？！,.?!]{0,6}吗|"
    r"而家|依家|現在|這陣子|這段時間|這些天|近來|近況|還[^，。？！,.?!]{0,6}[吗嗎]|"
    r"\b(?:lately|recently|these days|nowadays|currently|now|still|anymore|any more|rn|atm|at the moment|"
    r"at present)\b",
    re.IGNORECASE,
)


def asks_about_now(query: str) -> bool:
    return bool(_ABOUT_NOW.search(query))


# An English question in the present progressive asks how things stand now, or what is planned from here, without a
# word for now: "How long is my mother staying with us?" (she will live with them for good since), "when are we flying
# out for the holiday?" (the trip was pushed back).
_PROGRESSIVE_EN = re.compile(r"\b(?:am i|are we|is my|are my|is our|are our)\b[^?.!]*?\b\w+ing\b", re.IGNORECASE)


def asks_how_things_stand(query: str) -> bool:
    """Whether a question asks about the present: in words for now (asks_about_now), or, in English, in the present
    progressive. Not the simple present ("what position do i play", "我平时是不是爱看电视剧"): a habit asked about
    is as often answered by what was said first (bench/context.py: two answers lost, none of them stale)."""
    return asks_about_now(query) or bool(_PROGRESSIVE_EN.search(query))
