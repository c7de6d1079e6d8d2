"""/context and the assistant's replies kept as evidence: a reply is never injected, but when it matched a question
(it is embedded with the user's message it answers) and that message is not a candidate itself, the message comes
along with the memories that clear the bar, in the reply's place (read_path.ReadPath._answered_by_replies)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

from jiyi import AsyncMemory, Memory, build_embedder, build_store
from jiyi.core.messages import evidence_id
from jiyi.core.retrieval import REPLY_TAG
from jiyi.core.supersession import CHANGED_BY
from jiyi.records import Category, MemoryRecord, Scope, SourceRef, utcnow

QUESTION = "how is my dog Goldie doing"
SAID_AT = utcnow() - timedelta(days=2)
SCOPE = Scope("u")


def evidence(message_id: str, role: str, text: str, tags: tuple[str, ...] = ()) -> MemoryRecord:
    """A message kept as evidence, as the write path keeps it (its id derived from the message's)."""
    return MemoryRecord(text, SCOPE, id=evidence_id(message_id), role=role, category=Category.MESSAGE,
                        tags=["message", *tags], provenance=[SourceRef(message_id, role, SAID_AT)],
                        created_at=SAID_AT, event_time=SAID_AT)


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[Memory]:
    with Memory(_async=AsyncMemory(build_store(f"sqlite:///{tmp_path / 'replies.db'}"),
                                   build_embedder("hashing"))) as memory:
        yield memory


def store(memory: Memory, *, fact: bool = True, message_tags: tuple[str, ...] = ()) -> MemoryRecord:
    """A user's message that shares no word with QUESTION ("then she had puppies"), the assistant's reply to it that
    does, embedded with the message and the question as a pair is; five other replies on dogs, which rank above the
    message and leave the candidate list short; with `fact`, a fact that clears the bar. Returns the message."""
    embedder = memory.aio.embedding
    message = evidence("m1", "user", "then she had puppies, five of them!", message_tags)
    reply = evidence("m2", "assistant", "Goldie doing great, five puppies!", (f"{REPLY_TAG}m1",))
    dogs = ["What a good dog!", "Dog shows are fun", "A stray dog, poor thing", "Dogs are the best", "A dog walker!"]
    others = [evidence(f"r{i}", "assistant", text) for i, text in enumerate(dogs)]
    records = [message, reply, *others, MemoryRecord("User likes tea", SCOPE, created_at=SAID_AT)]
    if fact:
        records.append(MemoryRecord("User has a dog named Goldie", SCOPE, created_at=SAID_AT))
    vectors = np.stack([embedder.embed_documents([r.content])[0] for r in records])
    vectors[1] = embedder.embed_documents([f"{QUESTION}? {message.content} {reply.content}"])[0]
    memory.aio.store.insert(records, vectors, [])
    return message


def injected(memory: Memory, question: str = QUESTION) -> list[str]:
    return [m["memory"] for m in memory.context([{"role": "user", "content": question}], user_id="u")["memories"]]


def test_the_message_a_matching_reply_answered_comes_along_in_its_place(memory: Memory) -> None:
    message = store(memory)
    searched = [r["memory"] for r in memory.search(QUESTION, user_id="u", top_k=6)["results"]]
    assert message.content not in searched  # the reply found it, not its own words
    assert injected(memory) == ["User has a dog named Goldie", message.content]


def test_it_never_opens_the_gate_alone(memory: Memory) -> None:
    store(memory, fact=False)
    assert injected(memory) == []


def test_a_message_marked_as_changed_later_is_not_brought_back(memory: Memory) -> None:
    store(memory, message_tags=(f"{CHANGED_BY}{evidence_id('m9')}",))
    assert injected(memory) == ["User has a dog named Goldie"]


def test_a_message_deleted_since_is_not_brought_back(memory: Memory) -> None:
    message = store(memory)
    memory.delete(message.id)
    assert injected(memory) == ["User has a dog named Goldie"]


def test_nor_an_echo_of_the_prompt(memory: Memory) -> None:
    message = store(memory)
    asked = memory.context([{"role": "user", "content": message.content}, {"role": "assistant", "content": "Wow!"},
                            {"role": "user", "content": QUESTION}], user_id="u", context_messages=0)
    assert message.content not in [m["memory"] for m in asked["memories"]]
