"""The pure rules behind the lifecycle: importance, conflicts, abstraction, attribute questions, statement kinds."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jiyi.core import rules_en, rules_zh
from jiyi.core.abstraction import activity, is_activity, l1_sentence, repeated_activities, same_activity
from jiyi.core.conflicts import find_conflicts
from jiyi.core.facts import FactKind
from jiyi.core.forget_request import forget_request
from jiyi.core.importance import ImportanceWeights, importance_score, on_seed_scale
from jiyi.core.intent import asked_attributes, asks_about_past_chats
from jiyi.records import MemoryRecord, Scope

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def fact(text: str, day: float = 0, tags: tuple[str, ...] = ("personal",), confidence: float = 1.0,
         role: str = "user") -> MemoryRecord:
    return MemoryRecord(content=text, scope=Scope("u"), created_at=T0 + timedelta(days=day), tags=list(tags),
                        confidence=confidence, role=role)


# --- importance ---------------------------------------------------------------------------------------------------


def test_importance_follows_the_designs_measures() -> None:
    allergy = importance_score(kinds=["health"], text="用户对海鲜过敏", confidence=0.9, max_similarity=0.1)
    lunch = importance_score(kinds=["event"], text="用户中午吃了面", confidence=0.9, max_similarity=0.1)
    repeated = importance_score(kinds=["health"], text="用户对海鲜过敏", confidence=0.9, max_similarity=0.95)
    hedged = importance_score(kinds=["health"], text="用户可能对海鲜过敏", confidence=0.9, max_similarity=0.1)
    old = importance_score(kinds=["health"], text="用户对海鲜过敏", confidence=0.9, max_similarity=0.1,
                           happened=T0, now=T0 + timedelta(days=40))
    assert allergy > lunch  # impact
    assert allergy > repeated  # scarcity
    assert allergy > hedged  # certainty
    assert allergy > old  # recency
    assert allergy == pytest.approx(0.25 * 0.9 + 0.35 * 1.0 + 0.2 + 0.2 * 0.9)
    assert on_seed_scale(0.0) == 0.5 and on_seed_scale(1.0) == 2.5


@given(st.floats(0, 1), st.floats(0, 1), st.floats(0, 1))
def test_importance_is_a_share(similarity: float, confidence: float, other: float) -> None:
    score = importance_score(kinds=["other"], text="x", confidence=confidence, max_similarity=similarity)
    assert 0.0 <= score <= 1.0
    more_similar = importance_score(kinds=["other"], text="x", confidence=confidence,
                                    max_similarity=max(similarity, other))
    assert more_similar <= score


def test_importance_weights_must_sum_to_one() -> None:
    with pytest.raises(ValueError):
        ImportanceWeights(scarcity=0.5)


# --- conflicts ----------------------------------------------------------------------------------------------------


def test_a_newer_value_of_an_attribute_supersedes_the_older() -> None:
    old = fact("用户住在无锡", 0, ("personal", "slot:residence"))
    new = fact("用户搬到了深圳", 30, ("personal", "slot:residence"))
    hometown = fact("用户来自贵阳", 0, ("personal", "slot:hometown"))
    [resolution] = find_conflicts([new, old, hometown])
    assert resolution.loser is old and resolution.winner is new and "newer" in resolution.reason


def test_a_clearly_more_certain_older_value_wins() -> None:
    sure = fact("用户来自贵阳", 0, ("personal", "slot:hometown"), confidence=1.0)
    guess = fact("用户来自成都", 10, ("personal", "slot:hometown"), confidence=0.5)
    [resolution] = find_conflicts([sure, guess])
    assert resolution.winner is sure and "certain" in resolution.reason


def test_a_reversal_supersedes_and_agreement_is_not_a_conflict() -> None:
    vegetarian = fact("用户吃素", 0, ("health",))
    not_any_more = fact("用户不再吃素", 40, ("health",))
    [resolution] = find_conflicts([vegetarian, not_any_more])
    assert resolution.loser is vegetarian
    assert find_conflicts([fact("用户吃素", 0, ("health",)), fact("用户吃素", 5, ("health",))]) == []


def test_change_over_time_coexists() -> None:
    tense = fact("用户十天前很紧张", 0, ("state",))
    relaxed = fact("用户现在很放松", 10, ("state",))
    assert find_conflicts([tense, relaxed]) == []


def test_verbatim_memories_and_the_characters_facts_are_not_the_users_conflicts() -> None:
    assert find_conflicts([fact("用户住在杭州", 0, ()), fact("用户住在上海", 1, ())]) == []
    user = fact("用户住在杭州", 0, ("personal", "slot:residence"))
    character = fact("小林住在上海", 1, ("persona", "slot:residence"), role="assistant")
    assert find_conflicts([user, character]) == []


# --- abstraction --------------------------------------------------------------------------------------------------


def test_activity_takes_the_time_out() -> None:
    assert activity("用户今天又去楼下买了两杯美式") == "用户去楼下买两杯美式"
    assert activity("User went to the gym again last night") == "User went to the gym"
    assert l1_sentence(["用户今天又去楼下买了两杯美式", "用户昨天去楼下买了两杯美式", "用户下午去瑞幸买了一杯美式"]) \
        == "用户经常去楼下买两杯美式"
    assert l1_sentence(["User had pho for lunch yesterday", "User had pho for lunch again"]) \
        == "User often had pho for lunch"


def test_repeated_activities_need_three_days() -> None:
    texts = ["用户今天又去健身房练腿", "用户昨晚去健身房练腿了", "用户下午去健身房练腿", "用户养了一只猫",
             "用户昨天去宜家逛了逛"]
    days = [0, 2, 5, 6, 7]
    records = [fact(t, d, ("event",)) for t, d in zip(texts, days, strict=True)]
    [group] = repeated_activities(records)
    assert [r.content for r in group.members] == texts[:3]
    assert group.sentence == "用户经常去健身房练腿"
    same_day = [fact(t, 0, ("event",)) for t in texts]
    assert repeated_activities(same_day) == []
    english = [fact(t, d, ("event",)) for d, t in enumerate(
        ["User had pho for lunch", "User had ramen for dinner", "User had pho for lunch again",
         "User had pho for lunch yesterday"])]
    [group] = repeated_activities(english)
    assert len(group.members) == 3 and group.sentence == "User often had pho for lunch"
    assert same_activity("用户今天又去楼下买了两杯美式", "用户经常去楼下买两杯美式") == 1.0
    assert all(is_activity(r) for r in records)
    assert not is_activity(fact("用户叫小雪", 0, ("personal",)))


# --- what a question asks for ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("query", "slots"), [
    ("我老家是哪里的？", ["hometown"]), ("Where am I originally from?", ["hometown"]),
    ("我现在住在哪个城市？", ["residence"]), ("Which city do I live in now?", ["residence"]),
    ("我在哪上班来着", ["job"]), ("What do I do for a living?", ["job"]),
    ("我现在在哪家公司上班？", ["job"]), ("我在哪个单位工作来着", ["job"]), ("我老公在哪家公司上班", []),
    ("我叫什么名字？", ["name"]), ("你叫什么？", []), ("晚饭推荐什么？", []), ("今天天气不错", []),
    ("我是做什么工作的来着", ["job"]), ("老家是哪儿来着？", ["hometown"]), ("我们家在哪个城市", ["residence"]),
    ("你知道我住哪吗", ["residence"]), ("Where did I grow up?", ["hometown"]),
    ("我搬家之前是住哪个城市来着？", ["residence"]), ("国庆回老家，给我爸带点啥好", ["hometown"]),
    # someone else's: a relative, a friend, the assistant, a name
    ("我邻居住在哪里？", []), ("我妈老家是哪的", []), ("我老公是做什么的", []), ("你住哪呀", []),
    ("星星你住在哪里呀", []), ("我女朋友的老家在哪", []), ("Where did my mom grow up?", []),
    ("What does her husband do for a living?", []), ("Which city does your sister live in now?", []),
    ("What does my spouse do for a living?", []), ("Where does my hubby work?", []), ("我爱人在哪上班", []),
    ("Where did my stepdad grow up?", []), ("我家老爷子老家是哪的", []), ("Where does my bro live now?", []),
])
def test_attribute_questions(query: str, slots: list[str]) -> None:
    assert [a.slot for a in asked_attributes(query)] == slots


def test_questions_about_past_chats() -> None:
    assert asks_about_past_chats("我们上次聊了什么？") and asks_about_past_chats("What did we talk about last time?")
    assert not asks_about_past_chats("我老家是哪里的？")


# --- statement kinds ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("clause", "kind"), [
    ("I went to the park on Saturday", FactKind.EVENT), ("I watched Inception last night", FactKind.EVENT),
    ("I am flying to Lisbon next month", FactKind.PLAN), ("I teach chemistry in Ohio", FactKind.OTHER),
])
def test_english_statement_kinds(clause: str, kind: FactKind) -> None:
    assert rules_en.statement_kind(clause) is kind


@pytest.mark.parametrize(("clause", "kind"), [
    ("我昨晚去宜家逛了逛", FactKind.EVENT), ("我下周要去张家界出差", FactKind.PLAN),
    ("我在字节做后端开发", FactKind.OTHER),
])
def test_chinese_statement_kinds(clause: str, kind: FactKind) -> None:
    assert rules_zh.statement_kind(clause) is kind


def test_irregular_pasts_are_not_inflected() -> None:
    assert rules_en.to_third_person("I went to the museum") == "User went to the museum"
    assert rules_en.to_third_person("I had sushi for dinner") == "User had sushi for dinner"


@pytest.mark.parametrize(("said", "kept"), [
    ("I need a latte every day", "User needs a latte every day"),  # "need" ends like a past tense
    ("I feed the cat at seven", "User feeds the cat at seven"),
    ("I miss my grandma", "User misses User's grandma"),
    ("I stress about money", "User stresses about money"),
    ("I played chess yesterday", "User played chess yesterday"),
    ("I agreed to host the party", "User agreed to host the party"),
])
def test_present_tenses_are_inflected_and_pasts_are_not(said: str, kept: str) -> None:
    assert rules_en.to_third_person(said) == kept


@pytest.mark.parametrize(("text", "topic"), [
    ("忘掉我刚才说的", None), ("别记这个", None), ("请忘记这件事", None), ("forget that", None),
    ("Forget what I just said.", None), ("把我住在无锡这件事删了", "我住在无锡"), ("忘了关于我前任的事吧", "我前任"),
    ("删掉我对海鲜过敏的记忆", "我对海鲜过敏"), ("Please forget about my ex", "my ex"),
])
def test_forget_requests(text: str, topic: str | None) -> None:
    request = forget_request(text)
    assert request is not None and request.topic == topic


@pytest.mark.parametrize("text", ["我忘了带钥匙", "我忘了他叫什么", "忘了带伞", "I forgot my keys", "你还记得吗",
                                  "Don't forget to call mom"])
def test_statements_about_forgetting_are_not_requests(text: str) -> None:
    assert forget_request(text) is None
