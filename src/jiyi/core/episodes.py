"""Episode summaries: one line per stretch of conversation ("[2026-01-03 18:00] 聊了面试、游戏"), so the assistant can
answer "what did we talk about last time". Offline, the topics are the words the stretch kept coming back to."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from datetime import datetime

import rjieba

from jiyi.core.facts import is_chinese
from jiyi.core.messages import ChatMessage
from jiyi.core.text import CHINESE_STOPWORDS, ENGLISH_STOPWORDS

MAX_TOPICS = 4
_CHAT_WORDS = frozenset(
    "哈哈 哈哈哈 嗯嗯 好的 谢谢 可以 没有 不是 就是 还是 但是 因为 所以 然后 觉得 感觉 "
    "现在 今天 时候 一下 真的 其实 知道 "
    "应该 已经 可能 一起 喜欢 这么 那么 怎么样 这样 那样 东西 事情 时间 问题 有点 比较 特别 非常 一直 我们 你们 自己 "
    "明天 昨天 后天 今晚 晚上 早上 上午 下午 最近 刚才 "
    "thanks thank really think know good great sure maybe today something anything everything would could should "
    "about going want like just yeah okay right well that's it's what's there".split()
)


def _words(text: str, chinese: bool) -> list[str]:
    if chinese:
        return [w for w in rjieba.cut(text) if len(w) >= 2 and re.fullmatch(r"[\u4e00-\u9fff]+", w)
                and w not in CHINESE_STOPWORDS and w not in _CHAT_WORDS]
    return [w for w in re.findall(r"[a-z][a-z'-]{3,}", text.lower())
            if w not in ENGLISH_STOPWORDS and w not in _CHAT_WORDS]


def _speaker(message: ChatMessage) -> str:
    """The name a message is said under: its `name`, or a "Name: " prefix of its text."""
    prefix = re.match(r"^\s*([^:：\n]{1,40})[:：]", message.content)
    return " ".join(filter(None, [message.name, prefix.group(1) if prefix else None]))


def summarize_offline(messages: Sequence[ChatMessage], started_at: datetime) -> str:
    """"[start] 聊了A、B、C": the words most messages of the stretch share, first mentioned first."""
    text = " ".join(m.content for m in messages if m.role == "user") or " ".join(m.content for m in messages)
    chinese = is_chinese(text)
    seen_in: Counter[str] = Counter()
    first_seen: dict[str, int] = {}
    # The people talking are in every stretch: naming them says nothing about what was talked about.
    speakers = {w for m in messages for w in _words(_speaker(m), chinese)}
    for i, message in enumerate(messages):
        for word in set(_words(message.content, chinese)) - speakers:
            seen_in[word] += 1 + (message.role == "user")  # what the user brings up is the topic
            first_seen.setdefault(word, i)
    ranked = sorted(seen_in, key=lambda w: (-seen_in[w], first_seen[w]))[:MAX_TOPICS]
    ranked.sort(key=lambda w: first_seen[w])
    stamp = started_at.strftime("%Y-%m-%d %H:%M")
    if not ranked:
        return f"[{stamp}] 闲聊" if chinese else f"[{stamp}] Small talk"
    return f"[{stamp}] 聊了{'、'.join(ranked)}" if chinese else f"[{stamp}] Talked about {', '.join(ranked)}"


def stamp_summary(summary: str, started_at: datetime) -> str:
    """An LLM's summary with the same time stamp in front."""
    return f"[{started_at.strftime('%Y-%m-%d %H:%M')}] {summary.strip()}"


_TOPICS = re.compile(r"^\[[^\]]*\]\s*(?:聊了|聊过：|Talked about|Topics:)\s*(.+)$")


def summarize_episodes(summaries: Sequence[str], started_at: datetime, ended_at: datetime) -> str:
    """Many episode lines become one, "[2026-01-01 ~ 2026-01-20] 聊过：面试、游戏、猫": the topics that came up most."""
    counts: Counter[str] = Counter()
    first: dict[str, int] = {}
    for index, line in enumerate(summaries):
        match = _TOPICS.match(line.strip())
        for topic in re.split(r"[、,，]\s*", match.group(1)) if match else []:
            if topic.strip():
                counts[topic.strip()] += 1
                first.setdefault(topic.strip(), index)
    topics = sorted(counts, key=lambda t: (-counts[t], first[t]))[:MAX_TOPICS * 2]
    span = f"[{started_at.strftime('%Y-%m-%d')} ~ {ended_at.strftime('%Y-%m-%d')}]"
    chinese = is_chinese(" ".join(summaries))
    if not topics:
        return f"{span} 闲聊" if chinese else f"{span} Small talk"
    return f"{span} 聊过：{'、'.join(topics)}" if chinese else f"{span} Topics: {', '.join(topics)}"
