"""mem0's categories on the memories jiyi writes: every fact gets them, a new text gets them anew, custom_categories
replace mem0's, and they are filtered on as mem0 filters them. jiyi's own `category` stays what it was."""

from __future__ import annotations

import pytest

from jiyi import InvalidInput, Memory
from jiyi.embedders.base import Embedder
from jiyi.lifecycle import shared_categories
from jiyi.llms.scripted import ScriptedLLM
from jiyi.records import Event, MemoryRecord, Scope
from jiyi.stores.base import MemoryStore
from jiyi.transfer import record_from_json, record_to_json


def by_text(memory: Memory, **ids: str) -> dict[str, dict]:
    return {item["memory"]: item for item in memory.get_all(**ids)["results"]}


def test_every_fact_extracted_offline_gets_mem0s_categories(memory: Memory) -> None:
    memory.add([{"role": "user", "content": "I live in Shanghai and I love hot pot. I'm allergic to peanuts."}],
               user_id="alice")
    facts = by_text(memory, user_id="alice")
    assert facts["User lives in Shanghai"]["categories"][0] == "personal_details"
    assert facts["User loves hot pot"]["categories"] == ["food", "user_preferences"]
    assert facts["User is allergic to peanuts"]["categories"][0] == "health"
    assert {item["category"] for item in facts.values()} <= {"fact", "core"}  # jiyi's own kind, as before


def test_memories_stored_as_given_are_categorised_too(memory: Memory) -> None:
    memory.add("我每周踢两次足球", user_id="bob", infer=False)
    [item] = memory.get_all(user_id="bob")["results"]
    assert item["categories"][0] == "sports" and item["category"] == "fact"


def test_a_new_text_is_categorised_anew(memory: Memory) -> None:
    memory.add("用户在学古筝", user_id="carol", infer=False)
    [item] = memory.get_all(user_id="carol")["results"]
    assert item["categories"][0] == "music"
    memory.update(item["id"], "用户对花生过敏")
    assert memory.get(item["id"])["categories"][0] == "health"
    memory.update(item["id"], metadata={"checked": True})  # metadata alone leaves them as they are
    assert memory.get(item["id"])["categories"][0] == "health"


def test_custom_categories_replace_mem0s_for_an_add(memory: Memory) -> None:
    mine = [{"pets": "the user's pets"}, {"work": "job and career"}]
    memory.add("User has a golden retriever named Max", user_id="dana", infer=False, custom_categories=mine)
    memory.add("我在银行上班", user_id="dana", infer=False, custom_categories=mine)
    found = by_text(memory, user_id="dana")
    assert found["User has a golden retriever named Max"]["categories"] == ["pets"]
    assert found["我在银行上班"]["categories"] == ["work"]


def test_custom_categories_reach_facts_extracted_later_by_a_worker(memory: Memory) -> None:
    queued = memory.add([{"role": "user", "content": "I work as a nurse"}], user_id="erin", async_mode=True,
                        custom_categories=[{"career": "job, employer and colleagues"}, {"misc": "the rest"}])
    memory.process_pending()
    event = memory.get_event(queued["event_id"])
    assert event["status"] == "SUCCEEDED"
    assert [item["categories"] for item in memory.get_all(user_id="erin")["results"]] == [["career"]]


def test_categories_filter_lists_and_searches_as_mem0s_do(memory: Memory) -> None:
    for text in ("User loves spicy Sichuan food", "User is going to Japan next month", "User has asthma"):
        memory.add(text, user_id="fay", infer=False)
    food = memory.get_all(user_id="fay", filters={"categories": {"in": ["food"]}})["results"]
    assert [item["memory"] for item in food] == ["User loves spicy Sichuan food"]
    either = memory.get_all(user_id="fay", filters={"categories": {"in": ["travel", "health"]}})["results"]
    assert sorted(item["memory"] for item in either) == ["User has asthma", "User is going to Japan next month"]
    found = memory.search("what do I like", user_id="fay", filters={"categories": {"contains": "user_preferences"}})
    assert [hit["memory"] for hit in found["results"]] == ["User loves spicy Sichuan food"]
    none = memory.get_all(user_id="fay", filters={"categories": {"nin": ["food", "travel", "health"]}})["results"]
    assert none == []


def test_an_add_with_bad_custom_categories_says_what_to_fix(memory: Memory) -> None:
    with pytest.raises(InvalidInput, match="custom_categories"):
        memory.add("hello", user_id="gil", custom_categories="food")
    assert memory.get_all(user_id="gil")["results"] == []


def test_history_is_unchanged_by_categorising(memory: Memory) -> None:
    memory.add("用户在学古筝", user_id="hal", infer=False)
    [item] = memory.get_all(user_id="hal")["results"]
    assert [row["event"] for row in memory.history(item["id"])] == [Event.ADD.value]


def test_with_an_llm_extraction_names_the_categories(store: MemoryStore, embedder: Embedder) -> None:
    asked: list[str] = []

    def model(messages: list[dict[str, str]]) -> dict:
        asked.append(messages[1]["content"])
        return {"facts": [
            {"text": "Is saving up for a trip to Japan", "type": "plan", "categories": ["travel", "misc"]},
            {"text": "Loves matcha", "type": "preference", "categories": ["beverages"]}]}

    with Memory(store, embedder, llm=ScriptedLLM(responder=model)) as memory:
        memory.add("I'm saving up for Japan, and I love matcha", user_id="ivy")
        found = by_text(memory, user_id="ivy")
    assert found["Is saving up for a trip to Japan"]["categories"] == ["travel", "misc"]  # as the model named them
    assert found["Loves matcha"]["categories"][0] == "food"  # a name not in the list: categorised offline
    conversation, request = asked[0].split("\n\nAlso give each fact")
    assert conversation.startswith("Conversation:") and conversation.endswith("user: I'm saving up for Japan, and I "
                                                                             "love matcha")
    assert "- personal_details\n" in request and request.endswith("- misc")  # mem0's list, by name, after it


def test_an_export_carries_the_categories_to_the_import() -> None:
    record = MemoryRecord("User loves hot pot", Scope("u"), categories=["food", "user_preferences"])
    assert record_from_json(record_to_json(record)).categories == ["food", "user_preferences"]
    assert record_from_json({**record_to_json(record), "categories": None}).categories == []  # an older export


def test_a_memory_made_of_others_takes_their_most_common_categories() -> None:
    def member(*categories: str) -> MemoryRecord:
        return MemoryRecord("x", Scope("u"), categories=list(categories))

    assert shared_categories([member("sports", "health"), member("sports"), member("health", "sports")]) == \
        ["sports", "health"]
    assert shared_categories([member("food"), member("travel"), member("music")]) == ["food", "travel"]
    assert shared_categories([member(), member()]) == []


class CountingEmbedder:
    """The hashing embedder, counting the texts it embeds as queries (how prototypes are made)."""

    def __init__(self, inner: Embedder) -> None:
        self.inner, self.queries = inner, 0
        self.model_id, self.dims = f"{inner.model_id}-counted-{id(self)}", inner.dims

    def embed_documents(self, texts: list[str]) -> object:
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> object:
        self.queries += 1
        return self.inner.embed_query(text)

    def embed_queries(self, texts: list[str]) -> object:
        self.queries += len(texts)
        return [self.inner.embed_query(text) for text in texts]


def test_prototypes_are_made_once_a_process_and_kept_in_the_store(tmp_path: object) -> None:
    """A second store in the same process takes the prototypes already made; a process with none at hand (the shared
    ones dropped) reads them from the store that kept them, embedding nothing."""
    import jiyi.categorizing as categorizing
    from jiyi import build_embedder, build_store
    from jiyi.categorizing import Categorizer

    counted = CountingEmbedder(build_embedder("hashing"))
    first = build_store(f"sqlite:///{tmp_path}/a.db")
    Categorizer(counted, first).prepare()  # type: ignore[arg-type]
    made = counted.queries
    assert made > 100  # mem0's taxonomy: one per description and example
    Categorizer(counted, build_store(f"sqlite:///{tmp_path}/b.db")).prepare()  # type: ignore[arg-type]
    assert counted.queries == made
    with categorizing._SHARED_LOCK:
        categorizing._SHARED.clear()  # as a new process starts
    Categorizer(counted, first).prepare()  # type: ignore[arg-type]
    assert counted.queries == made
