"""What a reply must not be told any more: an older memory that a newer one says has changed.

People tell a change the way they talk, not as a correction of a stored fact: "kabir and I are done" weeks after "this
guy Kabir, we've been talking every night"; "No soda! Thirty days clean" after "probably three Cokes a day";
"因为我调岗了！从ICU调到门诊了" after "我在ICU当护士 三班倒". Extraction catches some of these and updates the fact
(core/offline.py); the messages kept as evidence, and what extraction missed, stay as they were said. So before a
reply gets its memories, a candidate is left out when a newer candidate (1) says that something changed — it stopped,
ended, was given up, moved, replaced, sold, died, recovered — and (2) speaks of the same thing: they share a word
that is not common in the user's memories (a name, a thing), or words the lexicon joins (core/lexicon.py).

On the development half of bench/context.py before this: a superseded value was injected for 14 of 31 Chinese and
19 of 27 English questions asked after a change. A question about the past ("what did I use to…", "我以前…") keeps
the older memories: it asks for them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import datetime

import numpy as np

from jiyi.errors import Conflict
from jiyi.records import Category, Event, MemoryRecord, Scope, SearchHit, revise
from jiyi.stores.base import MemoryIndex
from jiyi.text import analyze_for_index, has_cjk, stem

# Words that say a state, a habit, a relationship or a plan came to an end or was replaced (a closed class of
# verbs and phrases of change, not any one topic's words).
_CHANGED_EN = re.compile(
    r"\b(?:no longer|not any ?more|anymore|any more|no more|stopp?(?:ed|ing)|quit(?:ting)?|gave up|given up|"
    r"giving up|broke up|broken up|split up|(?:are|were|is|was|'re) (?:done|over|finished)|ended|ending it|"
    r"called (?:it )?off|cancel+ed|moved (?:out|away|to|in)|moving (?:out|to)|relocated|switched|swapped|"
    r"sold (?:my|our|the|it|them|off|up)|"
    r"replaced|instead|changed (?:to|jobs?|my|our|the)|transferred|promoted|resigned|retir(?:ed|ing)|fired|"
    r"laid off|let go|pulled out|withdr[ae]w|postponed|rescheduled|pushed back|brought forward|"
    r"handed in my notice|new job|died|passed away|put (?:her|him|it) down|lost (?:her|him)|recovered|healed|"
    r"cleared up|all better|got rid of|dropped out|weaned|cut out|off (?:the|alcohol|sugar|caffeine|meat)|"
    r"(?:\d+|thirty|twenty|ten|two|three|four) (?:days|weeks|months) (?:clean|sober|without))\b",
    re.IGNORECASE)
_CHANGED_ZH = re.compile(
    r"不再|再也不|不[^，。！？,.!?\s]{1,6}了|没再|停了|停掉|戒了|戒掉|放弃|不干了|辞职|离职|辞了|调岗|调到|换了|换成|"
    r"改成|改为|改学|改去|搬到|搬去|搬走|搬出|搬家|卖了|卖掉|分手|分了|离婚|去世|过世|走了|没了|取消|黄了|泡汤|"
    r"痊愈|康复|出院|好利索|断奶|退休|转行|跳槽|结束了|到期了|没碰")
# A question about the past asks for the older memories.
_ASKS_ABOUT_BEFORE = re.compile(
    r"\b(?:used to|use to|before|previously|originally|at first|back then|back when|in the past|formerly|last year)\b|"
    r"以前|之前|原来|过去|曾经|当初|那时|起初|一开始|去年",
    re.IGNORECASE)


# Words that say when or how, not what: two memories sharing only these are not about the same thing. Nor is the
# word extraction writes for the user in every fact ("User quit the gym", "User loves pizza"; 用户): in a store too
# small for document frequencies to tell it is common (COMMON_TOPIC_MIN_STORE), it made any two facts one subject.
GENERIC_WORDS = frozenset(stem(w) for w in """
    user 用户
    today yesterday tomorrow tonight now lately recently week weekend day days month year morning evening night time
    times thing things stuff lot bit really actually still though lol haha omg ok okay yeah yep nope sure well
    think thought know feel felt want like love say said tell told guess mean good great bad nice little big new old
    won given anyth anywher someth someon everyon everyth noth gonna wanna kinda way back last next first ago soon later
    今天 昨天 明天 今晚 昨晚 现在 最近 这周 周末 上周 下周 早上 晚上 中午 下午 时候 时间 一天 天天 每天 这个 那个
    事情 东西 感觉 觉得 知道 喜欢 真的 其实 还是 有点 一点 一直 已经 开始 终于 终究 突然 今年 去年 明年
""".split())


def says_it_changed(text: str) -> bool:
    """Whether a memory tells that something ended or was replaced."""
    return bool(_CHANGED_ZH.search(text) if has_cjk(text) else _CHANGED_EN.search(text))


_CLAUSE = re.compile(r"[，。！？；,.!?;\n]+")


def what_changed(text: str) -> str:
    """The part of a memory that says the change: each clause that holds a word of change, with the clauses just
    before and after it ("No soda! Thirty days clean." / "因为我调岗了！从ICU调到门诊了"). What else the message
    says ("搬过来两周了…再也不用挤地铁了" is about the commute, not the sister mentioned before) did not change."""
    clauses = [c for c in _CLAUSE.split(text) if c.strip()]
    cue = _CHANGED_ZH if has_cjk(text) else _CHANGED_EN
    around = {j for i, clause in enumerate(clauses) if cue.search(clause) for j in (i - 1, i, i + 1)}
    return " ".join(clauses[j].strip() for j in sorted(around) if 0 <= j < len(clauses))


def asks_about_before(question: str) -> bool:
    return bool(_ASKS_ABOUT_BEFORE.search(question))


def _words(text: str) -> set[str]:
    return set(analyze_for_index(text).terms.split())


# On an older memory: the id of a newer one that said it changed (written when the newer one is kept; write_path).
CHANGED_BY = "changed-by:"


def changed_by(record: MemoryRecord) -> list[str]:
    return [tag[len(CHANGED_BY):] for tag in record.tags if tag.startswith(CHANGED_BY)]


def topic_words(text: str, common: Callable[[str], bool]) -> set[str]:
    """The words of a memory that can tell what it is about: not stopwords, not generic, not common in the store."""
    return {w for w in _words(text) if w not in GENERIC_WORDS and not common(w)}


def same_subject(new: set[str], old: set[str], joined: Callable[[str, str], bool] | None = None) -> bool:
    """Whether two memories' topic words meet: one in common, or two the lexicon puts in one concept."""
    if new & old:
        return True
    return joined is not None and any(joined(a, b) for a in new for b in old)


def supersedes(new: MemoryRecord, old: MemoryRecord) -> bool:
    """Whether `new` could say `old` changed: it says a change, and was said after."""
    return new.id != old.id and said_at(old) < said_at(new) and says_it_changed(new.content)


def superseded(hits: Sequence[SearchHit], question: str, common: Callable[[str], bool],
               joined: Callable[[str, str], bool] | None = None,
               near: Callable[[MemoryRecord, MemoryRecord], bool] | None = None) -> set[str]:
    """The ids of the hits a newer hit says have changed (see the module docstring). `common(word)`: the word is
    in too many of the user's memories to tell a topic (家, "work"); `joined(a, b)`: the lexicon joins two words;
    `near(new, old)`: the two are close in meaning too (a word in common is not enough on its own: "she's driving
    up with the children for Easter instead" does not change where the daughter lives)."""
    if asks_about_before(question):
        return set()
    changes = [h.record for h in hits if says_it_changed(h.record.content)]
    if not changes:
        return set()
    words = {h.record.id: topic_words(h.record.content, common) for h in hits}
    changed = {c.id: topic_words(what_changed(c.content), common) for c in changes}
    return {hit.record.id for change in changes for hit in hits
            if supersedes(change, hit.record) and same_subject(changed[change.id], words[hit.record.id], joined)
            and (near is None or near(change, hit.record))}


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


def common_words(store: MemoryIndex, texts: Sequence[str]) -> Callable[[str], bool]:
    """`common(word)` for the words of these texts, from the store's document frequencies (one query)."""
    words = sorted({w for text in texts for w in _words(text)})
    frequencies, total = store.document_frequencies(words)
    return lambda word: total >= COMMON_TOPIC_MIN_STORE and frequencies.get(word, 0) > COMMON_TOPIC_SHARE * total


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
        new_words = topic_words(what_changed(record.content), common)
        for old in older:
            if not same_subject(new_words, topic_words(old.content, common), joined):
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
