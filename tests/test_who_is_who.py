"""/context's "who is who" line (core/who_is_who.py): the people a question names, as the user's entity graph knows
them — on a hand-made graph, through Memory.context on every store, and over a real HTTP server."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
import pytest

from jiyi import Memory
from jiyi.core.who_is_who import MAX_RELATIONS, who_is_who
from jiyi.stores.entities import USER, Graph, GraphEntity, GraphRelation

ARJUN = ["My older brother Arjun just started law school at UChicago",
         "Arjun's girlfriend Mei is an ER nurse",
         "my beagle Biscuit ate an entire sock today"]


def graph() -> Graph:
    arjun = GraphEntity("person", "Arjun", ["my brother", "哥哥"], id="arjun")
    mei = GraphEntity("person", "Mei", id="mei")
    denver = GraphEntity("place", "Denver", id="denver")
    chicago = GraphEntity("place", "Chicago", ["芝加哥"], id="chicago")
    ended = datetime(2026, 1, 1, tzinfo=UTC)
    return Graph({e.id: e for e in (arjun, mei, denver, chicago)}, [
        GraphRelation("arjun", "brother_of", USER),
        GraphRelation("mei", "girlfriend_of", "arjun"),
        GraphRelation("arjun", "lives_in", "denver", invalid_at=ended),  # moved: history, not who he is now
        GraphRelation("arjun", "lives_in", "chicago"),
    ])


def test_a_named_person_is_told_by_their_current_relations_the_users_first() -> None:
    assert who_is_who("How is Arjun doing?", graph()) == (
        "Who is who: Arjun is the user's brother; Mei is Arjun's girlfriend; Arjun lives in Chicago.")


def test_in_the_questions_language_and_by_alias() -> None:
    assert who_is_who("哥哥最近怎么样", graph()) == \
        "人物关系：Arjun是用户的兄弟；Mei是Arjun的女朋友；Arjun住在Chicago。"
    assert who_is_who("How's my brother?", graph()) == who_is_who("How is Arjun doing?", graph())


def test_nothing_when_the_question_names_no_one_the_graph_knows() -> None:
    assert who_is_who("What's the weather like?", graph()) is None
    assert who_is_who("How is Arjun doing?", Graph()) is None
    alone = Graph({"tom": GraphEntity("person", "Tom", id="tom")}, [])
    assert who_is_who("Did Tom call?", alone) is None  # known, but nothing to say of him


def test_a_line_not_a_family_tree() -> None:
    many = graph()
    for index in range(10):
        many.entities[f"friend{index}"] = GraphEntity("person", f"Friend{index}", id=f"friend{index}")
        many.relations.append(GraphRelation(f"friend{index}", "friend_of", "arjun"))
    line = who_is_who("How is Arjun doing?", many)
    assert line is not None and line.count(";") == MAX_RELATIONS - 1


def test_only_relations_that_fit_are_told() -> None:
    line = who_is_who("How is Arjun doing?", graph(), fits=lambda r: r.relation != "girlfriend_of")
    assert line == "Who is who: Arjun is the user's brother; Arjun lives in Chicago."


@pytest.fixture
def arjun(memory: Memory) -> Memory:
    for text in ARJUN:
        memory.add(text, user_id="ana")
    memory.settle()
    return memory


def test_context_puts_the_line_before_the_memories(arjun: Memory) -> None:
    answer = arjun.context([{"role": "user", "content": "How is Arjun doing?"}], user_id="ana")
    assert answer["who_is_who"] == "Who is who: Arjun is the user's brother; Arjun studies at UChicago; " \
                                   "Mei is Arjun's girlfriend."
    assert answer["memory_block"].splitlines()[1] == "- " + answer["who_is_who"]
    assert answer["memories"]  # the memories still come, after it
    assert answer["messages"][0]["content"] == answer["memory_block"]


def test_no_line_for_another_user_another_agent_or_when_turned_off(arjun: Memory) -> None:
    ask = [{"role": "user", "content": "How is Arjun doing?"}]
    assert arjun.context(ask, user_id="bob")["who_is_who"] is None
    # the relations came from ana's own memories (no agent): a request for one agent's memories is not told them
    assert arjun.context(ask, user_id="ana", agent_id="coach")["who_is_who"] is None
    assert arjun.context(ask, user_id="ana", filters={"topic": "work"})["who_is_who"] is None
    assert arjun.context([{"role": "user", "content": "what should I cook tonight"}], user_id="ana")["who_is_who"] \
        is None
    off = Memory(arjun.store, arjun.aio.embedder, config={"retrieval": {"who_is_who": False}})
    assert off.context(ask, user_id="ana")["who_is_who"] is None


def test_an_agents_own_relations_are_told_to_that_agent(memory: Memory) -> None:
    memory.add("My older brother Arjun just started law school at UChicago", user_id="ana", agent_id="tutor",
               infer=False)
    ask = [{"role": "user", "content": "How is Arjun doing?"}]
    assert memory.context(ask, user_id="ana", agent_id="tutor")["who_is_who"] is not None
    assert memory.context(ask, user_id="ana", agent_id="coach")["who_is_who"] is None


def test_a_budget_too_small_for_the_line_leaves_it_out(arjun: Memory) -> None:
    answer = arjun.context([{"role": "user", "content": "How is Arjun doing?"}], user_id="ana", budget_chars=100)
    assert answer["who_is_who"] is None
    assert "Who is who" not in answer["memory_block"]


def test_the_line_over_http(client: httpx.Client) -> None:
    for text in ARJUN[:2]:
        assert client.post("/v1/memories/", json={"messages": [{"role": "user", "content": text}],
                                                   "user_id": "ana"}).status_code == 200
    body = client.post("/context", json={"messages": [{"role": "user", "content": "What does Mei do?"}],
                                         "user_id": "ana"}).json()
    assert body["who_is_who"] == "Who is who: Mei is Arjun's girlfriend."
    assert body["who_is_who"] in body["memory_block"]


def test_someone_known_only_by_a_kinship_term_is_named_by_it() -> None:
    mom = GraphEntity("person", "妈", id="mom")
    girlfriend = GraphEntity("person", "my girlfriend", id="gf")
    shanghai = GraphEntity("place", "上海", id="sh")
    known = Graph({e.id: e for e in (mom, girlfriend, shanghai)}, [
        GraphRelation("mom", "mother_of", USER), GraphRelation("gf", "girlfriend_of", USER),
        GraphRelation("gf", "lives_in", "sh")])
    assert who_is_who("我妈最近身体还好吗？", known) is None  # "妈是用户的妈妈" says nothing
    assert who_is_who("What does my girlfriend do?", known) == "Who is who: the user's girlfriend lives in 上海."
