"""Entity extraction by an LLM (core/llm_entities.py) on the write path, with jiyi's scripted test double: what the
model reads goes into the graph after validation, a failing model leaves the message to the rules, and the prompt
is in the message's language and shows the entities already known."""

from __future__ import annotations

from typing import Any

from jiyi import Memory
from jiyi.core.llm_entities import claims_from
from jiyi.embedders.base import Embedder
from jiyi.llms.base import LLMError
from jiyi.llms.scripted import ScriptedLLM
from jiyi.stores.base import MemoryStore
from jiyi.stores.entities import USER, EntityStore


def relations(store: MemoryStore, user: str) -> set[tuple[str, str, str]]:
    assert isinstance(store, EntityStore)
    graph = store.graph(user)
    names = graph.names()
    return {(names[r.source], r.relation, names[r.target]) for r in graph.relations if r.is_current}


def model(entities: dict[str, Any] | Exception) -> ScriptedLLM:
    """Facts for the fact prompt, `entities` for the entity prompt."""
    def respond(messages: list[dict[str, str]]) -> Any:
        system = messages[0]["content"]
        if "people and things in one user's life" in system or "生活中的人和事" in system:
            return entities
        return {"facts": [{"text": "User's cousin Xiaoya works at Meituan"}]}
    return ScriptedLLM(responder=respond)


def test_what_the_model_reads_goes_into_the_graph(store: MemoryStore, embedder: Embedder) -> None:
    llm = model({"entities": [{"name": "小雅", "kind": "person", "aliases": ["表姐", "我表姐"]},
                              {"name": "美团", "kind": "organisation", "aliases": []},
                              {"name": "Ghost", "kind": "spirit", "aliases": []}],
                 "relations": [{"source": "小雅", "relation": "cousin_of", "target": "USER"},
                               {"source": "小雅", "relation": "works_at", "target": "美团"},
                               {"source": "小雅", "relation": "Works At!", "target": "美团"},
                               {"source": "Nobody", "relation": "friend_of", "target": "USER"}],
                 "ended": []})
    memory = Memory(store, embedder, llm=llm, config={"llm_entities": True})
    try:
        memory.add("我表姐小雅在美团干了三年了", user_id="u")
        assert relations(store, "u") == {("小雅", "cousin_of", USER), ("小雅", "works_at", "美团")}
        asked = next(c for c in llm.calls if "生活中的人和事" in c.prompt)
        assert "我表姐小雅在美团干了三年了" in asked.prompt  # the Chinese prompt for a Chinese message
    finally:
        memory.close()


def test_a_failing_model_leaves_the_message_to_the_rules(store: MemoryStore, embedder: Embedder) -> None:
    memory = Memory(store, embedder, llm=model(LLMError("the model is down")), config={"llm_entities": True})
    try:
        out = memory.add("My wife Lena is an architect", user_id="u")
        assert out["results"]
        assert relations(store, "u") == {("Lena", "wife_of", USER)}
    finally:
        memory.close()


def test_without_the_setting_the_rules_read_and_the_model_is_not_asked(store: MemoryStore,
                                                                       embedder: Embedder) -> None:
    llm = model({"entities": [], "relations": [], "ended": []})
    memory = Memory(store, embedder, llm=llm)
    try:
        memory.add("My wife Lena is an architect", user_id="u")
        assert relations(store, "u") == {("Lena", "wife_of", USER)}
        assert not any("people and things in one user's life" in c.prompt for c in llm.calls)
    finally:
        memory.close()


def test_the_models_answer_is_checked_before_anything_is_claimed() -> None:
    claims = claims_from({"entities": [{"name": "Mei", "kind": "person", "aliases": ["Arjun's girlfriend", 3]},
                                       {"name": "", "kind": "person"}, "junk"],
                          "relations": [{"source": "Mei", "relation": "girlfriend_of", "target": "Arjun"},
                                        {"source": "Mei", "relation": "DROP TABLE", "target": "Arjun"},
                                        {"source": "Mei", "relation": "works_at", "target": None}],
                          "ended": [{"source": "USER", "relation": "lives_in", "target": None}]})
    assert [(c.subject.name, c.subject.kind, c.subject.alias_forms()) for c in claims if c.relation is None] == [
        ("Mei", "person", ["Arjun's girlfriend"])]
    stated = [(c.subject.name, c.relation, c.object.name if c.object else None, c.ends) for c in claims
              if c.relation is not None]
    assert stated == [("Mei", "girlfriend_of", "Arjun", False), (None, "lives_in", None, True)]
    assert claims_from({"entities": "nope"}) == [] and claims_from({}) == []
