"""The write path at library level, on a real store: a chat turn becomes memories (ADD / UPDATE / DELETE / NONE /
BOOST), every change leaves a history row, the turn is kept whatever the LLM does, and one user never touches
another's memories.

The LLM is jiyi's own test double, `ScriptedLLM`, passed to Memory the real way; its replies are written as a model
would answer the prompts jiyi sends (decisions refer to the small integer ids the prompt shows)."""

from __future__ import annotations

import json
import re
import sqlite3
import tempfile
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jiyi import Memory, Scope, build_embedder, build_store
from jiyi.core import prompts
from jiyi.embedders.base import Embedder
from jiyi.llms.base import LLMError, LLMTimeout
from jiyi.llms.scripted import ScriptedLLM
from jiyi.records import utcnow
from jiyi.stores.base import MemoryStore

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
DESMOND = ["Hi, my name is Desmond.", "I have a sister.", "Her name is Jesica.", "She has a dog."]

MakeMemory = Callable[..., Memory]


@pytest.fixture(scope="module")
def e5() -> Embedder:
    """The bundled multilingual model, where what counts as "similar" matters; loaded once for the module."""
    return build_embedder("e5")


@pytest.fixture
def make_memory(store: MemoryStore, embedder: Embedder) -> Iterator[MakeMemory]:
    """`make(llm=None, embedder_=None, **config)`: a Memory on the test's store (hashing embedder by default)."""
    made: list[Memory] = []

    def make(llm: ScriptedLLM | None = None, embedder_: Embedder | None = None, **config: Any) -> Memory:
        m = Memory(store, embedder_ or embedder, llm=llm, config=config or None)
        made.append(m)
        return m

    yield make
    for m in made:
        m.close()


# --- helpers --------------------------------------------------------------------------------------------------

def rows(m: Memory, memory_id: str) -> list[tuple[str, str | None, str | None]]:
    return [(r["event"], r["old_memory"], r["new_memory"]) for r in m.history(memory_id)]


def texts(m: Memory, **scope: str) -> list[str]:
    return sorted(item["memory"] for item in m.get_all(**scope)["results"] if item["category"] != "episode")


def events(m: Memory, result: dict[str, Any]) -> list[tuple[str, str]]:
    """Every event of a turn (NONE and BOOST included), as (event, memory id)."""
    return [(r["event"], r["id"]) for r in m.get_event(result["event_id"])["results"]]


def make_due(m: Memory, event_id: str) -> None:
    """Move time: the turn's retry is due now."""
    turn = m.store.get_turn(event_id)
    assert turn is not None
    turn.next_attempt_at = utcnow() - timedelta(seconds=1)
    m.store.save_turn(turn)


def system_of(messages: list[dict[str, str]]) -> str:
    return messages[0]["content"]


def data_block(messages: list[dict[str, str]], label: str) -> Any:
    """A JSON line of the decision prompt's data block ("Existing memories: [...]")."""
    match = re.search(rf"^{label}: (.*)$", messages[1]["content"], re.MULTILINE)
    return json.loads(match.group(1)) if match else None


def said_by_user(messages: list[dict[str, str]]) -> str:
    return messages[1]["content"].rsplit("user: ", 1)[1].splitlines()[0]


def facts(*items: str, kind: str = "personal") -> dict[str, Any]:
    return {"facts": [{"text": t, "type": kind, "importance": 0.8, "category": "fact"} for t in items]}


def is_decision(messages: list[dict[str, str]]) -> bool:
    return "Existing memories:" in messages[1]["content"]


def add_all_new(messages: list[dict[str, str]]) -> dict[str, Any]:
    """What a model answers when nothing shown is related: keep the existing ones, add each new fact."""
    existing = data_block(messages, "Existing memories")
    new = data_block(messages, "New facts")
    return {"memory": [{"id": e["id"], "text": e["text"], "event": "NONE"} for e in existing]
            + [{"id": str(len(existing) + i), "text": f, "event": "ADD"} for i, f in enumerate(new)]}


# --- mem0's classic example -----------------------------------------------------------------------------------

def desmond_model(messages: list[dict[str, str]]) -> dict[str, Any]:
    """A model that reads each turn alone (as mem0 extracts) and resolves "her" when it sees the memories."""
    if system_of(messages) == prompts.USER_FACTS_EN:
        return facts({"Hi, my name is Desmond.": "Name is Desmond", "I have a sister.": "Has a sister",
                      "Her name is Jesica.": "Her name is Jesica", "She has a dog.": "She has a dog"}
                     [said_by_user(messages)])
    assert system_of(messages) == prompts.DECIDE_EN
    existing = {e["text"]: e["id"] for e in data_block(messages, "Existing memories")}
    [new] = data_block(messages, "New facts")
    keep = [{"id": i, "text": t, "event": "NONE"} for t, i in existing.items()]
    fresh = str(len(existing))
    if new == "Her name is Jesica":
        sister = existing["Has a sister"]
        return {"memory": [k for k in keep if k["id"] != sister] + [
            {"id": sister, "text": "Has a sister named Jesica", "event": "UPDATE", "old_memory": "Has a sister"}]}
    if new == "She has a dog":
        return {"memory": [*keep, {"id": fresh, "text": "Jesica has a dog", "event": "ADD"}]}
    return {"memory": [*keep, {"id": fresh, "text": new, "event": "ADD"}]}


def test_desmond_with_an_llm_updates_the_same_memory(make_memory: MakeMemory) -> None:
    llm = ScriptedLLM(responder=desmond_model)
    m = make_memory(llm)
    out = [m.add(text, user_id="desmond") for text in DESMOND]

    [name] = out[0]["results"]
    [sister] = out[1]["results"]
    [update] = out[2]["results"]
    [dog] = out[3]["results"]
    assert (name["event"], name["memory"]) == ("ADD", "Name is Desmond")
    assert (sister["event"], sister["memory"]) == ("ADD", "Has a sister")
    assert update == {"id": sister["id"], "memory": "Has a sister named Jesica", "event": "UPDATE",
                      "previous_memory": "Has a sister", "role": "user"}
    assert (dog["event"], dog["memory"]) == ("ADD", "Jesica has a dog")
    assert rows(m, name["id"]) == [("ADD", None, "Name is Desmond")]
    assert rows(m, sister["id"]) == [("ADD", None, "Has a sister"),
                                     ("UPDATE", "Has a sister", "Has a sister named Jesica")]
    assert rows(m, dog["id"]) == [("ADD", None, "Jesica has a dog")]
    assert texts(m, user_id="desmond") == ["Has a sister named Jesica", "Jesica has a dog", "Name is Desmond"]

    # The first fact had nothing to compare with: no decision call. Each later turn: one extraction, one decision.
    kinds = ["decide" if is_decision(c.messages) else "extract" for c in llm.calls]
    assert kinds == ["extract", "extract", "decide", "extract", "decide", "extract", "decide"]
    assert all(c.json_mode for c in llm.calls)
    for call in llm.calls:
        assert not UUID.search(call.prompt), call.prompt  # the model never sees (so cannot garble) a real id
        if is_decision(call.messages):
            assert all(re.fullmatch(r"\d{1,2}", e["id"]) for e in data_block(call.messages, "Existing memories"))


def test_desmond_offline(make_memory: MakeMemory, e5: Embedder) -> None:
    m = make_memory(embedder_=e5)
    out = [m.add(text, user_id="desmond")["results"] for text in DESMOND]
    [name], [sister], [update], [dog] = out
    assert (name["event"], name["memory"]) == ("ADD", "User's name is Desmond")
    assert (sister["event"], sister["memory"]) == ("ADD", "User has a sister")
    # "Her" is resolved from the user's previous message: the sister memory gains the name, in place.
    assert (update["event"], update["id"], update["previous_memory"]) == ("UPDATE", sister["id"], "User has a sister")
    assert "Jesica" in update["memory"] and "sister" in update["memory"]
    assert (dog["event"], dog["memory"]) == ("ADD", "User's sister has a dog")
    assert rows(m, sister["id"]) == [("ADD", None, "User has a sister"),
                                     ("UPDATE", "User has a sister", update["memory"])]
    assert rows(m, name["id"]) == [("ADD", None, "User's name is Desmond")]
    assert texts(m, user_id="desmond") == sorted(["User's name is Desmond", update["memory"], dog["memory"]])


# --- offline must-shows ---------------------------------------------------------------------------------------

def test_offline_allergy_is_remembered_in_chinese(make_memory: MakeMemory) -> None:
    m = make_memory()
    [item] = m.add("我海鲜过敏，别推荐海鲜", user_id="u")["results"]
    assert item["event"] == "ADD"
    assert item["memory"].startswith("用户") and "海鲜" in item["memory"] and "过敏" in item["memory"]
    assert texts(m, user_id="u") == [item["memory"]]
    assert rows(m, item["id"]) == [("ADD", None, item["memory"])]


def test_offline_reversed_habit_replaces_the_old_memory(make_memory: MakeMemory, e5: Embedder) -> None:
    m = make_memory(embedder_=e5)
    [old] = m.add("我吃素", user_id="u")["results"]
    assert old["memory"] == "用户吃素"
    m.add("我不再吃素了", user_id="u")
    history = rows(m, old["id"])
    assert [event for event, _, _ in history] in (["ADD", "UPDATE"], ["ADD", "DELETE"])
    assert "用户吃素" not in texts(m, user_id="u")  # never both "vegetarian" and "no longer vegetarian"
    event, _, now = history[-1]
    if event == "UPDATE":
        assert now is not None and m.get(old["id"])["memory"] == now
        assert "不再" in now or "不吃素" in now


@pytest.mark.parametrize("before, others, after, gone, now", [
    ("我住在杭州", "我叫小明。我对花生过敏。我有一个妹妹。我喜欢爬山。我在腾讯工作。我养了一只猫。", "我搬到上海了",
     "杭州", "上海"),
    ("I live in Paris", "My name is Desmond. I'm allergic to peanuts. I have a sister. I love hiking. "
     "I work at Google. I have a cat.", "I moved to Berlin", "Paris", "Berlin"),
], ids=["zh", "en"])
def test_offline_move_updates_the_residence(make_memory: MakeMemory, e5: Embedder, before: str, others: str,
                                            after: str, gone: str, now: str) -> None:
    m = make_memory(embedder_=e5)
    [old] = m.add(before, user_id="u")["results"]
    unrelated = m.add(others, user_id="u")["results"]
    assert len(unrelated) == 6  # more memories than candidates per fact: the similar one has to be found
    [new] = m.add(after, user_id="u")["results"]
    assert (new["event"], new["id"], new["previous_memory"]) == ("UPDATE", old["id"], old["memory"])
    assert now in new["memory"] and gone not in new["memory"]
    assert rows(m, old["id"]) == [("ADD", None, old["memory"]), ("UPDATE", old["memory"], new["memory"])]
    assert all(rows(m, u["id"]) == [("ADD", None, u["memory"])] for u in unrelated)


def test_offline_repeated_fact_is_none(make_memory: MakeMemory, e5: Embedder) -> None:
    m = make_memory(embedder_=e5)
    [first] = m.add("我住在杭州", user_id="u")["results"]
    again = m.add("我住在杭州", user_id="u")
    assert again["results"] == []  # mem0's add() reports ADD / UPDATE / DELETE only
    assert events(m, again) == [("NONE", first["id"])]
    assert texts(m, user_id="u") == ["用户住在杭州"]
    assert rows(m, first["id"]) == [("ADD", None, "用户住在杭州")]  # no history row for a NONE


@pytest.mark.parametrize(("known", "said"), [
    (["用户在一家互联网公司做产品设计师", "用户养了一只橘猫叫年糕", "用户周末喜欢去爬山", "用户的妈妈住在成都"],
     "我对花生过敏，吃一点就会起疹子"),
    (["The user works as a product designer", "The user has an orange cat called Niangao",
      "The user likes hiking at weekends", "The user's mother lives in Chengdu"],
     "I'm allergic to peanuts, even a little gives me a rash"),
])
def test_a_fact_unrelated_to_what_is_known_is_as_important_as_in_an_empty_memory(
        make_memory: MakeMemory, e5: Embedder, known: list[str], said: str) -> None:
    """Scarcity compares two memories on the range for such pairs: on the query range, every Chinese memory looked
    "the same" as its unrelated nearest neighbour (cosine ~0.9) and lost the scarcity share of its importance."""
    m = make_memory(embedder_=e5)
    [alone] = m.add(said, user_id="empty")["results"]
    for text in known:
        m.add(text, user_id="u", infer=False)
    [beside] = m.add(said, user_id="u")["results"]
    assert beside["memory"] == alone["memory"]
    assert m.get(beside["id"])["importance"] == pytest.approx(m.get(alone["id"])["importance"], abs=0.05)


@pytest.mark.parametrize("chat", ["哈哈好的", "What should I cook tonight?", "谢谢你！", "你觉得我应该学什么？"])
def test_offline_chit_chat_is_not_remembered(make_memory: MakeMemory, chat: str) -> None:
    m = make_memory()
    out = m.add(chat, user_id="u")
    assert out["results"] == []
    assert texts(m, user_id="u") == []
    assert m.get_event(out["event_id"])["status"] == "SUCCEEDED"
    assert [msg.content for msg in m.store.list_messages(Scope("u"))] == [chat]  # the turn itself is kept


def test_a_fact_repeated_in_a_new_run_moves_the_memory_there(make_memory: MakeMemory) -> None:
    m = make_memory()
    [item] = m.add("我住在杭州", user_id="u", run_id="chat-1")["results"]
    again = m.add("我住在杭州", user_id="u", run_id="chat-2")
    assert again["results"] == [] and events(m, again) == [("NONE", item["id"])]
    assert m.get(item["id"])["run_id"] == "chat-2"
    assert texts(m, user_id="u", run_id="chat-2") == ["用户住在杭州"]
    assert texts(m, user_id="u", run_id="chat-1") == []
    assert rows(m, item["id"]) == [("ADD", None, "用户住在杭州")]
    assert len(m.get(item["id"])["provenance"]) == 2  # said twice


# --- provenance: each fact cites the messages it was made from ------------------------------------------------

README_ADD = [{"role": "user", "content": "我对海鲜过敏，别给我推荐海鲜"},
              {"role": "assistant", "content": "好的，记住了"},
              {"role": "user", "content": "I moved to Shanghai last spring"}]


def cited(m: Memory, result: dict[str, Any]) -> dict[str, list[str]]:
    """Each memory the add made, with the texts of the messages its provenance names."""
    out = {}
    for item in result["results"]:
        refs = [p["message_id"] for p in m.get(item["id"])["provenance"]]
        out[item["memory"]] = [message.content for message in m.store.get_messages(refs)]
    return out


@pytest.mark.parametrize("extractor", ["offline", "llm"])
def test_each_fact_cites_the_message_it_came_from(make_memory: MakeMemory, extractor: str) -> None:
    """The README's first add: the allergy cites what was said about seafood, not the move to Shanghai said in the
    same add (the console's "why remembered" shows these messages)."""
    llm = ScriptedLLM([facts("用户对海鲜过敏", "User moved to Shanghai")]) if extractor == "llm" else None
    m = make_memory(llm)
    assert cited(m, m.add(README_ADD, user_id="alice")) == {
        "用户对海鲜过敏": ["我对海鲜过敏，别给我推荐海鲜"],
        "User moved to Shanghai": ["I moved to Shanghai last spring"]}


def test_a_fact_the_model_finds_known_cites_the_message_that_said_it_again(make_memory: MakeMemory) -> None:
    """The model's NONE names the memory, not the fact: the message that says it again is found by its words."""
    def model(messages: list[dict[str, str]]) -> dict[str, Any]:
        if not is_decision(messages):
            return facts("用户对海鲜过敏", "User moved to Shanghai")
        [known] = data_block(messages, "Existing memories")
        return {"memory": [{"id": known["id"], "text": known["text"], "event": "NONE"},
                           {"id": "new", "text": "User moved to Shanghai", "event": "ADD"}]}

    m = make_memory(ScriptedLLM([facts("用户对海鲜过敏")], responder=model))
    [allergy] = m.add("我对海鲜过敏", user_id="alice")["results"]
    m.add(README_ADD, user_id="alice")
    sources = m.store.get_messages([p["message_id"] for p in m.get(allergy["id"])["provenance"]])
    assert [message.content for message in sources] == ["我对海鲜过敏", "我对海鲜过敏，别给我推荐海鲜"]


def test_a_fact_the_model_made_of_two_messages_cites_both(make_memory: MakeMemory) -> None:
    m = make_memory(ScriptedLLM([facts("Name is Desmond", "Has a sister named Jesica", "Jesica has a dog")]))
    said = m.add([{"role": "user", "content": text} for text in DESMOND], user_id="u")
    assert cited(m, said) == {"Name is Desmond": [DESMOND[0]], "Has a sister named Jesica": DESMOND[1:3],
                              "Jesica has a dog": [DESMOND[2], DESMOND[3]]}


def test_a_fact_written_in_another_language_cites_the_message_of_the_same_meaning(make_memory: MakeMemory,
                                                                                   e5: Embedder) -> None:
    """No word in common with what was said: a message in the other language, the nearest in meaning of those."""
    m = make_memory(ScriptedLLM([facts("User is allergic to seafood", "用户去年春天搬到了上海")]), e5)
    said = [*README_ADD, {"role": "user", "content": "My cat Mimi sleeps on the keyboard"}]
    assert cited(m, m.add(said, user_id="alice")) == {
        "User is allergic to seafood": ["我对海鲜过敏，别给我推荐海鲜"],
        "用户去年春天搬到了上海": ["I moved to Shanghai last spring"]}


def test_a_fact_said_in_two_messages_cites_both_offline(make_memory: MakeMemory) -> None:
    m = make_memory()
    said = m.add([{"role": "user", "content": "我住在杭州"}, {"role": "assistant", "content": "杭州很美"},
                  {"role": "user", "content": "我住在杭州"}, {"role": "user", "content": "我喜欢喝咖啡"}],
                 user_id="u")
    assert cited(m, said) == {"用户住在杭州": ["我住在杭州", "我住在杭州"], "用户喜欢喝咖啡": ["我喜欢喝咖啡"]}


def test_an_update_adds_only_its_own_message_to_the_provenance(make_memory: MakeMemory) -> None:
    m = make_memory()
    [home] = m.add("我住在杭州", user_id="u")["results"]
    m.add([{"role": "user", "content": "我搬到了上海"}, {"role": "user", "content": "我喜欢喝咖啡"}], user_id="u")
    assert m.get(home["id"])["memory"] == "用户搬到了上海"
    sources = m.store.get_messages([p["message_id"] for p in m.get(home["id"])["provenance"]])
    assert [message.content for message in sources] == ["我住在杭州", "我搬到了上海"]


# --- LLM decisions: whatever the model answers, nothing is lost or misapplied ---------------------------------

@pytest.fixture
def paris(make_memory: MakeMemory) -> tuple[Memory, ScriptedLLM, str]:
    """A Memory with a scripted LLM and one memory, "Lives in Paris"."""
    llm = ScriptedLLM([facts("Lives in Paris")])
    m = make_memory(llm)
    [item] = m.add("I live in Paris", user_id="u")["results"]
    return m, llm, item["id"]


@pytest.mark.parametrize("invented", ["7", "paris-real-id"])
def test_update_of_an_invented_id_becomes_an_add(paris: tuple[Memory, ScriptedLLM, str], invented: str) -> None:
    m, llm, paris_id = paris
    target = paris_id if invented == "paris-real-id" else invented  # a real uuid was never shown: also invented
    llm.script(facts("Works at Google"), {"memory": [{"id": target, "text": "Works at Google", "event": "UPDATE",
                                                      "old_memory": "Works at Yahoo"}]})
    [added] = m.add("I work at Google", user_id="u")["results"]
    assert added["event"] == "ADD" and added["memory"] == "Works at Google" and added["id"] != paris_id
    assert rows(m, paris_id) == [("ADD", None, "Lives in Paris")]
    assert texts(m, user_id="u") == ["Lives in Paris", "Works at Google"]


def test_delete_of_an_unknown_id_is_ignored(paris: tuple[Memory, ScriptedLLM, str]) -> None:
    m, llm, paris_id = paris
    llm.script(facts("Is not sure where to live"),
               {"memory": [{"id": "42", "event": "DELETE"}, {"id": paris_id, "event": "DELETE"},
                           {"id": "", "event": "DELETE"}]})
    out = m.add("Not sure where I'll live next year", user_id="u")
    assert out["results"] == []
    assert m.get_event(out["event_id"])["status"] == "SUCCEEDED"
    assert rows(m, paris_id) == [("ADD", None, "Lives in Paris")]
    assert texts(m, user_id="u") == ["Lives in Paris"]


def test_unknown_events_and_malformed_items_are_ignored(paris: tuple[Memory, ScriptedLLM, str]) -> None:
    m, llm, paris_id = paris
    llm.script(facts("Lives in Paris, France"),
               {"memory": [{"id": "0", "text": "Lives in Paris, France", "event": "MERGE"},
                           {"id": "0", "event": "UPDATE"}, {"event": "ADD"}, "ADD everything", 3, None,
                           {"id": "0", "text": "", "event": "ADD"}]})
    out = m.add("Paris, France that is", user_id="u")
    assert out["results"] == [] and events(m, out) == []
    assert m.get_event(out["event_id"])["status"] == "SUCCEEDED"
    assert rows(m, paris_id) == [("ADD", None, "Lives in Paris")]


def test_delete_and_none_by_their_shown_ids(paris: tuple[Memory, ScriptedLLM, str]) -> None:
    m, llm, paris_id = paris
    llm.script(facts("Never lived in Paris"), {"memory": [{"id": "0", "event": "DELETE"}]})
    [deleted] = m.add("Actually I never lived in Paris, I was joking", user_id="u")["results"]
    assert deleted == {"id": paris_id, "memory": "Lives in Paris", "event": "DELETE", "role": "user"}
    assert [e for e, _, _ in rows(m, paris_id)] == ["ADD", "DELETE"]
    assert texts(m, user_id="u") == []


def test_facts_as_plain_strings(make_memory: MakeMemory) -> None:
    llm = ScriptedLLM([{"facts": ["Likes green tea", "Lives in Paris", "", 42]}])  # mem0 custom prompt style
    m = make_memory(llm)
    out = m.add("I like green tea. I live in Paris.", user_id="u")
    assert sorted((r["event"], r["memory"]) for r in out["results"]) == [("ADD", "Likes green tea"),
                                                                         ("ADD", "Lives in Paris")]
    assert len(llm.calls) == 1  # nothing to compare with: no decision call


def test_custom_prompts_from_the_config_reach_the_llm(make_memory: MakeMemory) -> None:
    extraction = 'Only extract food preferences. Answer {"facts": ["..."]}.'
    update = 'You reconcile food memories. Answer {"memory": [...]}'
    llm = ScriptedLLM([{"facts": ["Likes ramen"]}, {"facts": ["Likes spicy ramen"]},
                       {"memory": [{"id": "0", "text": "Likes spicy ramen", "event": "UPDATE"}]}])
    m = make_memory(llm, custom_fact_extraction_prompt=extraction, custom_update_memory_prompt=update)
    m.add("I like ramen", user_id="u")
    [updated] = m.add("Spicy ramen especially", user_id="u")["results"]
    assert updated["event"] == "UPDATE" and updated["memory"] == "Likes spicy ramen"
    assert [system_of(c.messages) for c in llm.calls] == [extraction, extraction, update]
    assert "user: I like ramen" in llm.calls[0].messages[1]["content"]  # the data block stays
    assert data_block(llm.calls[2].messages, "Existing memories") == [{"id": "0", "text": "Likes ramen"}]


def test_custom_instructions_and_the_per_call_prompt(make_memory: MakeMemory) -> None:
    llm = ScriptedLLM([{"facts": []}, {"facts": []}])
    m = make_memory(llm, custom_instructions="Only remember what the user says about their health.")
    m.add("I have asthma", user_id="u")
    m.add("I have asthma", user_id="u", prompt="Extract only allergies.")
    first, second = (system_of(c.messages) for c in llm.calls)
    assert first.startswith("Only remember what the user says about their health.")
    assert prompts.FORMAT_REMINDER.strip() in first  # the app's words, and still the answer shape jiyi parses
    assert second == "Extract only allergies."


def agent_model(messages: list[dict[str, str]]) -> dict[str, Any]:
    system = system_of(messages)
    if system == prompts.USER_FACTS_EN:
        return facts("Loves cats", kind="preference")
    if system == prompts.AGENT_FACTS_EN:
        return {"facts": [{"text": "Xiao grew up in Kyoto with three cats", "type": "persona", "importance": 0.6}]}
    return add_all_new(messages)


def test_agent_mode_remembers_what_the_character_says_about_itself(make_memory: MakeMemory) -> None:
    llm = ScriptedLLM(responder=agent_model)
    m = make_memory(llm)
    turn = [{"role": "user", "content": "I love cats"},
            {"role": "assistant", "content": "Me too! I grew up in Kyoto with three cats.", "name": "Xiao"}]
    out = m.add(turn, user_id="alice", agent_id="xiao")
    extraction_prompts = [system_of(c.messages) for c in llm.calls if not is_decision(c.messages)]
    assert sorted(extraction_prompts) == sorted([prompts.USER_FACTS_EN, prompts.AGENT_FACTS_EN])
    by_text = {r["memory"]: r for r in out["results"]}
    assert by_text["Loves cats"]["role"] == "user"
    character = by_text["Xiao grew up in Kyoto with three cats"]
    assert character["role"] == "assistant" and character["actor_id"] == "Xiao"
    stored = m.get(character["id"])
    assert stored["role"] == "assistant" and [p["role"] for p in stored["provenance"]] == ["assistant"]
    assert [r["role"] for r in m.history(character["id"])] == ["assistant"]


def test_without_an_agent_id_the_assistant_is_not_extracted(make_memory: MakeMemory) -> None:
    llm = ScriptedLLM(responder=agent_model)
    m = make_memory(llm)
    m.add([{"role": "user", "content": "I love cats"}, {"role": "assistant", "content": "I grew up in Kyoto."}],
          user_id="alice")
    assert [system_of(c.messages) for c in llm.calls] == [prompts.USER_FACTS_EN]


def test_offline_agent_mode_remembers_the_character(make_memory: MakeMemory) -> None:
    m = make_memory()
    out = m.add([{"role": "user", "content": "I love cats"},
                 {"role": "assistant", "content": "Me too! I grew up in Kyoto.", "name": "Xiao"}],
                user_id="alice", agent_id="xiao")
    by_text = {r["memory"]: r for r in out["results"]}
    assert by_text["User loves cats"]["role"] == "user"
    assert by_text["Xiao grew up in Kyoto"]["role"] == "assistant"
    assert by_text["Xiao grew up in Kyoto"]["actor_id"] == "Xiao"


@pytest.mark.parametrize("user_said, user_memory, question, character_said, name", [
    ("我喜欢猫", "用户喜欢猫", "你喜欢猫吗？", "我不喜欢猫", "小湘"),
    ("I love cats", "User loves cats", "Do you like cats?", "I don't like cats", "Xiao"),
], ids=["zh", "en"])
def test_offline_a_characters_fact_never_rewrites_the_users_memory(make_memory: MakeMemory, user_said: str,
                                                                   user_memory: str, question: str,
                                                                   character_said: str, name: str) -> None:
    """The character disagreeing ("I don't like cats") is a fact about the character; the user still likes cats."""
    m = make_memory()
    [mine] = m.add(user_said, user_id="alice", agent_id="xiao")["results"]
    assert mine["memory"] == user_memory
    m.add([{"role": "user", "content": question}, {"role": "assistant", "content": character_said, "name": name}],
          user_id="alice", agent_id="xiao")
    kept = m.get(mine["id"])
    assert (kept["memory"], kept["role"]) == (user_memory, "user")
    assert rows(m, mine["id"]) == [("ADD", None, user_memory)]
    assert any(r["role"] == "assistant" for r in m.get_all(user_id="alice", agent_id="xiao")["results"])


def test_a_chinese_conversation_uses_the_chinese_prompts_and_stays_chinese(make_memory: MakeMemory) -> None:
    def model(messages: list[dict[str, str]]) -> dict[str, Any]:
        if system_of(messages) == prompts.USER_FACTS_ZH:
            said = said_by_user(messages)
            return facts(*{"我住在杭州，在一家游戏公司做策划": ["用户住在杭州", "用户在游戏公司做策划"],
                           "我上个月搬到上海了": ["用户搬到了上海"]}[said])
        assert system_of(messages) == prompts.DECIDE_ZH
        existing = {e["text"]: e["id"] for e in data_block(messages, "Existing memories")}
        return {"memory": [{"id": existing["用户住在杭州"], "text": "用户住在上海", "event": "UPDATE",
                            "old_memory": "用户住在杭州"}]}

    llm = ScriptedLLM(responder=model)
    m = make_memory(llm)
    first = m.add("我住在杭州，在一家游戏公司做策划", user_id="u")["results"]
    [moved] = m.add("我上个月搬到上海了", user_id="u")["results"]
    home = next(r for r in first if r["memory"] == "用户住在杭州")
    assert (moved["event"], moved["id"], moved["memory"]) == ("UPDATE", home["id"], "用户住在上海")
    assert texts(m, user_id="u") == ["用户住在上海", "用户在游戏公司做策划"]
    assert [system_of(c.messages) for c in llm.calls] == [prompts.USER_FACTS_ZH, prompts.USER_FACTS_ZH,
                                                          prompts.DECIDE_ZH]


# --- the LLM fails: the turn is kept, offline extraction stands in, the LLM is retried --------------------------

HOME_FACT = facts("用户住在杭州")
NONE_ON_HOME = {"memory": [{"id": "0", "text": "用户住在杭州", "event": "NONE"}]}


@pytest.mark.parametrize("failure", [LLMTimeout("no answer within 30 s"), LLMError("HTTP 500: upstream error"),
                                     "not json", '{"answer": "no facts key"}', '{"facts": "not a list"}'],
                         ids=["timeout", "http-500", "not-json", "no-facts", "facts-not-a-list"])
def test_llm_failure_keeps_the_turn_falls_back_and_retries(make_memory: MakeMemory, failure: Any) -> None:
    llm = ScriptedLLM([failure])
    m = make_memory(llm, retry_delay=120.0)
    before = utcnow()
    out = m.add("我住在杭州", user_id="u")  # does not raise

    assert [msg.content for msg in m.store.list_messages(Scope("u"))] == ["我住在杭州"]
    assert [(r["event"], r["memory"]) for r in out["results"]] == [("ADD", "用户住在杭州")]  # offline stood in
    event = m.get_event(out["event_id"])
    assert event["status"] == "RETRYING" and event["extractor"] == "offline-fallback" and event["attempts"] == 1
    assert event["error"]
    due = datetime.fromisoformat(event["next_attempt_at"])
    assert before + timedelta(seconds=100) < due < utcnow() + timedelta(seconds=140)

    assert m.process_pending() == 0  # not due yet
    make_due(m, out["event_id"])
    llm.script(HOME_FACT, NONE_ON_HOME)  # the LLM is back
    assert m.process_pending() == 1
    event = m.get_event(out["event_id"])
    assert (event["status"], event["extractor"], event["attempts"], event["error"]) == ("SUCCEEDED", "llm", 2, None)
    assert event["next_attempt_at"] is None
    assert ("NONE", out["results"][0]["id"]) in [(r["event"], r["id"]) for r in event["results"]]
    assert texts(m, user_id="u") == ["用户住在杭州"]  # the LLM's fact did not duplicate the fallback's
    assert m.process_pending() == 0


def test_after_max_attempts_the_turn_fails_and_the_fallback_stays(make_memory: MakeMemory) -> None:
    llm = ScriptedLLM(responder=lambda messages: LLMError("HTTP 503"))
    m = make_memory(llm, max_attempts=3)
    out = m.add("I live in Paris", user_id="u")
    for attempt in (2, 3):
        make_due(m, out["event_id"])
        assert m.process_pending() == 1
        assert m.get_event(out["event_id"])["attempts"] == attempt
    event = m.get_event(out["event_id"])
    assert event["status"] == "FAILED" and event["error"] == "HTTP 503" and event["next_attempt_at"] is None
    make_due(m, out["event_id"])
    assert m.process_pending() == 0  # a failed turn is never claimed again
    assert texts(m, user_id="u") == ["User lives in Paris"]
    assert len(llm.calls) == 3


def test_a_slow_llm_times_out_into_the_same_path(make_memory: MakeMemory) -> None:
    llm = ScriptedLLM(responder=lambda messages: HOME_FACT, delay=10.0)
    m = make_memory(llm, write={"llm_timeout": 0.05})
    started = time.monotonic()
    out = m.add("我住在杭州", user_id="u")
    assert time.monotonic() - started < 3
    event = m.get_event(out["event_id"])
    assert event["status"] == "RETRYING" and "0.05" in event["error"]
    assert texts(m, user_id="u") == ["用户住在杭州"]


def test_async_add_answers_at_once_and_process_pending_finishes(make_memory: MakeMemory) -> None:
    llm = ScriptedLLM([HOME_FACT])
    m = make_memory(llm)
    out = m.add("我住在杭州", user_id="u", async_mode=True)
    assert out["status"] == "PENDING" and out["results"] == []
    assert llm.calls == []  # nothing extracted yet, but the turn is stored
    assert [msg.content for msg in m.store.list_messages(Scope("u"))] == ["我住在杭州"]
    assert m.get_event(out["event_id"])["status"] == "PENDING"
    assert m.process_pending() == 1
    event = m.get_event(out["event_id"])
    assert event["status"] == "SUCCEEDED" and event["extractor"] == "llm" and event["attempts"] == 1
    assert [(r["event"], r["memory"]) for r in event["results"]] == [("ADD", "用户住在杭州")]


def test_process_pending_keeps_one_users_turns_in_order(make_memory: MakeMemory, e5: Embedder) -> None:
    m = make_memory(embedder_=e5)
    first = m.add("我住在杭州", user_id="u", async_mode=True)
    second = m.add("我搬到上海了", user_id="u", async_mode=True)
    assert m.process_pending() == 2
    [(added, memory_id)] = events(m, first)
    assert added == "ADD" and events(m, second) == [("UPDATE", memory_id)]
    assert texts(m, user_id="u") == ["用户搬到了上海"]


@pytest.mark.parametrize("written_by_llm, said", [
    ("Lives in Paris", "I live in Paris"),
    ("Is allergic to peanuts", "I'm allergic to peanuts"),
    ("用户对海鲜过敏", "我对海鲜过敏"),
])
def test_the_offline_fallback_recognizes_a_memory_the_llm_wrote(make_memory: MakeMemory, written_by_llm: str,
                                                                said: str) -> None:
    """Memories written while the LLM was up are in its style ("Lives in Paris", as jiyi's English prompt asks); when
    it is down and the user says the same again, the offline fallback must see the same fact, not add a twin."""
    llm = ScriptedLLM([facts(written_by_llm), LLMError("HTTP 502")])
    m = make_memory(llm)
    [item] = m.add(said, user_id="u")["results"]
    again = m.add(said, user_id="u")
    assert m.get_event(again["event_id"])["status"] == "RETRYING"
    assert again["results"] == [] and events(m, again) == [("NONE", item["id"])]
    assert texts(m, user_id="u") == [written_by_llm]


def test_a_turn_that_fails_midway_reports_every_memory_it_wrote(make_memory: MakeMemory) -> None:
    """Agent mode: the user's facts are written, then the decision on the character's facts fails. Whatever the turn
    wrote must be in its results (sync answer and event), or the caller cannot know about it."""

    def model(messages: list[dict[str, str]]) -> Any:
        if system_of(messages) == prompts.USER_FACTS_EN:
            return facts("Loves cats", kind="preference")
        if system_of(messages) == prompts.AGENT_FACTS_EN:
            return facts("Xiao grew up in Kyoto", kind="persona")
        return LLMError("HTTP 500 on the decision call")

    m = make_memory(ScriptedLLM(responder=model))
    out = m.add([{"role": "user", "content": "I love cats"},
                 {"role": "assistant", "content": "I grew up in Kyoto.", "name": "Xiao"}], user_id="alice",
                agent_id="xiao")
    turn = m.store.get_turn(out["event_id"])
    assert turn is not None and turn.status.value == "retry"
    written = {r["id"] for r in m.get_all(user_id="alice", agent_id="xiao")["results"]
               if {p["message_id"] for p in r["provenance"]} & set(turn.message_ids)}
    reported = {r["id"] for r in m.get_event(out["event_id"])["results"]}
    assert written <= reported, [m.get(i)["memory"] for i in written - reported]
    assert written <= {r["id"] for r in out["results"]}


def test_queued_turns_resolve_her_from_earlier_messages_only(make_memory: MakeMemory) -> None:
    """Async adds queue up; when the worker catches up, "Her name is Jesica." refers to the sister said before it,
    not to the brother the user mentioned in a later, still queued turn."""
    m = make_memory()
    queued = [m.add(text, user_id="d", async_mode=True)["event_id"]
              for text in ["I have a sister.", "Her name is Jesica.", "I have a brother."]]
    assert m.process_pending() == 3
    named = [r["memory"] for r in m.get_event(queued[1])["results"]]
    assert named and all("sister" in text and "brother" not in text for text in named), named


# --- episodes -------------------------------------------------------------------------------------------------

def test_an_episode_is_written_every_thirty_messages(make_memory: MakeMemory) -> None:
    m = make_memory()
    start = datetime(2026, 1, 3, 18, 0, tzinfo=UTC)
    said = iter(range(1000))

    def message(role: str, content: str) -> dict[str, str]:
        return {"role": role, "content": content, "created_at": (start + timedelta(minutes=next(said))).isoformat()}

    def episodes() -> list[dict[str, Any]]:
        return [r for r in m.get_all(user_id="u")["results"] if r["category"] == "episode"]

    m.add([message("user", "我下周要去面试，有点紧张")], user_id="u")
    for i in range(15):  # 31 messages in all; the episode is due only after the last turn
        assert episodes() == []
        m.add([message("user", f"面试准备第{i}天，我在刷算法题"), message("assistant", "算法题多练习，面试加油")],
              user_id="u")
    [episode] = episodes()
    assert re.fullmatch(r"\[2026-01-03 18:00\] 聊了\S+", episode["memory"]), episode["memory"]
    assert "面试" in episode["memory"]
    stored = m.store.list_messages(Scope("u"))
    assert len(stored) == 31
    assert [p["message_id"] for p in episode["provenance"]] == [s.id for s in stored]
    assert m.history(episode["id"])[0]["event"] == "ADD"

    for i in range(14):  # the next 29 messages: no second episode
        m.add([message("user", f"今天玩了游戏{i}"), message("assistant", "游戏好玩吗")], user_id="u")
    m.add([message("user", "晚安")], user_id="u")
    assert [e["id"] for e in episodes()] == [episode["id"]]
    m.add([message("user", "早安")], user_id="u")  # the 30th since the last episode
    assert len(episodes()) == 2


# --- BOOST: memories that shaped the reply gain importance ----------------------------------------------------

ECHO = [{"role": "user", "content": "What should I drink this afternoon?"},
        {"role": "assistant", "content": "Since you love green tea, how about a green tea latte?"}]


def test_offline_boost_of_a_memory_the_reply_used(make_memory: MakeMemory) -> None:
    m = make_memory()
    [tea] = m.add("I love green tea", user_id="alice")["results"]
    importance = m.get(tea["id"])["importance"]
    out = m.add(ECHO, user_id="alice", injected_memory_ids=[tea["id"]])
    assert out["results"] == []  # BOOST is not one of mem0's add() events
    assert events(m, out) == [("BOOST", tea["id"])]
    assert m.get(tea["id"])["importance"] == pytest.approx(importance + 0.3)
    assert [r["event"] for r in m.history(tea["id"])] == ["ADD", "BOOST"]
    assert m.get(tea["id"])["memory"] == tea["memory"]


def test_offline_no_boost_when_the_reply_did_not_use_it(make_memory: MakeMemory) -> None:
    m = make_memory()
    [tea] = m.add("I love green tea", user_id="alice")["results"]
    importance = m.get(tea["id"])["importance"]
    unrelated = [ECHO[0], {"role": "assistant", "content": "Maybe some sparkling water with lemon?"}]
    m.add(unrelated, user_id="alice", injected_memory_ids=[tea["id"]])
    m.add("What should I drink?", user_id="alice", injected_memory_ids=[tea["id"]])  # no reply at all
    assert m.get(tea["id"])["importance"] == importance
    assert [r["event"] for r in m.history(tea["id"])] == ["ADD"]


def test_llm_boost_by_the_shown_id(make_memory: MakeMemory) -> None:
    def model(messages: list[dict[str, str]]) -> dict[str, Any]:
        if not is_decision(messages):
            return facts({"I love green tea": "Loves green tea", "I love oolong tea": "Loves oolong tea"}
                         .get(said_by_user(messages), "Loves green tea"))
        given_ = data_block(messages, "Memories given to the assistant") or []
        return {"memory": [{"id": g["id"], "event": "BOOST"} for g in given_]
                + [{"id": "0", "event": "NONE"}] + [{"id": "17", "event": "BOOST"}]}

    llm = ScriptedLLM(responder=model)
    m = make_memory(llm)
    [tea] = m.add("I love green tea", user_id="alice")["results"]
    [oolong] = m.add("I love oolong tea", user_id="bob")["results"]
    importance = m.get(tea["id"])["importance"]
    out = m.add(ECHO, user_id="alice", injected_memory_ids=[tea["id"], oolong["id"]])
    assert ("BOOST", tea["id"]) in events(m, out)
    assert m.get(tea["id"])["importance"] == pytest.approx(importance + 0.3)
    assert [r["event"] for r in m.history(tea["id"])] == ["ADD", "BOOST"]
    decision = llm.calls[-1]
    assert data_block(decision.messages, "Memories given to the assistant") == [
        {"id": next(e["id"] for e in data_block(decision.messages, "Existing memories")
                    if e["text"] == "Loves green tea"), "text": "Loves green tea"}]
    assert "oolong" not in decision.prompt  # bob's memory is never shown to alice's turn
    assert [r["event"] for r in m.history(oolong["id"])] == ["ADD"]


def test_a_memory_is_boosted_at_most_once_per_turn(make_memory: MakeMemory) -> None:
    llm = ScriptedLLM([facts("Loves green tea"), {"facts": []},
                       {"memory": [{"id": "0", "event": "BOOST"}, {"id": "0", "event": "BOOST"}]}])
    m = make_memory(llm)
    [tea] = m.add("I love green tea", user_id="alice")["results"]
    importance = m.get(tea["id"])["importance"]
    m.add(ECHO, user_id="alice", injected_memory_ids=[tea["id"], tea["id"]])
    assert m.get(tea["id"])["importance"] == pytest.approx(importance + 0.3)
    assert [r["event"] for r in m.history(tea["id"])] == ["ADD", "BOOST"]


@pytest.mark.parametrize("mode", ["offline", "llm"])
def test_another_users_memory_is_never_boosted(make_memory: MakeMemory, mode: str) -> None:
    llm = ScriptedLLM(responder=lambda messages: (
        {"memory": [{"id": str(i), "event": "BOOST"} for i in range(5)]} if is_decision(messages)
        else facts("Loves green tea"))) if mode == "llm" else None
    m = make_memory(llm)
    [bobs] = m.add("I love green tea", user_id="bob")["results"]
    importance = m.get(bobs["id"])["importance"]
    out = m.add(ECHO, user_id="alice", injected_memory_ids=[bobs["id"]])
    assert ("BOOST", bobs["id"]) not in events(m, out)
    assert m.get(bobs["id"])["importance"] == importance
    assert [r["event"] for r in m.history(bobs["id"])] == ["ADD"]


@pytest.mark.parametrize("turn_scope, owner_scope", [
    ({"user_id": "alice", "agent_id": "xiao"}, {"user_id": "bob", "agent_id": "xiao"}),
    ({"agent_id": "xiao"}, {"agent_id": "yuki"}),
    ({"run_id": "chat-1"}, {"run_id": "chat-2"}),
], ids=["other-user-same-agent", "other-agent", "other-run"])
def test_a_memory_outside_the_turns_scope_is_never_boosted(make_memory: MakeMemory, turn_scope: dict[str, str],
                                                           owner_scope: dict[str, str]) -> None:
    m = make_memory()
    [other] = m.add("I love green tea", **owner_scope)["results"]
    importance = m.get(other["id"])["importance"]
    m.add(ECHO, injected_memory_ids=[other["id"]], **turn_scope)
    assert m.get(other["id"])["importance"] == importance
    assert [r["event"] for r in m.history(other["id"])] == ["ADD"]


@pytest.mark.parametrize("said, turn_scope", [
    ("我搬到上海了", {"agent_id": "xiao"}),
    ("我住在杭州", {"agent_id": "xiao", "run_id": "chat-9"}),
], ids=["update", "none-moves-run"])
def test_a_turn_without_a_user_never_changes_a_users_memory(make_memory: MakeMemory, said: str,
                                                            turn_scope: dict[str, str]) -> None:
    """An agent-level turn (the character's own memories, no user_id) is not alice: her memory stays as it was."""
    m = make_memory()
    [alices] = m.add("我住在杭州", user_id="alice", agent_id="xiao")["results"]
    before = m.get(alices["id"])
    out = m.add(said, **turn_scope)
    assert alices["id"] not in {r["id"] for r in m.get_event(out["event_id"])["results"]}
    after = m.get(alices["id"])
    assert (after["memory"], after.get("run_id"), after["provenance"]) == (
        before["memory"], before.get("run_id"), before["provenance"])
    assert rows(m, alices["id"]) == [("ADD", None, "用户住在杭州")]


# --- properties -----------------------------------------------------------------------------------------------

STATEMENTS = [
    "我住在杭州", "我搬到上海了", "我吃素", "我不再吃素了", "我对海鲜过敏", "我叫小明", "我有一个妹妹", "她叫小雨",
    "哈哈好的",
    "I live in Paris", "I moved to Berlin", "I'm vegetarian", "I'm not vegetarian anymore", "My name is Desmond",
    "I have a sister", "Her name is Jesica", "I love green tea", "What should I cook tonight?",
]
turn_strategy = st.tuples(st.sampled_from(["alice", "bob"]), st.sampled_from(STATEMENTS), st.booleans())


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(turns=st.lists(turn_strategy, min_size=1, max_size=8))
def test_history_and_ownership_invariants(turns: list[tuple[str, str, bool]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "memory.db"
        m = Memory(build_store(f"sqlite:///{path}"), build_embedder("hashing"))
        try:
            for user, text, reply in turns:
                everyone = [r.id for r in m.store.iter_records()]
                others = {r.id: (r.content, r.importance, r.scope, len(m.store.history(r.id)))
                          for r in m.store.iter_records(include_deleted=True) if r.scope.user_id != user}
                # A reply echoing the statement, given every memory (both users'): only the speaker's may be boosted.
                messages: list[dict[str, str]] = [{"role": "user", "content": text}]
                if reply:
                    messages.append({"role": "assistant", "content": f"I remember: {text}"})
                out = m.add(messages, user_id=user, injected_memory_ids=everyone if reply else None)
                for result in m.get_event(out["event_id"])["results"]:
                    touched = m.store.get(result["id"], include_deleted=True)
                    assert touched is not None and touched.scope.user_id == user, result
                after = {r.id: (r.content, r.importance, r.scope, len(m.store.history(r.id)))
                         for r in m.store.iter_records(include_deleted=True) if r.scope.user_id != user}
                assert after == others
            for record in m.store.iter_records():
                history = m.store.history(record.id)
                assert history and history[0].event.value == "ADD", record
                assert all(h.memory_id == record.id for h in history)
        finally:
            m.close()
        # Every history row, whichever path wrote it, belongs to a memory that exists (deleted or not).
        with sqlite3.connect(path) as db:
            orphans = db.execute("SELECT memory_id FROM history WHERE memory_id NOT IN (SELECT id FROM memories)")
            assert orphans.fetchall() == []


def test_a_pasted_document_yields_at_most_max_facts_per_turn_and_is_stored_whole(make_memory: MakeMemory) -> None:
    statements = [f"I really like dish number {n}." for n in range(60)] + [f"我喜欢第{n}号菜。" for n in range(60)]
    document = " ".join(statements)
    capped = make_memory(max_facts_per_turn=10)
    added = [r for r in capped.add(document, user_id="doc")["results"] if r["event"] == "ADD"]
    assert 1 <= len(added) <= 10
    assert all(r["memory_type"] for r in added)  # what was stored, for the add metric
    uncapped = make_memory(max_facts_per_turn=1000)
    more = [r for r in uncapped.add(document, user_id="doc2")["results"] if r["event"] == "ADD"]
    assert len(more) > 10  # the cap, not the rules, is what held the first one back
    assert document in {m.content for m in capped.store.list_messages(Scope("doc"), 10)}


# --- a statement given to be remembered ----------------------------------------------------------------------------

def test_a_statement_given_to_be_remembered_is_kept_as_a_fact_when_the_rules_make_nothing_of_it(
        make_memory: MakeMemory) -> None:
    """add(…, remember=True) (MCP's add_memory, `jiyi add`), or mem0's SDK add("…") (one user message that says
    something about its author): kept in the user's words. A chat turn's words, small talk and questions are not."""
    m = make_memory()
    m.add("The spare key is under the blue flowerpot", user_id="u", remember=True)
    m.add([{"role": "user", "content": "I keep my passport in the top drawer of the desk"}], user_id="u")
    m.add("我的工位在五楼靠窗", user_id="u")
    m.add("今天天气真不错啊", user_id="u")  # no one's statement about themselves: a chat message
    m.add([{"role": "user", "content": "lol ok"}], user_id="u")  # says nothing
    m.add([{"role": "user", "content": "do I keep my passport somewhere safe?"}], user_id="u")  # asks
    m.add([{"role": "user", "content": "the car is parked on level B2 today"},
           {"role": "assistant", "content": "Noted!"}], user_id="u")  # a chat turn: its words stay evidence only
    m.add([{"role": "user", "content": "Dana: my car is parked on level B2"}], user_id="u")  # a transcript line
    assert set(texts(m, user_id="u")) == {"The spare key is under the blue flowerpot", "用户的工位在五楼靠窗",
                                          "User keeps User's passport in the top drawer of the desk"}
    hits = m.search("where is my passport", user_id="u", top_k=1)["results"]
    assert hits[0]["memory"] == "User keeps User's passport in the top drawer of the desk"


def test_a_statement_given_to_be_remembered_is_kept_when_the_llm_extracts_nothing(make_memory: MakeMemory) -> None:
    llm = ScriptedLLM(responder=lambda messages: {"facts": []})
    m = make_memory(llm=llm)
    result = m.add("Prefers window seats on flights", user_id="u", remember=True)
    assert [r["memory"] for r in result["results"]] == ["Prefers window seats on flights"]
