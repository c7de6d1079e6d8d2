"""Which messages a fact came from, when its extractor does not say.

The offline rules know: each fact is made from one message (core/offline.py sets Fact.sources). An LLM answers with
the facts alone, for the whole conversation, so the write path finds each fact's messages here: the message of the
fact's party that holds most of its words, then any other that holds words of it the ones before do not. In "我对海鲜
过敏" / "I moved to Shanghai last spring", "用户对海鲜过敏" cites the first, "User moved to Shanghai" the second; in
"我有个妹妹" / "她叫小美", "用户的妹妹叫小美" cites both. Words are the search words (jiyi.text, stemmed) and, for
Chinese, pairs of adjacent characters, which do not depend on where the segmenter cut. A fact that shares no word
with any message was written in another language than what it restates ("I moved to Shanghai" → "用户搬到了上
海", the prompt being in the conversation's main language): it is placed among the messages in the other language
(`translation_candidates`), by meaning, in the write path — a small multilingual embedder alone ranks a message in
the fact's own language first whatever it says.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from jiyi.core.facts import is_chinese
from jiyi.text import normalize, query_terms

# How extracted facts name the person they are about; not a word of what was said.
_SUBJECTS = frozenset({"user", "用户"})
_SUBJECT_ZH = re.compile("用户")
_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")


def words_of(text: str) -> frozenset[str]:
    """The words a fact and a message are compared on: search words and adjacent CJK character pairs."""
    terms = {term for term in query_terms(text) if term not in _SUBJECTS}
    for run in _CJK_RUN.findall(_SUBJECT_ZH.sub(" ", normalize(text))):
        terms.update(run[i:i + 2] for i in range(len(run) - 1))
    return frozenset(terms)


def cited_messages(fact: str, said: Sequence[str]) -> list[int]:
    """Positions in `said` (the texts a fact may come from) of the messages it was made of, in order: the one sharing
    most of its words (the earliest of equals), then each that adds words of it the ones chosen lack. Empty when none
    shares a word with it."""
    wanted = words_of(fact)
    shared = [words_of(text) & wanted for text in said]
    chosen: list[int] = []
    covered: frozenset[str] = frozenset()
    while True:
        gains = [len(words - covered) if i not in chosen else 0 for i, words in enumerate(shared)]
        best = max(range(len(gains)), key=lambda i: (gains[i], -i), default=None)
        if best is None or gains[best] == 0:
            return sorted(chosen)
        chosen.append(best)
        covered |= shared[best]


def translation_candidates(fact: str, said: Sequence[str]) -> list[int]:
    """Positions in `said` a fact sharing no word with any of them may have been translated from: the messages not in
    its language (a fact in a message's language shares words with it), or all of them when every one is."""
    chinese = is_chinese(fact)
    other = [i for i, text in enumerate(said) if is_chinese(text) != chinese]
    return other or list(range(len(said)))
