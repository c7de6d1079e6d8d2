"""jiyi's own extraction and decisions, used when no LLM is configured and while a configured one is down.

Extraction runs the Chinese or English rules on each message by its language. Decisions compare a new fact's
structure (slot, topic, polarity) with the structure of similar existing memories, re-read from their text, so they
work on memories that any extractor wrote:
- same meaning (near-identical text)                                   → NONE
- a single-valued slot with a new value (住在杭州 → 搬到了上海)           → UPDATE
- the same topic with the opposite polarity (用户吃素 → 用户不再吃素)       → UPDATE
- the same topic, the new fact saying more (Has a sister → … named Jesica) → UPDATE
- otherwise                                                              → ADD
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from functools import lru_cache

from jiyi.core import rules_en, rules_zh
from jiyi.core.facts import Candidate, Decision, Fact, FactKind, is_chinese
from jiyi.core.messages import ChatMessage, speaker_prefix
from jiyi.core.rule_base import HABIT_SLOT, MOOD_SLOT, unique_facts
from jiyi.records import Event
from jiyi.text import query_terms

DUPLICATE_OVERLAP = 0.8  # character-bigram Jaccard above which two facts say the same thing

_WORD_USER = re.compile(r"\bUser\b")


def extract_user_facts(messages: Sequence[ChatMessage], context: Sequence[str] = ()) -> list[Fact]:
    """Facts about the user from the user's messages; `context` holds the user's earlier messages (for 她 / her)."""
    facts: list[Fact] = []
    earlier = list(context)[-4:]
    for index, message in enumerate(messages):
        if message.role != "user" or not message.content.strip():
            continue
        facts.extend(replace(fact, sources=(index,)) for fact in _extract(message.content, earlier))
        earlier.append(message.content)
    return unique_facts(facts)


# A statement given to be remembered: not a question, and short of a document (which extraction, not this, is for).
STATED_MAX_CHARS = 500
_ASKS = re.compile(r"[?？]\s*$|吗[\s。!！]*$|"
                   r"^(?:do|does|did|is|are|can|could|would|will|what|where|when|who|why|how)\b", re.IGNORECASE)
_LEADING_FIRST_PERSON_EN = re.compile(r"^(?:I|I'm|I've|I'll|I'd|My)\b")
_FIRST_PERSON = re.compile(r"\b(?:I|my)\b|我")  # as the subject or an owner: "…to me" says nothing about oneself
# Words that say how, not what ("sounds good to me", "I had fun"): not what a statement about oneself is made of.
_SMALL_TALK_WORDS = frozenset(query_terms("good great nice fun cool fine sound sounds glad happy sure lol haha thanks "
                                          "thank 好 不错 开心 哈哈 谢谢"))


def stated_fact(text: str) -> Fact | None:
    """A statement given to be remembered ("Prefers window seats on flights", "I'm vegetarian", "我周三要交房租")
    that the rules made nothing of, kept as a fact in the user's words, first person turned into the third as
    extracted facts are written (我 → 用户, I → User). None for a question, a bare greeting or a document."""
    text = " ".join(text.split())
    if not text or len(text) > STATED_MAX_CHARS or _ASKS.search(text) or not query_terms(text):
        return None
    if is_chinese(text):
        stated = rules_zh.to_third_person(text).rstrip("。.!！~～ ")
    elif _LEADING_FIRST_PERSON_EN.match(text):
        stated = rules_en.to_third_person(text).rstrip(".!~ ")
    else:
        stated = text.rstrip(".!~ ")
        stated = stated[:1].upper() + stated[1:]
    return Fact(text=stated, kind=FactKind.OTHER, importance=0.6)


def asks_to_be_remembered(messages: Sequence[ChatMessage], told_to: bool) -> bool:
    """Whether an add is a statement to remember rather than a chat turn: the caller says so (`told_to`: MCP's add
    tools, `jiyi add`), or it is one user message alone that says something about its author (mem0's SDK sends
    add("…") as that). Such a statement that extraction makes nothing of is kept as it was said (stated_fact): an
    agent asked to remember something must find it saved."""
    if told_to:
        return True
    if len(messages) != 1 or messages[0].role != "user" or messages[0].name:
        return False
    text = messages[0].content
    return speaker_prefix(text) is None and says_something_about_oneself(text)


def says_something_about_oneself(text: str) -> bool:
    """A first-person statement with at least two words that are not stopwords ("I prefer aisle seats", "我下周三要
    出差"): what one sends alone to be remembered, unlike "lol" or a question."""
    return (stated_fact(text) is not None and _FIRST_PERSON.search(text) is not None
            and len([w for w in query_terms(text) if w not in _SMALL_TALK_WORDS]) >= 2)


def extract_agent_facts(messages: Sequence[ChatMessage], agent_name: str | None = None) -> list[Fact]:
    """What the assistant says about itself ("我也喜欢猫", "I grew up in Kyoto"), as facts about the character."""
    facts: list[Fact] = []
    for index, message in enumerate(messages):
        if message.role != "assistant" or not message.content.strip():
            continue
        chinese = is_chinese(message.content)
        name = agent_name or message.name or ("助手" if chinese else "Assistant")
        for fact in _extract(message.content, []):
            if fact.kind in (FactKind.STATE, FactKind.PLAN):
                continue  # "I'm happy to help", "I'll remember that": conversation, not persona
            text = fact.text.replace("用户", name) if chinese else _WORD_USER.sub(name, fact.text)
            facts.append(Fact(text=text, kind=FactKind.PERSONA, importance=fact.importance * 0.8, about="assistant",
                              slot=fact.slot, topic=fact.topic, negated=fact.negated, sources=(index,)))
    return unique_facts(facts)


def _extract(text: str, earlier: list[str]) -> list[Fact]:
    """The rules of the message's language; `earlier` (the user's previous messages) says who 她 / she / it is."""
    if is_chinese(text):
        return rules_zh.extract_chinese(text, context=[t for t in earlier if is_chinese(t)])
    return rules_en.extract_english(text, context=[t for t in earlier if not is_chinese(t)])


# "User" where a clause starts, read back in the first person: User's → My, User is → I'm, User loves → I love.
_CLAUSE_USERS = re.compile(r"(^|, )User's\b")
_CLAUSE_USER_BE_HAVE = re.compile(r"(^|, )User (is|has|was)\b")
_CLAUSE_USER_VERB = re.compile(r"(^|, )User ((?:(?:" + rules_en.ADVERBS + r")\s+)*)(\w+(?:n't)?)")


@lru_cache(maxsize=4096)
def structure_of(memory_text: str) -> Fact | None:
    """Read a stored memory back as a fact: "用户住在杭州" is parsed as "我住在杭州"."""
    if is_chinese(memory_text):
        # 用户 anywhere: "项目顺利上线了，用户现在轻松多了", "医生说用户暂时不能跑步" are about the user too
        facts = rules_zh.extract_chinese(memory_text.strip().replace("用户", "我"))
    else:
        # "User" anywhere a clause starts: "The project finally shipped, User is feeling more relaxed now"
        first_person = _CLAUSE_USERS.sub(lambda m: m.group(1) + ("My" if not m.group(1) else "my"),
                                         memory_text.strip())
        first_person = _CLAUSE_USER_BE_HAVE.sub(
            lambda m: m.group(1) + {"is": "I'm", "has": "I have", "was": "I was"}[m.group(2)], first_person)
        first_person = _CLAUSE_USER_VERB.sub(lambda m: f"{m.group(1)}I {m.group(2)}{_base_form(m.group(3))}",
                                             first_person)
        facts = rules_en.extract_english(first_person)
    # A memory that says two things ("用户膝盖受伤，医生说暂时不能跑步") is read as the one that holds a slot.
    return next((f for f in facts if f.slot), facts[0]) if facts else None


_ENDS_IN_SIBILANT_ES = re.compile(r"(?:ss|sh|ch|x|z|o)es$")  # misses → miss, goes → go


def _base_form(verb: str) -> str:
    """loves → love, studies → study, goes → go: undo the third person that facts are written in."""
    lower = verb.lower()
    irregular = {"is": "am", "has": "have", "was": "was", "does": "do", "doesn't": "don't", "hasn't": "haven't",
                 "isn't": "am not"}
    if lower in irregular:
        return irregular[lower]
    if lower.endswith("ies"):
        return verb[:-3] + "y"
    if _ENDS_IN_SIBILANT_ES.search(lower):
        return verb[:-2]
    if lower.endswith("s") and not lower.endswith("ss"):
        return verb[:-1]
    return verb


_LEADING_USER = re.compile(r"^(?:用户|User'?s?)\s*", re.IGNORECASE)
_WHITESPACE = re.compile(r"\s+")


def _bigrams(text: str) -> set[str]:
    text = _WHITESPACE.sub(" ", _LEADING_USER.sub("", text.strip()).lower())
    return {text[i:i + 2] for i in range(len(text) - 1)} or {text}


def overlap(a: str, b: str) -> float:
    x, y = _bigrams(a), _bigrams(b)
    return len(x & y) / len(x | y) if x | y else 0.0


def _same_topic(a: str | None, b: str | None) -> bool:
    if not a or not b:
        return False
    a, b = a.lower(), b.lower()
    return a == b or (min(len(a), len(b)) >= 2 and (a in b or b in a))


def _says_more(new: str, old: str) -> bool:
    """Every content word of the old memory is in the new fact, and the new fact has more."""
    old_terms, new_terms = set(query_terms(old)), set(query_terms(new))
    return bool(old_terms) and old_terms < new_terms


def decide_offline(facts: Sequence[Fact], candidates: Sequence[Sequence[Candidate]]) -> list[Decision]:
    """One decision per fact; `candidates[i]` are the existing memories most similar to `facts[i]`."""
    decisions: list[Decision] = []
    claimed: set[str] = set()
    for fact, similar in zip(facts, candidates, strict=True):
        decision = _decide_one(fact, [c for c in similar if c.memory_id not in claimed])
        if decision.target_id and decision.event is not Event.NONE:
            claimed.add(decision.target_id)  # two facts of one turn never rewrite the same memory
        decisions.append(decision)
    return decisions


# A plan said to change, and what it changes from: 把云南的行程改成去西藏, 不去云南了, 婚礼取消了, going to Lisbon
# instead of Porto, cancelled the Japan trip. The old plan that names what is changed is replaced (with history).
_CHANGED_FROM = [
    re.compile(r"把(?P<old>[^，,。！？]{1,12}?)(?:改成|换成|改为|改到|换到|推迟到|提前到|推到)"),
    re.compile(r"不再?去(?P<old>[^，,。！？了]{1,10})"),
    re.compile(r"(?P<old>[^，,。！？]{1,12}?)(?:取消了|不去了|泡汤了|黄了)"),
    re.compile(r"\binstead of (?P<old>[\w' -]{2,30}?)(?=[,.!?]|$)", re.IGNORECASE),
    re.compile(r"\b(?:cancell?ed|postponed|called off|pushed back) (?P<old>[\w' -]{2,30}?)(?=[,.!?]|$| to\b| until\b)",
               re.IGNORECASE),
    re.compile(r"\bnot going to (?P<old>[\w' -]{2,30}?) any ?more\b", re.IGNORECASE),
]
# Words of what changes that do not tell one plan from another.
_NOT_WHICH = re.compile(r"^(?:" + rules_zh.TIME_WORDS + "|" + rules_en.TIME_WORDS + r"|用户|行程|计划|安排|旅行|旅游|"
                        r"user|trip|plan|plans|travel|the|my|our|a)$", re.IGNORECASE)


@lru_cache(maxsize=1024)
def _term_pattern(term: str) -> re.Pattern[str]:
    """A word that names a plan, found in a memory: anywhere in Chinese, as a whole word otherwise. Terms come from
    what users say, so they are compiled here once each, never per call (re's own cache is shared and small)."""
    return re.compile(re.escape(term) if is_chinese(term) else rf"\b{re.escape(term)}\b", re.IGNORECASE)


def _changed_plan(fact: Fact, similar: Sequence[Candidate]) -> Candidate | None:
    """The stored plan a fact says has changed: a plan memory holding every word that names what changed."""
    for pattern in _CHANGED_FROM:
        said = pattern.search(fact.text)
        if said is None:
            continue
        which = [t for t in query_terms(said.group("old")) if not _NOT_WHICH.match(t)]
        if not which:
            continue
        for candidate in similar:
            old = structure_of(candidate.text)
            if old is not None and old.kind is FactKind.PLAN and all(
                    _term_pattern(t).search(candidate.text) for t in which):
                return candidate
    return None


def _decide_one(fact: Fact, similar: Sequence[Candidate]) -> Decision:
    # What the character says about itself never rewrites what the user said about themselves, and vice versa.
    similar = [c for c in similar if c.about == fact.about]
    for candidate in similar:
        if overlap(fact.text, candidate.text) >= DUPLICATE_OVERLAP:
            return Decision(Event.NONE, candidate.text, candidate.memory_id, fact=fact, reason="same meaning")
    for candidate in similar:
        old = structure_of(candidate.text)
        if old is None:
            continue
        if fact.slot and old.slot == fact.slot and fact.about == old.about:
            # A mood or a routine said again is news about now (its time moves on); an address said again is not.
            restated = fact.slot == MOOD_SLOT or fact.slot.startswith(HABIT_SLOT)
            if _same_topic(fact.topic, old.topic) and fact.negated == old.negated and not restated \
                    and not _says_more(fact.text, candidate.text):
                return Decision(Event.NONE, candidate.text, candidate.memory_id, fact=fact, reason="same value")
            why = "stopped" if fact.negated and not old.negated else f"new {fact.slot}"
            return Decision(Event.UPDATE, fact.text, candidate.memory_id, candidate.text, fact, why)
        if fact.slot and fact.slot.startswith(HABIT_SLOT) and fact.negated and old.slot != fact.slot:
            continue  # "can't run for now" ends a running routine, not a liking for running
        if _same_topic(fact.topic, old.topic):
            if fact.negated != old.negated:
                return Decision(Event.UPDATE, fact.text, candidate.memory_id, candidate.text, fact, "reversed")
            if _says_more(fact.text, candidate.text):
                return Decision(Event.UPDATE, fact.text, candidate.memory_id, candidate.text, fact, "more detail")
    for candidate in similar:
        if _already_said(fact.text, candidate.text):
            return Decision(Event.NONE, candidate.text, candidate.memory_id, fact=fact, reason="already known")
    changed = _changed_plan(fact, similar)
    if changed is not None:
        return Decision(Event.UPDATE, fact.text, changed.memory_id, changed.text, fact, "plan changed")
    return Decision(Event.ADD, fact.text, fact=fact)


_NEGATION = re.compile(r"不|没|别|\b(?:no|not|never|no longer|n't|cannot)\b|n't\b", re.IGNORECASE)


def _already_said(new: str, old: str) -> bool:
    """The memory already says all the fact says, and more ("用户对花生过敏" / "用户对花生过敏，很严重的那种"), with
    the same polarity."""
    new_terms, old_terms = set(query_terms(new)), set(query_terms(old))
    return len(new_terms) >= 2 and new_terms < old_terms and (
        bool(_NEGATION.search(new)) == bool(_NEGATION.search(old)))
