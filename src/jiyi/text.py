"""Text analysis for keyword search in Chinese and English.

Chinese has no spaces, so text is segmented with rjieba (jieba's dictionary, 6.5x faster); English words are
stemmed (Snowball) here rather than in the index, so that the index's vocabulary and the query's words are the same
strings and document frequencies can be looked up for them. Two views are indexed: `terms` (segmented words,
search-mode granularity, lower-cased, stemmed, stop-words removed) and `chars` (single CJK characters, in order).
A Chinese query word is matched against `terms` or, as a phrase, against `chars` — so
失眠, 上海 and 虾 find their memories even where the segmenter cut the memory differently (吃虾, 海鲜过敏).
"""

from __future__ import annotations

import re
import threading
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

import rjieba
import snowballstemmer

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_WORD = re.compile(r"[\w\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+", re.UNICODE)

ENGLISH_STOPWORDS = frozenset(
    """
    a about above after again against all am an and any are aren't as at be because been before being below
    between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down during each
    few for from further had hadn't has hasn't have haven't having he he'd he'll he's her here here's hers
    herself him himself his how how's i i'd i'll i'm i've if in into is isn't it it's its itself let's me more
    most mustn't my myself no nor not of off on once only or other ought our ours ourselves out over own same
    shan't she she'd she'll she's should shouldn't so some such than that that's the their theirs them
    themselves then there there's these they they'd they'll they're they've this those through to too under
    until up very was wasn't we we'd we'll we're we've were weren't what what's when when's where where's which
    while who who's whom why why's will with won't would wouldn't you you'd you'll you're you've your yours
    yourself yourselves s t d ll m re ve also just did does get got go going yes ok okay oh hey hi hello
    """.split()
)

# Function words and pronouns that carry no topic. Negations (不, 没) are kept: 喜欢 vs 不喜欢 matters.
CHINESE_STOPWORDS = frozenset(
    """
    的 了 着 过 吗 呢 吧 啊 呀 哦 嗯 哈 呗 啦 嘛 么 之 而 与 及 和 跟 同 或 是
    在 也 都 就 还 又 很 太 更 最 我 你 他 她 它 我们 你们 他们 她们 它们 咱们 自己
    这 那 这个 那个 这些 那些 这里 那里 这样 那样 什么 怎么 怎样 哪 哪里 哪儿 谁 为什么
    一个 一下 一些 有点 有些 把 被 给 让 对 向 从 到 为 以 于 上 下 里 中 个 些 得
    地 吗 啥 么 呐 嘞 喔 诶 哎 唉 请 能 会 可以 要 想 说 问 告诉 知道 记得 还记得
    好 好的 好吧 嗯嗯 哈哈 哈哈哈 嘿嘿 呵呵 拜拜 谢谢 再见 然后 所以 其实 就是
    """.split()
)


def normalize(text: str) -> str:
    """NFKC folds full-width letters and digits (ＡＢＣ１２３) so they match their ASCII forms."""
    return unicodedata.normalize("NFKC", text).lower()


def has_cjk(text: str) -> bool:
    return _CJK.search(text) is not None


def _is_stopword(token: str) -> bool:
    return token in ENGLISH_STOPWORDS or token in CHINESE_STOPWORDS


_ASCII_WORD = re.compile(r"[a-z]+")
# A snowball stemmer keeps the word it works on in itself: one per thread (searches and writes stem on several).
_STEMMERS = threading.local()


@lru_cache(maxsize=65536)
def stem(token: str) -> str:
    if not _ASCII_WORD.fullmatch(token):
        return token
    stemmer = getattr(_STEMMERS, "english", None)
    if stemmer is None:
        stemmer = _STEMMERS.english = snowballstemmer.stemmer("english")
    return str(stemmer.stemWord(token))


def _clean(tokens: list[str]) -> list[str]:
    out = []
    for token in tokens:
        token = token.strip()
        if token and _WORD.fullmatch(token) and not _is_stopword(token):
            out.append(stem(token))
    return out


def segment(text: str) -> list[str]:
    """Words of `text`, precise mode, normalized, without punctuation and stop-words (for queries)."""
    return _clean(rjieba.cut(normalize(text)))


def starts_a_word(text: str, at: int) -> bool:
    """Whether jieba's cut of `text` starts a word at index `at` (朋友 is no word of its own inside 男朋友, nor 不…了
    inside 差不多了)."""
    start = 0
    for word in rjieba.cut(text):
        if start == at:
            return True
        if start > at:
            return False
        start += len(word)
    return False


def segment_for_index(text: str) -> list[str]:
    """Search-mode segmentation: long words also yield their sub-words (中华人民共和国 → 中华, 人民, ...)."""
    return _clean(rjieba.cut_for_search(normalize(text)))


def cjk_chars(text: str) -> list[str]:
    return _CJK.findall(normalize(text))


@dataclass(frozen=True, slots=True)
class IndexedText:
    terms: str
    chars: str


# The time stamp an episode summary or an abstraction starts with ("[2026-09-25 01:11] 聊了…", "[2026-05-01 ~
# 2026-05-31] …"). It says when, which search reads from the memory's times; as words its numbers matched any query
# with a number in it ("August 11" found every summary written at 11:xx).
_LEADING_STAMP = re.compile(r"^\s*\[\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2})?)?(?:\s*~\s*\d{4}-\d{2}-\d{2})?\]")


def analyze_for_index(text: str) -> IndexedText:
    """What the keyword index holds for a memory's text (its leading time stamp left out)."""
    text = _LEADING_STAMP.sub("", text, count=1)
    return IndexedText(terms=" ".join(segment_for_index(text)), chars=" ".join(cjk_chars(text)))


def query_terms(text: str) -> list[str]:
    """Distinct query words in first-seen order."""
    return list(_query_terms(text))


@lru_cache(maxsize=1024)
def _query_terms(text: str) -> tuple[str, ...]:
    # A search segments its query several times (the keyword path, the messages a fact covers, the intent rules):
    # jieba once. A tuple of strings: the garbage collector does not track it.
    return tuple(dict.fromkeys(segment(text)))
