"""Episode summaries: one line per stretch of conversation ("[2026-01-03 18:00] 聊了面试、香山爬山"), so the assistant
can answer "what did we talk about last time".

Offline, the topics are the events and entities the user brought up. Text is cut into candidate phrases at function
words: runs of nouns, names and event verbs (rjieba's part-of-speech tags for Chinese; for English, which has no
tagger here, closed classes of function words, light verbs and time words plus suffix rules: -ly adverbs, -ed
participles, -ous/-ful/-ive adjectives). A phrase is as salient as the most repeated of its words across the user's
messages, with a little extra for names, for multi-word phrases (they are more specific) and for what the assistant
took up too; what only the assistant said is never a topic."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import pairwise

import rjieba

from jiyi.core.facts import is_chinese
from jiyi.core.messages import ChatMessage
from jiyi.text import CHINESE_STOPWORDS, ENGLISH_STOPWORDS, stem

MAX_TOPICS = 4
MAX_BODY = {True: 40, False: 80}  # characters after the stamp, Chinese / English: one glanceable line
_MAX_PHRASE = 3  # words; longer runs are clauses, not topics

# Words said in any chat whatever it is about: greetings, acknowledgements, hedges, light verbs and time words.
_CHAT_WORDS_ZH = frozenset(
    "哈哈 哈哈哈 嗯嗯 好的 谢谢 可以 没有 不是 就是 还是 但是 因为 所以 然后 觉得 感觉 现在 今天 时候 一下 真的 其实 "
    "知道 应该 已经 可能 一起 喜欢 这么 那么 怎么样 这样 那样 东西 事情 时间 问题 有点 比较 特别 非常 一直 自己 "
    "明天 昨天 后天 今晚 晚上 早上 上午 下午 中午 最近 刚才 早安 午安 晚安 你好 您好 大家 大家好 早上好 晚上好 在吗 "
    "没事 没关系 不客气 辛苦 加油 恭喜 欢迎 拜拜 再见 打算 希望 需要 开始 看到 听说 发现 认为 以为 记得 忘了 "
    "起来 出来 过来 回来 看看 试试 聊聊 聊天 不过 而且 虽然 如果 要是 好像 一样 还行 无聊 有空 约了".split()
)
_STOP_EN = ENGLISH_STOPWORDS | frozenset(
    "hey hi hello bye goodbye thanks thank thx please sorry welcome lol haha hahaha hmm omg btw idk yep nope yeah yup "
    "ok okay sure maybe perhaps anyway anyways gonna wanna gotta kinda sorta pretty super still even ever never always "
    "already again though although else instead everyone everybody someone somebody anyone anybody nobody guys "
    "thing things stuff something anything everything nothing lot lots bit way kind sort part idea question name "
    "people person one ones point fact reason "
    "time times day days week weeks month months year years weekend night nights morning mornings evening afternoon "
    "tonight today tomorrow yesterday now later soon ago right well much many last next first second third "
    "near around across behind toward towards via per since till among within without upon "
    "two three four five six seven eight nine ten twelve hundred thousand "
    "back away every another other monday tuesday wednesday thursday friday saturday sunday "
    "january february march april may june july august september october november december".split()
)
# Light verbs carry no event on their own ("went hiking" is about hiking); compared by stem, so every form counts.
_LIGHT_VERBS_EN = frozenset(stem(w) for w in (
    "be have do go get make take come see say tell feel think know want need try love like hate start begin keep "
    "let put look seem guess mean hope wish plan use find give call ask talk help wonder happen believe remember "
    "forget understand sound turn leave stay wait hear show went gone got made took came saw seen said told felt "
    "thought knew began kept found gave wrote bought brought caught left met sent spent paid sat stood heard held "
    "does doing done having being").split())
# Evaluations and sizes: they may lead a phrase ("new shoes") but are never a topic by themselves.
_MODIFIERS_EN = frozenset(
    "good great nice bad cool fun awesome amazing fine cute cheap hard easy big small little huge tiny long short old "
    "young new happy sad tired busy glad ready excited nervous scared weird crazy real whole best worst".split())
_COPULAS = frozenset("am is are was were be been being so very too really quite".split())
_ADJECTIVE_SUFFIX = re.compile(r"(?:ous|ful|ive|able|ible|less|ish)$")
_ZH_NAME_TAGS = frozenset({"nr", "ns", "nt", "nz", "nrt", "nrfg"})
_ZH_NOUN_TAGS = frozenset({"n", "ng", "nl", "vn", "an", "j"}) | _ZH_NAME_TAGS
_LATIN_SPAN = re.compile(r"([A-Za-z0-9][A-Za-z0-9'’+# -]*[A-Za-z0-9+#]|[A-Za-z0-9])")  # "iPhone 16" in Chinese
_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]+")
_SPEAKER = re.compile(r"^\s*([^\W\d_][^:：\n,，.。!?！？\d]{0,23})[:：]\s*")
_TITLE = re.compile(r"《([^《》]{1,20})》")  # a book or film title is an entity whatever the segmenter makes of it


@dataclass(frozen=True)
class _Token:
    text: str
    key: str  # what is counted and compared: the stem of an English word, the Chinese word itself
    role: str  # "name", "noun", "verb", "mod" or "num"; anything else breaks a phrase


@dataclass
class _Topic:
    text: str
    keys: tuple[str, ...]
    entity: bool
    verb_only: bool
    first: int  # index of the message that first brought it up
    score: float = 0.0


def _split_speaker(message: ChatMessage) -> tuple[str, set[str]]:
    """The text of a message without its "Name: " prefix, and the names it is said under."""
    names = {message.name.strip().lower()} if message.name and message.name.strip() else set()
    prefix = _SPEAKER.match(message.content)
    if prefix and len(prefix.group(1).split()) <= 3:
        names.add(prefix.group(1).strip().lower())
        return message.content[prefix.end():], names
    return message.content, names


_EN_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’+#-]*|\n|[^\sA-Za-z0-9]")


def _words(text: str) -> Iterator[tuple[str, bool]]:
    """English words and punctuation, each with whether it starts a sentence (where capitals say nothing)."""
    initial = True
    for match in _EN_WORD.finditer(text):
        word = match.group().replace("’", "'")
        yield word, initial
        initial = word in ".!?\n" or (initial and not word[0].isalnum())


def _proper_words(texts: Sequence[str]) -> set[str]:
    return {w for text in texts for w, initial in _words(text) if not initial and w[0].isupper()}


def _english_tokens(text: str, proper: set[str] | None) -> Iterator[_Token | None]:
    """Words with a role, None for a break (punctuation, function words). `proper`: words seen capitalized
    mid-sentence in the stretch, so "Biscuit chewed ..." is a name even where it starts a sentence; None where
    every capital is a name (English inside Chinese text)."""
    previous = ""
    for word, initial in _words(text):
        if not word[0].isalnum():
            previous = ""
            yield None
            continue
        lower, after_copula = word.lower(), previous in _COPULAS or previous.endswith(("'s", "'re", "'m"))
        previous = lower
        bare = lower[:-2] if lower.endswith("'s") and lower not in _STOP_EN else lower
        if word.isdigit():
            role = "num"
        elif bare in _STOP_EN or lower in _STOP_EN or bare.endswith("ly") or stem(bare) in _LIGHT_VERBS_EN:
            role = ""
        elif (word[0].isupper() and (proper is None or not initial or word in proper)) or word[1:] != word[1:].lower():
            role = "name"  # capitalized mid-sentence, or inner capitals: iPhone, NASA, GPT4
        elif bare in _MODIFIERS_EN or _ADJECTIVE_SUFFIX.search(bare) or (after_copula and bare.endswith("ing")):
            role = "mod"  # "it was fascinating": after a copula, -ing is how it was, not what
        elif len(bare) > 4 and bare.endswith("ed") and not bare.endswith("eed"):
            role = ""  # a past tense or participle: "adopted", "tired"
        else:
            role = "noun"
        shown = word.removesuffix("'s") if role == "name" else bare
        yield _Token(shown, stem(bare), role) if role else None


def _chinese_tokens(text: str) -> Iterator[_Token | None]:
    """Nouns, names and event verbs by rjieba's tags, None for everything else."""
    for index, piece in enumerate(_LATIN_SPAN.split(text)):
        if index % 2:  # English inside Chinese text: "iPhone 16", "offer"
            yield from _english_tokens(piece, None)
            continue
        for word, tag in rjieba.tag(piece):
            noun = tag in _ZH_NOUN_TAGS if len(word) > 1 else tag == "n"  # 猫 is a topic; 换, 学 mis-tagged are not
            # One-character verbs (去, 看, 有) are too light to be events; 面试, 出差 are not. A word the dictionary
            # lacks is the segmenter's guess: right for new names and nouns (刘思远, 原神), as a verb it is
            # usually two words run together (他养, 太辣).
            verb = tag.startswith("v") and len(word) > 1 and rjieba.has_word(word)
            if (word in CHINESE_STOPWORDS or word in _CHAT_WORDS_ZH or not _CJK_RUN.fullmatch(word)
                    or _is_evaluation(word) or not (noun or verb)):
                yield None
            else:
                yield _Token(word, word, "name" if tag in _ZH_NAME_TAGS and len(word) > 1 else
                             "noun" if noun else "verb")


def _is_evaluation(word: str) -> bool:
    """太贵, 很累, 太多: a degree adverb and an adjective (or amount), however the dictionary tags the pair."""
    return len(word) == 2 and word[0] in "太很挺好真超蛮更最" and rjieba.tag(word[1])[0][1] in ("a", "m")


def _phrases(tokens: Iterator[_Token | None]) -> Iterator[list[_Token]]:
    """Maximal runs of content words: "香山爬山", "job interview", "iPhone 16" (a number only after a name)."""
    run: list[_Token] = []
    for token in [*tokens, None]:
        if token is not None and (token.role != "num" or (run and run[-1].role == "name")):
            run.append(token)
            continue
        while run and run[-1].role == "mod":  # "so nervous" is not a topic; "new shoes" is
            run.pop()
        run = run[-_MAX_PHRASE:]  # the head of a noun phrase is its end
        while run and run[0].role == "num":
            run.pop(0)
        if run:
            yield run
        run = []


def _join(tokens: list[_Token]) -> str:
    """Chinese words run together, English ones take a space: "香山爬山", "Mount Tam", "换iPhone"."""
    text = tokens[0].text
    for before, token in pairwise(tokens):
        text += (" " if before.text[-1].isascii() and token.text[0].isascii() else "") + token.text
    return text


def _contains(text: str, key: str, chinese: bool) -> bool:
    return key in text if chinese else f" {key} " in text


def _topics(messages: Sequence[ChatMessage]) -> tuple[bool, list[_Topic]]:
    """Whether the stretch is Chinese, and the phrases the user brought up, scored."""
    said = [(m.role, *_split_speaker(m)) for m in messages if m.role in ("user", "assistant")]
    user = [text for role, text, _ in said if role == "user"]
    # Without the user (imported assistant-only logs), the stretch is all there is to go on.
    sources = user if any(t.strip() for t in user) else [text for _, text, _ in said]
    others = [text for role, text, _ in said if role == "assistant"] if sources is user else []
    chinese = is_chinese(" ".join(sources))
    speakers = {name for _, _, names in said for name in names}
    proper = _proper_words(sources + others)

    def words_of(text: str) -> str:  # what keys are looked up in: the text, or its stems between spaces
        if chinese:
            return text.lower()
        return " " + " ".join(t.key for t in _english_tokens(text, proper) if t is not None) + " "

    haystacks = [words_of(t) for t in sources]
    echoes = words_of(" \n".join(others))
    topics: dict[str, _Topic] = {}
    for index, text in enumerate(sources):
        titles = [[_Token(title, title.lower(), "name")] for title in _TITLE.findall(text)]
        tokens = _chinese_tokens(_TITLE.sub("，", text)) if chinese else _english_tokens(text, proper)
        for run in [*titles, *_phrases(tokens)]:
            phrase = _join(run)
            keys = tuple(t.key for t in run if t.role in ("name", "noun", "verb"))
            if phrase.lower() in speakers or any(k in speakers for k in keys) or phrase.lower() in topics:
                continue
            topics[phrase.lower()] = _Topic(phrase, keys, any(t.role == "name" for t in run),
                                            all(t.role == "verb" for t in run), index)
    for topic in topics.values():
        # A phrase is as salient as its most salient word: how many of the user's messages it comes up in, and a
        # little more if the assistant took it up. Names and specific (longer) phrases weigh a little more, so
        # "阑尾手术" is said rather than "手术"; bare verbs and single characters a little less.
        topic.score = max(sum(_contains(h, k, chinese) for h in haystacks) + 0.5 * _contains(echoes, k, chinese)
                          for k in topic.keys)
        topic.score += 0.75 * topic.entity + 0.25 * (len(topic.keys) > 1) - 0.25 * topic.verb_only
        topic.score -= 0.5 * (len(topic.text) == 1)
    return chinese, list(topics.values())


def summarize_offline(messages: Sequence[ChatMessage], started_at: datetime) -> str:
    """"[start] 聊了A、B" / "[start] Talked about A, B": the most salient topics, first mentioned first."""
    chinese, topics = _topics(messages)
    lead = "聊了" if chinese else "Talked about "
    glue = "、" if chinese else ", "
    chosen: list[_Topic] = []
    ranked = sorted(topics, key=lambda t: (-t.score, t.first))
    for topic in ranked:
        # Filling every slot would name what was said once in passing next to what the stretch was about.
        if len(chosen) == MAX_TOPICS or topic.score < ranked[0].score / 3:
            break
        # One slot per thing: "香山爬山" covers "爬山", "大熊猫" covers "熊猫宝宝", "job interview" covers "job".
        overlaps = any(a == b or (chinese and (a in b or b in a)) for c in chosen for a in topic.keys for b in c.keys)
        fits = len(lead + glue.join(c.text for c in [*chosen, topic])) <= MAX_BODY[chinese]
        if not overlaps and fits:
            chosen.append(topic)
    stamp = started_at.strftime("%Y-%m-%d %H:%M")
    if not chosen:
        return f"[{stamp}] 闲聊" if chinese else f"[{stamp}] Small talk"
    chosen.sort(key=lambda t: t.first)
    return f"[{stamp}] {lead}{glue.join(t.text for t in chosen)}"


def stamp_summary(summary: str, started_at: datetime) -> str:
    """An LLM's summary with the same time stamp in front."""
    return f"[{started_at.strftime('%Y-%m-%d %H:%M')}] {summary.strip()}"


_TOPICS = re.compile(r"^\[[^\]]*\]\s*(?:聊了|聊过：|Talked about|Topics:)\s*(.+)$")
_TOPIC_SEPARATOR = re.compile(r"[、,，]\s*")


def summarize_episodes(summaries: Sequence[str], started_at: datetime, ended_at: datetime) -> str:
    """Many episode lines become one, "[2026-01-01 ~ 2026-01-20] 聊过：面试、游戏、猫": the topics that came up most."""
    counts: Counter[str] = Counter()
    first: dict[str, int] = {}
    for index, line in enumerate(summaries):
        match = _TOPICS.match(line.strip())
        for topic in _TOPIC_SEPARATOR.split(match.group(1)) if match else []:
            if topic.strip():
                counts[topic.strip()] += 1
                first.setdefault(topic.strip(), index)
    topics = sorted(counts, key=lambda t: (-counts[t], first[t]))[:MAX_TOPICS * 2]
    span = f"[{started_at.strftime('%Y-%m-%d')} ~ {ended_at.strftime('%Y-%m-%d')}]"
    chinese = is_chinese(" ".join(summaries))
    if not topics:
        return f"{span} 闲聊" if chinese else f"{span} Small talk"
    return f"{span} 聊过：{'、'.join(topics)}" if chinese else f"{span} Topics: {', '.join(topics)}"
