"""Raw turns as evidence (infer=True): every message stays searchable beneath the facts extracted from it, is replaced
in results by a fact that stands for it, is listed only on request, keeps the tenant rules, and fades by its own
lifecycle rule."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest

from jiyi import AsyncMemory, Memory, build_embedder, build_store
from jiyi.core.messages import evidence_id, in_conversation
from jiyi.records import Category, Scope, StoredMessage
from jiyi.write_path import WriteSettings

START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


class SimClock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock() -> SimClock:
    return SimClock()


@pytest.fixture
def memory(tmp_path: Path, clock: SimClock) -> Iterator[Memory]:
    with Memory(_async=AsyncMemory(build_store(f"sqlite:///{tmp_path / 'evidence.db'}"), build_embedder("hashing"),
                                   clock=clock)) as m:
        yield m


def messages_of(memory: Memory, user_id: str) -> list[dict[str, object]]:
    listed = memory.get_all(user_id=user_id, include_messages=True, limit=1000)["results"]
    return [r for r in listed if r["category"] == "message"]


def test_what_the_rules_miss_is_still_found_as_the_message_with_its_time_and_speaker(memory: Memory) -> None:
    # Chit-chat the offline extractor keeps no fact from; the words are still there to be found.
    said = "Caroline: the sunset over the lake was unreal tonight, all orange and pink"
    result = memory.add([{"role": "user", "content": said}], user_id="u", timestamp="2026-02-14T19:30:00Z")
    assert result["results"] == []  # no fact: the add reports none, as mem0 does
    found = memory.search("lake sunset colours", user_id="u")["results"]
    assert found and found[0]["category"] == "message" and found[0]["memory"] == said
    assert found[0]["event_time"].startswith("2026-02-14T18:00")  # "tonight": the evening of the day it was said
    assert found[0]["provenance"][0]["created_at"].startswith("2026-02-14T19:30")  # when it was said
    assert found[0]["role"] == "user"
    assert memory.search("lake sunset colours", user_id="someone-else")["results"] == []


def test_a_fact_replaces_the_message_it_came_from_in_results(memory: Memory) -> None:
    facts = memory.add("我对花生过敏", user_id="u")["results"]
    assert [f["event"] for f in facts] == ["ADD"]
    found = memory.search("花生过敏", user_id="u", top_k=10)["results"]
    assert found[0]["id"] == facts[0]["id"]
    assert all(r["category"] != "message" for r in found)  # the message is covered by the fact
    [message] = messages_of(memory, "u")
    assert message["memory"] == "我对花生过敏" and "covered" in message["tags"]


def test_the_assistants_reply_to_a_message_a_fact_stands_for_is_left_out_too(memory: Memory) -> None:
    """"恭喜！" is found through the message it answers (its vector holds both) and says nothing alone: where the fact
    stands for that message, the reply goes with it. A reply to a message no fact covers stays."""
    memory.add([{"role": "user", "content": "我弟弟下周结婚"}, {"role": "assistant", "content": "恭喜恭喜！"}],
               user_id="u")
    memory.add([{"role": "user", "content": "红烧肉又做失败了，太咸了"},
                {"role": "assistant", "content": "下次少放点酱油试试"}], user_id="u")
    by_text = {m["memory"]: m for m in messages_of(memory, "u")}
    answered = by_text["我弟弟下周结婚"]["provenance"][0]["message_id"]  # type: ignore[index]
    assert by_text["恭喜恭喜！"]["tags"] == ["message", f"in-reply-to:{answered}"]
    found = [r["memory"] for r in memory.search("我弟弟结婚", user_id="u", top_k=10)["results"]]
    assert "用户的弟弟下周结婚" in found and "恭喜恭喜！" not in found and "我弟弟下周结婚" not in found
    found = [r["memory"] for r in memory.search("红烧肉太咸", user_id="u", top_k=10)["results"]]
    assert "红烧肉又做失败了，太咸了" in found and "下次少放点酱油试试" in found  # no fact covers these


def test_messages_are_listed_only_on_request_and_by_the_category_filter(memory: Memory) -> None:
    memory.add("我对花生过敏", user_id="u")
    memory.add("今天天气真不错啊", user_id="u")
    listed = memory.get_all(user_id="u")["results"]
    assert listed and all(r["category"] != "message" for r in listed)
    assert {m["memory"] for m in messages_of(memory, "u")} == {"我对花生过敏", "今天天气真不错啊"}
    only = memory.get_all(user_id="u", filters={"jiyi.category": "message"})["results"]
    assert {m["memory"] for m in only} == {"我对花生过敏", "今天天气真不错啊"}


def test_a_retried_turn_keeps_each_message_once(memory: Memory, clock: SimClock) -> None:
    turn = memory.add("今天天气真不错啊", user_id="u", async_mode=True)["event_id"]
    clock.now = datetime.now(UTC) + timedelta(minutes=1)  # a queued turn is due from the wall-clock time it was made
    assert memory.process_pending() == 1
    aio = memory.aio
    stored = aio.store.get_turn(turn)
    assert stored is not None
    memory._loop.run(aio.write_path.process(stored))  # the same turn again, as after a crash before its save
    assert len(messages_of(memory, "u")) == 1


def test_a_plain_client_gets_each_message_embedded_with_the_other_speakers_before_it(memory: Memory) -> None:
    """One message per add, every one role "user", speakers told apart by a "Name: " prefix."""
    first = "Melanie: I finally finished the painting of the lake"
    second = "Caroline: Wow, that sounds beautiful!"
    memory.add([{"role": "user", "content": first}], user_id="u", timestamp="2026-02-14T19:30:00Z")
    memory.add([{"role": "user", "content": second}], user_id="u", timestamp="2026-02-14T19:31:00Z")
    by_text = {m["memory"]: m["id"] for m in messages_of(memory, "u")}
    vector = memory.store.get_vectors([by_text[second]])[by_text[second]]
    expected = memory.embedder.embed_documents([f"{first}\n{second}"])[0]
    np.testing.assert_allclose(vector, expected, atol=1e-6)
    alone = memory.store.get_vectors([by_text[first]])[by_text[first]]
    np.testing.assert_allclose(alone, memory.embedder.embed_documents([first])[0], atol=1e-6)


def test_same_speaker_statements_keep_vectors_of_their_own() -> None:
    scope = Scope("u")
    when = START
    texts = in_conversation([StoredMessage("Caroline: I moved to Austin", "user", scope, created_at=when),
                             StoredMessage("Caroline: and I got a dog", "user", scope, created_at=when),
                             StoredMessage("a note without a speaker", "user", scope, created_at=when)])
    assert texts == ["Caroline: I moved to Austin", "Caroline: and I got a dog", "a note without a speaker"]


def test_labelled_notes_are_not_speakers_talking() -> None:
    """"label: value" notes stored one after another keep vectors of their own; names still pair (found by CI: two
    servers' clients writing "A client 6 memory 2: …" had each other's notes in their vectors)."""
    scope = Scope("u")
    when = START
    notes = ["Favourite food: pizza", "A client 6 memory 2: the cat is called Mochi", "Note to self: buy milk",
             "喜欢的颜色是什么呢：蓝色"]
    assert in_conversation([StoredMessage(n, "user", scope, created_at=when) for n in notes]) == notes
    said = in_conversation([StoredMessage("Mary Jane: I moved to Austin", "user", scope, created_at=when),
                            StoredMessage("小明：真的吗", "user", scope, created_at=when)])
    assert said == ["Mary Jane: I moved to Austin", "Mary Jane: I moved to Austin\n小明：真的吗"]


def test_messages_fade_by_their_own_rule(memory: Memory, clock: SimClock) -> None:
    covered_id = memory.add("我对花生过敏", user_id="u")["event_id"]
    memory.add("今天天气真不错啊", user_id="u")
    by_text = {m["memory"]: m["id"] for m in messages_of(memory, "u")}
    assert covered_id
    policy = memory.aio.lifecycle
    clock.now = START + timedelta(days=policy.covered_message_days + 1)
    memory.maintain(user_id="u")
    left = {m["memory"] for m in messages_of(memory, "u")}
    assert left == {"今天天气真不错啊"}  # a fact holds the covered one; the other is the only record of itself
    reason = memory.history(by_text["我对花生过敏"])[-1]["reason"]
    assert "a fact holds what it said" in reason
    clock.now = START + timedelta(days=policy.message_max_days + 1)
    memory.maintain(user_id="u")
    assert messages_of(memory, "u") == []
    # The fact itself lives by the rules for facts; it was not taken along.
    assert any("花生" in r["memory"] for r in memory.get_all(user_id="u")["results"])


def test_evidence_ids_derive_from_the_message() -> None:
    assert evidence_id("m-1") == evidence_id("m-1") != evidence_id("m-2")


def test_rest_lists_messages_on_request_and_never_for_another_user(client: httpx.Client) -> None:
    said = {"role": "user", "content": "今天天气真不错啊"}
    added = client.post("/memories", json={"messages": [said], "user_id": "u"})
    assert added.status_code == 200
    default = client.get("/memories", params={"user_id": "u"}).json()["results"]
    assert all(r["category"] != "message" for r in default)
    listed = client.get("/memories", params={"user_id": "u", "include_messages": "true"}).json()["results"]
    assert [r["memory"] for r in listed if r["category"] == "message"] == ["今天天气真不错啊"]
    assert client.get("/memories", params={"user_id": "v", "include_messages": "true"}).json()["results"] == []
    found = client.post("/search", json={"query": "天气", "user_id": "u"}).json()["results"]
    assert found and found[0]["category"] == Category.MESSAGE.value
    assert client.post("/search", json={"query": "天气", "user_id": "v"}).json()["results"] == []


def test_the_conversation_being_answered_is_not_recalled_as_its_own_memory(memory: Memory) -> None:
    # A chat client saved the conversation (question included) before asking for its memories: those messages are in
    # the prompt already, so finding them again would be an echo, and it would hide that nothing relevant is known.
    earlier = "the sunset over the lake was unreal last week"
    memory.add([{"role": "user", "content": earlier}], user_id="u")
    chat = [{"role": "user", "content": "my cat knocked the plant over again this morning"},
            {"role": "assistant", "content": "oh no, is the plant alright?"},
            {"role": "user", "content": "is the plant alright after what my cat did?"}]
    memory.add(chat, user_id="u")  # saved before the reply, as SillyTavern's plugin does

    recalled = memory.context(chat, user_id="u", min_relevance=0.2, top_k=5)
    said_here = {m["content"] for m in chat}
    assert recalled["memories"], "the fact extracted from the saved turn is a memory like any other"
    assert not said_here & {m["memory"] for m in recalled["memories"]}
    assert all(m["category"] != "message" for m in recalled["memories"])
    # A message of another conversation is still found, and /search itself hides nothing.
    found = memory.context([{"role": "user", "content": "what was the sunset over the lake like?"}], user_id="u")
    assert [m["memory"] for m in found["memories"]] == [earlier]
    searched = {hit["memory"] for hit in memory.search("is the plant alright?", user_id="u", top_k=10)["results"]}
    assert "oh no, is the plant alright?" in searched


# --- evidence is kept after the add answers ----------------------------------------------------------------------


class HeldPassages:
    """The hashing embedder, with passages (the evidence messages) held until released: what a slow embedding service
    looks like from the add's side. A service takes several calls at once (as the OpenAI-compatible embedder does), so
    other embeddings go on meanwhile."""

    max_concurrency = 4

    def __init__(self, *held_messages: str) -> None:
        self.held_messages = held_messages
        self.inner = build_embedder("hashing")
        self.model_id, self.dims, self.calibration = self.inner.model_id, self.inner.dims, self.inner.calibration
        self.max_input_chars = self.inner.max_input_chars
        self.release = threading.Event()
        self.held = threading.Event()

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        if any(text.endswith(held) for text in texts for held in self.held_messages):  # a message, not a fact
            self.held.set()
            assert self.release.wait(30), "never released"
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> np.ndarray:
        return self.inner.embed_query(text)


def test_a_sync_add_answers_before_its_messages_are_embedded(tmp_path: Path) -> None:
    said = "I watched the sunset over the lake, all orange and pink"
    embedder = HeldPassages(said)
    memory = AsyncMemory(build_store(f"sqlite:///{tmp_path / 'held.db'}"), embedder)

    async def run() -> None:
        answer = await asyncio.wait_for(memory.add(said, user_id="u"), 10)  # answers while the evidence is held
        assert await asyncio.to_thread(embedder.held.wait, 5)
        turn = await memory._run(memory.store.get_turn, answer["event_id"])
        assert turn is not None and turn.status.value == "processing"  # still leased: a worker leaves it alone
        bob = await asyncio.wait_for(memory.add("Bob likes tea", user_id="bob", infer=False), 10)
        assert bob["results"]  # another user is not held up by it
        searching = asyncio.ensure_future(memory.search("lake sunset", user_id="u"))
        await asyncio.sleep(0.2)
        assert not searching.done()  # a read in the same scope waits for the evidence...
        embedder.release.set()
        found = (await asyncio.wait_for(searching, 10))["results"]
        assert found[0]["memory"] == "User watched the sunset over the lake, all orange and pink"
        listed = (await memory.get_all(user_id="u", include_messages=True))["results"]
        assert [m["memory"] for m in listed if m["category"] == "message"] == [said]  # ...which is then kept
        assert (await memory.get_event(answer["event_id"]))["status"] == "SUCCEEDED"
        await memory.close()

    asyncio.run(run())


_ADD_AND_HANG = """
import asyncio, json, sys
from jiyi import AsyncMemory, build_store
from jiyi.write_path import WriteSettings
from tests.test_evidence import HeldPassages

async def main():
    said = sys.argv[2]
    embedder = HeldPassages(said)
    memory = AsyncMemory(build_store(sys.argv[1]), embedder, write_settings=WriteSettings(lease_seconds=0.5))
    answer = await memory.add([{"role": "user", "content": said}, {"role": "assistant", "content": "真好！"}],
                              user_id="u")
    assert await asyncio.to_thread(embedder.held.wait, 10)
    print(json.dumps(answer), flush=True)
    await asyncio.sleep(60)  # its messages' embedding is held: killed here

asyncio.run(main())
"""


def _add_and_die(path: str, said: str) -> dict[str, Any]:
    """A real process adds `said` to the store at `path` and is killed once the add answered, its evidence not kept."""
    process = subprocess.Popen([sys.executable, "-c", _ADD_AND_HANG, path, said], stdout=subprocess.PIPE, text=True,
                               cwd=Path(__file__).resolve().parents[1])
    assert process.stdout is not None
    answer: dict[str, Any] = json.loads(process.stdout.readline())
    process.kill()
    process.wait(10)
    return answer


def test_evidence_left_by_a_process_that_died_is_kept_by_the_next(tmp_path: Path) -> None:
    path = f"sqlite:///{tmp_path / 'died.db'}"
    said = "我周末去爬了香山，风景特别美"
    answer = _add_and_die(path, said)
    second = Memory(_async=AsyncMemory(build_store(path), build_embedder("hashing"),
                                       write_settings=WriteSettings(lease_seconds=0.5)))
    assert second.get_event(str(answer["event_id"]))["status"] == "RUNNING"  # still leased to the dead process
    time.sleep(0.6)
    assert second.process_pending() == 1  # the lease ran out: taken again, only the evidence is left to do
    event = second.get_event(str(answer["event_id"]))
    assert event["status"] == "SUCCEEDED" and event["results"] == answer["results"]
    listed = second.get_all(user_id="u", include_messages=True, limit=100)["results"]
    assert sorted(m["memory"] for m in listed if m["category"] == "message") == sorted([said, "真好！"])
    facts = [m for m in listed if m["category"] != "message"]
    assert len(facts) == len({m["memory"] for m in facts}) == len(answer["results"])  # no fact extracted twice
    for fact in facts:
        assert [h["event"] for h in second.history(fact["id"])] == ["ADD"]
    second.close()


def test_the_next_process_takes_up_what_a_dead_one_left_without_a_worker(tmp_path: Path) -> None:
    """A script, not a server: nobody calls process_pending. Its first call takes up the turn a killed process left
    (once the lease ran out), and a queued async add is left to whoever processes the queue."""
    path = f"sqlite:///{tmp_path / 'resumed.db'}"
    said = "我周末去爬了香山，风景特别美"
    answer = _add_and_die(path, said)
    time.sleep(0.6)  # the dead process's lease (0.5 s) runs out
    with Memory(_async=AsyncMemory(build_store(path), build_embedder("hashing"),
                                   write_settings=WriteSettings(lease_seconds=0.5))) as second:
        queued = second.add("我在学吉他", user_id="u", async_mode=True)["event_id"]
        second.settle()  # what the first call took up in the background is done
        assert second.get_event(str(answer["event_id"]))["status"] == "SUCCEEDED"
        assert said in [m["memory"] for m in messages_of(second, "u")]  # kept as evidence
        assert second.get_event(queued)["status"] == "PENDING"
        assert second.process_pending() == 1  # the queued add, and nothing else


def test_a_message_said_again_word_for_word_is_returned_once(memory: Memory, clock: SimClock) -> None:
    for day in range(4):  # the same small talk on four days, between other things
        clock.now = START + timedelta(days=day)
        memory.add([{"role": "user", "content": "just got off work, traffic was terrible"},
                    {"role": "assistant", "content": f"hope day {day} gets better"}], user_id="u")
    found = [r["memory"] for r in memory.search("traffic after work", user_id="u", top_k=5)["results"]]
    assert found.count("just got off work, traffic was terrible") == 1, found
    assert len(messages_of(memory, "u")) == 8  # every one is still stored


def test_an_event_loop_that_ends_finishes_the_evidence_of_its_adds_first(tmp_path: Path) -> None:
    """An AsyncMemory never closed, in `asyncio.run(main())`: the loop's end cancelled the evidence task, and the
    messages stayed unsearchable until a worker took the turn up (a script has none). The loop now waits for it."""
    path = f"sqlite:///{tmp_path / 'loop.db'}"
    said = "Just got back from Lisbon, the custard tarts were unreal"
    embedder = HeldPassages(said)
    memory = AsyncMemory(build_store(path), embedder)

    async def main() -> dict[str, object]:
        answer = await memory.add(said, user_id="u")
        assert await asyncio.to_thread(embedder.held.wait, 5)
        threading.Timer(0.3, embedder.release.set).start()  # the embedding goes on after the loop is told to end
        return answer

    answer = asyncio.run(main())
    turn = memory.store.get_turn(str(answer["event_id"]))
    assert turn is not None and turn.status.value == "done"
    with Memory(_async=AsyncMemory(build_store(path), build_embedder("hashing"))) as later:
        assert said in [r["memory"] for r in later.search("Lisbon custard tarts", user_id="u")["results"]]
    asyncio.run(memory.close())


@pytest.mark.parametrize("embedder", ["hashing", "e5"])  # e5: the default, with a model thread of its own
def test_a_script_that_never_closes_its_memory_still_keeps_every_message(tmp_path: Path, embedder: str) -> None:
    """As a script written for mem0 does (its Memory has no close()): add, and let the interpreter exit. The last
    adds' messages were still being embedded as evidence, and the exit refused that work: they stayed unsearchable
    with tracebacks on stderr. The Memory now finishes them at exit."""
    db = tmp_path / "script.db"
    config = f'{{"store": "sqlite:///{db}", "embedder": "{embedder}"}}'
    script = ("from jiyi import Memory\n"
              f"m = Memory.from_config({config})\n"
              "m.add('我上周去了一趟青岛，海边的风好大', user_id='u')\n"
              "m.add('Just got back from Lisbon, the custard tarts were unreal', user_id='u')\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    with Memory.from_config({"store": f"sqlite:///{db}", "embedder": embedder}) as memory:
        found = memory.search("Lisbon custard tarts", user_id="u")["results"]
        assert "Just got back from Lisbon, the custard tarts were unreal" in [r["memory"] for r in found]
        assert memory.store.turn_counts() == {"done": 2}
