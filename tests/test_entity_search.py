"""Search that follows the entity graph: the graph recall path (retrieval.recall_by_graph) on every store, and
mem0's `relations` answered with enable_graph=True over a real HTTP server."""

from __future__ import annotations

import httpx
import pytest

from jiyi import Memory
from jiyi.core.retrieval import RetrievalSettings, SearchRequest, hybrid_search, recall_by_graph
from jiyi.records import Scope

ARJUN = ["My older brother Arjun just started law school at UChicago",
         "he bombed his first contracts exam, called me at 1am",
         "Arjun's girlfriend Mei is an ER nurse",
         "my beagle Biscuit ate an entire sock today",
         "got a recruiter email from Amazon for a PM role in Seattle"]


@pytest.fixture
def arjun(memory: Memory) -> dict[str, str]:
    """The turns added for user ana (offline extraction); their text -> the id of the message kept as said."""
    for text in ARJUN:
        memory.add(text, user_id="ana")
    memory.settle()
    kept = memory.get_all(user_id="ana", include_messages=True)["results"]
    return {item["memory"]: item["id"] for item in kept if item["memory"] in ARJUN}


def graph_found(memory: Memory, query: str, user: str = "ana") -> list[str]:
    result = recall_by_graph(memory.store, SearchRequest(query, Scope(user_id=user)), RetrievalSettings())
    return [hit.memory_id for hit in result.hits]


def test_a_name_brings_what_was_said_of_it_with_a_pronoun(memory: Memory, arjun: dict[str, str]) -> None:
    found = graph_found(memory, "How is Arjun doing?")
    assert arjun[ARJUN[1]] in found  # "he bombed…" never says Arjun
    assert arjun[ARJUN[3]] not in found and arjun[ARJUN[4]] not in found
    assert graph_found(memory, "How is Arjun doing?", user="bob") == []
    assert graph_found(memory, "what should I cook tonight") == []


def test_a_chained_question_reaches_the_entity_it_chains_to(memory: Memory, arjun: dict[str, str]) -> None:
    found = graph_found(memory, "What does my brother's girlfriend do?")
    assert arjun[ARJUN[2]] in found
    assert arjun[ARJUN[2]] in graph_found(memory, "What does Mei do?")


def test_the_graph_path_is_a_fusion_path_with_its_own_time(memory: Memory, arjun: dict[str, str]) -> None:
    request = SearchRequest("How is Arjun doing?", Scope(user_id="ana"), top_k=10, explain=True)
    found = hybrid_search(memory.store, memory.aio.embedder, request)
    assert "graph_ms" in found.timings_ms and found.paths["graph"] >= 2
    # the exam (as said, or the fact taken from it, which stands for the message) came by the graph path too
    [exam] = [hit for hit in found.hits if "contracts exam" in hit.record.content]
    assert "graph" in exam.details["paths"]
    off = hybrid_search(memory.store, memory.aio.embedder, request, RetrievalSettings(graph_limit=0))
    assert off.paths["graph"] == 0
    assert all("graph" not in hit.details["paths"] for hit in off.hits)


def test_enable_graph_answers_mem0s_relations(client: httpx.Client) -> None:
    for text in ARJUN[:3]:
        assert client.post("/v1/memories/", json={"messages": [{"role": "user", "content": text}],
                                                   "user_id": "ana"}).status_code == 200
    body = client.post("/v1/memories/search/", json={"query": "What does my brother's girlfriend do?",
                                                      "user_id": "ana", "enable_graph": True}).json()
    assert {"source": "Mei", "relationship": "girlfriend_of", "destination": "Arjun"} in body["relations"]
    assert {"source": "Arjun", "relationship": "brother_of", "destination": "ana"} in body["relations"]
    assert "relations" not in client.post("/v1/memories/search/", json={"query": "Arjun", "user_id": "ana"}).json()
    listed = client.get("/v1/memories/", params={"user_id": "ana", "enable_graph": "true"}).json()
    assert {"source": "Arjun", "relationship": "studies_at", "target": "UChicago"} in listed["relations"]
    other = client.post("/v1/memories/search/", json={"query": "Arjun", "user_id": "bob", "enable_graph": True})
    assert other.json()["relations"] == []


def test_the_graph_path_keeps_to_the_searchs_scope_and_filters(memory: Memory) -> None:
    """The graph is the user's, but a search may ask for one agent's memories, or filter them: the graph brings no
    memory the search's own scope and filters leave out (nor an expired one)."""
    said = memory.add("My older brother Arjun just started law school at UChicago", user_id="ana",
                      agent_id="tutor", infer=False, metadata={"topic": "family"})["results"][0]["id"]
    store = memory.store
    settings = RetrievalSettings()

    def graph(scope: Scope, filters: dict[str, object] | None = None) -> list[str]:
        from jiyi.filters import parse_filters

        request = SearchRequest("How is Arjun doing?", scope, where=parse_filters(filters))
        return [hit.memory_id for hit in recall_by_graph(store, request, settings).hits]

    assert graph(Scope("ana")) == [said]
    assert graph(Scope("ana", agent_id="tutor")) == [said]
    assert graph(Scope("ana", agent_id="coach")) == []  # another agent's memories stay its own
    assert graph(Scope("ana"), {"topic": "family"}) == [said]
    assert graph(Scope("ana"), {"topic": "work"}) == []
    found = memory.search("How is Arjun doing?", user_id="ana", agent_id="coach")["results"]
    assert said not in [hit["id"] for hit in found]
