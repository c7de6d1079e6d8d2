"""The offline write path compiles no regular expression per call (house rule 13).

`re.search(r"…", text)` looks its pattern up in re's own cache, which holds 512 patterns: once anything else in the
process fills it (a pattern built from data, per search), every such call recompiles. Patterns live at module level;
one built from a word the user said comes from a bounded cache of its own (offline._term_pattern).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from jiyi.core import offline
from jiyi.core.facts import Candidate, Decision
from jiyi.core.messages import ChatMessage

# Varied turns, so that most rules of both languages run: plans, habits and what ends them, health, moods, people
# and pets with pronouns, places, jobs, a called-off plan, small talk, questions.
WARM_UP = [
    ("我叫小林，今年28岁，住在杭州", "你好小林！"),
    ("我对花生过敏，很严重的那种", None),
    ("我每天早上跑步五公里", None),
    ("膝盖受伤了，医生说暂时不能跑步", "好好休息。"),
    ("我有个妹妹，叫小雨，她在北京读大学", None),
    ("她下个月要来杭州看我", None),
    ("我家猫叫煤球，它最近不爱吃饭，好担心它", None),
    ("下周我要去上海出差，周五回来", None),
    ("我打算下个月去云南旅行", None),
    ("我打算把云南的行程改成去西藏", None),
    ("项目顺利上线了，现在轻松多了", None),
    ("我不再吃素了", None),
    ("早上买了一杯拿铁，咖啡已经成了我每天的必需品", None),
    ("你觉得我该学什么乐器？", None),
    ("哈哈，好吧，谢谢你", None),
    ("I'm allergic to shellfish and I hate cilantro", None),
    ("My name is Dana and I'm 34, I live in Portland", "Nice to meet you, Dana!"),
    ("I work as a nurse at the children's hospital", None),
    ("I jog 5k every morning before work", None),
    ("I hurt my knee last week, so no running for now", None),
    ("My daughter Emma just turned six. She loves drawing horses", None),
    ("We adopted a puppy named Biscuit, he's a golden retriever", None),
    ("I'm planning to visit Japan next month with my sister", None),
    ("We cancelled the Japan trip", None),
    ("Feeling much more relaxed now that the exams are over", None),
    ("I'm not vegetarian anymore, I started eating fish again", None),
    ("I quit smoking two years ago and I don't drink coffee anymore", None),
    ("If I get the job, I'll move to Berlin", None),
    ("What do you think I should cook tonight?", None),
    ("lol thanks, that's really helpful", "Happy to help!"),
]
# Other turns, not seen during the warm-up: the rules' patterns are the same ones, already compiled.
DIFFERENT = [
    ("我老公是程序员，天天加班", None),
    ("我搬到了上海，在字节做后端开发", None),
    ("最近压力特别大，经常失眠", None),
    ("我每周游两次泳，平时也喜欢骑车", None),
    ("我男朋友下周过生日，我想送他一块手表", None),
    ("婚礼取消了，我们决定明年再办", None),
    ("我是从成都来的，最喜欢的菜是火锅", None),
    ("我的生日是3月12号", None),
    ("The doctor says I have high blood pressure, so I'm cutting down on salt", None),
    ("My favorite band is Radiohead and I play guitar on weekends", None),
    ("I moved to Denver last spring for a new job at a bank", None),
    ("My mom lives in Ohio, I call her every Sunday", None),
    ("Going to Lisbon instead of Porto this summer", None),
    ("I got a new job as a data analyst at Spotify", None),
    ("Been so stressed lately, work is crazy", None),
    ("Is it going to rain tomorrow?", None),
]


def _messages(user: str, assistant: str | None) -> list[ChatMessage]:
    messages = [ChatMessage(role="user", content=user)]
    if assistant:
        messages.append(ChatMessage(role="assistant", content=assistant))
    return messages


def _write(turns: Sequence[tuple[str, str | None]], decide: bool = True) -> list[Decision]:
    """The offline write path on a conversation: each turn's facts (the earlier turns as context) and, with `decide`,
    the decision on each against the memories of the turns before (duplicates, slots, reversals, changed plans)."""
    stored: list[Candidate] = []
    earlier: list[str] = []
    decisions: list[Decision] = []
    for user, assistant in turns:
        messages = _messages(user, assistant)
        facts = offline.extract_user_facts(messages, earlier) + offline.extract_agent_facts(messages)
        if decide:
            decisions += offline.decide_offline(facts, [stored] * len(facts))
        stored += [Candidate(f"m{len(stored) + i}", f.text, 0.9, f.about) for i, f in enumerate(facts)]
        earlier.append(user)
    return decisions


def _compilations(monkeypatch: pytest.MonkeyPatch, work: Callable[[], Any]) -> list[str]:
    """The patterns compiled while `work` runs. On Python 3.11-3.13 every re function and re.compile goes through
    re._compile, which calls re._compiler.compile only when none of its caches has the pattern (3.13 added a second,
    LRU one): counting those calls counts real compilations whatever the caches' size and eviction policy, which
    watching re._cache grow would not (it stops growing when full, and evicts differently across versions)."""
    compiled: list[str] = []
    real = re._compiler.compile  # type: ignore[attr-defined]

    def counting(pattern: Any, flags: int = 0) -> Any:
        compiled.append(str(pattern))
        return real(pattern, flags)

    with monkeypatch.context() as patch:
        patch.setattr(re._compiler, "compile", counting)  # type: ignore[attr-defined]
        work()
    return compiled


def test_extraction_and_decisions_compile_nothing_once_warm(monkeypatch: pytest.MonkeyPatch) -> None:
    decisions = _write(WARM_UP)
    # The rules run, and so does the lookup of a plan's words in memories (offline._changed_plan).
    assert sum(d.reason == "plan changed" for d in decisions) == 2, [(d.reason, d.text) for d in decisions]

    for i in range(600):  # more than re's cache holds (512): every pattern it had is gone
        re.search(f"x{i}", "")

    def work() -> None:
        # Decisions on new turns may compile a pattern for a word not seen before: once, in offline's bounded cache.
        _write(DIFFERENT, decide=False)
        _write(WARM_UP)

    compiled = _compilations(monkeypatch, work)
    assert compiled == [], f"{len(compiled)} patterns compiled per call, e.g. {compiled[:3]}"


def test_a_term_pattern_is_compiled_once() -> None:
    """Words that name a plan are looked up in memories through a bounded cache, one pattern per word."""
    assert offline._term_pattern("Japan") is offline._term_pattern("Japan")
    assert offline._term_pattern("Japan").search("User plans to visit JAPAN in May")
    assert not offline._term_pattern("Japan").search("User plans to visit Japanese gardens")
    assert offline._term_pattern("云南").search("用户打算下个月去云南旅行")
    assert offline._term_pattern.cache_info().maxsize is not None


def test_entity_extraction_and_the_graph_lookup_compile_nothing_once_warm(monkeypatch: pytest.MonkeyPatch) -> None:
    """Who-is-who extraction on the write path and the graph path's lookup of a question's entities on every search
    (core/entities.py, core/graph_recall.py) use only patterns compiled at import."""
    from datetime import UTC, datetime

    from jiyi.core.entities import extract_change
    from jiyi.core.graph_recall import asked_entities
    from jiyi.stores.entities import Graph

    def work() -> Graph:
        graph = Graph()
        said: list[str] = []
        for user, _ in [*WARM_UP, *DIFFERENT]:
            extract_change(user, graph, said, datetime(2026, 1, 1, tzinfo=UTC), ["m"])
            said.append(user)
        for question in ("How is Emma doing?", "我妹妹的男朋友是做什么的？", "what does my daughter like?"):
            asked_entities(question, graph)
        return graph

    assert {"Emma", "小雨"} <= {e.name for e in work().entities.values()}
    for i in range(600):  # more than re's cache holds (512): every pattern it had is gone
        re.search(f"x{i}", "")
    compiled = _compilations(monkeypatch, work)
    assert compiled == [], f"{len(compiled)} patterns compiled per call, e.g. {compiled[:3]}"
