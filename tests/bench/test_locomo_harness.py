"""bench/locomo.py on a tiny synthetic LoCoMo-format conversation (never the real data): parsing, ingestion as
mem0 did it and as a plain client would, metric arithmetic, end-to-end runs with the hashing embedder, and the
--judge path over a real local OpenAI-protocol server."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from jiyi import Memory, Scope, build_embedder, build_store
from jiyi.testing.fake_openai import FakeOpenAI

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))  # bench/ is not a package
import locomo

MAY_8 = "1:56 pm on 8 May, 2023"
JUNE_27 = "10:37 am on 27 June, 2023"


def _turn(dia_id: str, speaker: str, text: str, **extra: Any) -> dict[str, Any]:
    return {"speaker": speaker, "dia_id": dia_id, "text": text, **extra}


def _qa(question: str, evidence: list[str], category: int, answer: str | None = "x") -> dict[str, Any]:
    item: dict[str, Any] = {"question": question, "evidence": evidence, "category": category}
    if category == 5:
        item["adversarial_answer"] = answer
    else:
        item["answer"] = answer
    return item


def synthetic_sample(session_1_date: str = MAY_8) -> dict[str, Any]:
    return {
        "sample_id": "syn-1",
        "conversation": {
            "speaker_a": "Alice",
            "speaker_b": "Bob",
            # session_2 first and a date with no session: order and key filtering must not depend on the file.
            "session_2_date_time": JUNE_27,
            "session_2": [
                _turn("D2:1", "Alice", "I started learning the accordion last week."),
                _turn("D2:2", "Bob", "My sister Quenby is visiting from Lisbon."),
                _turn("D2:3", "Alice", "Zephyrine knocked over my plant this morning."),
                _turn("D2:4", "Bob", "I painted a sunset over the lake."),
            ],
            "session_1_date_time": session_1_date,
            "session_1": [
                _turn("D1:1", "Alice", "Hi Bob! I just adopted a kitten named Zephyrine."),
                _turn("D1:2", "Bob", "Congrats! I went hiking at Mount Tamalpais yesterday."),
                _turn("D1:3", "Alice", "I work as a nurse at the city hospital."),
                _turn("D1:4", "Bob", "Look at my new guitar!", img_url=["https://example.invalid/g.jpg"],
                      blip_caption="a photo of a red electric guitar", query="red guitar"),
            ],
            "session_3_date_time": "9:00 am on 1 July, 2023",
        },
        "qa": [
            _qa("What is the name of Alice's kitten?", ["D1:1"], 4, "Zephyrine"),
            _qa("What does Alice do for work and what is she learning?", ["D1:3; D2:1"], 1, "Nurse; accordion"),
            _qa("Where did Bob go hiking?", ["D:1:2"], 4, "Mount Tamalpais"),
            _qa("Who is Quenby?", ["D2:02"], 4, "Bob's sister"),
            _qa("What did Bob paint?", ["D2:4", "D9:9"], 2, "A sunset"),
            _qa("What is the name of Bob's kitten?", ["D1:1"], 5, "Zephyrine"),
            _qa("Would Alice enjoy a music festival?", [], 3, "Likely yes"),
            _qa("What is Bob's job?", ["D7:1"], 4, "Unknown"),
        ],
        "session_summary": {"session_1_summary": "side data, never input"},
    }


@pytest.fixture
def data_file(tmp_path: Path) -> Path:
    path = tmp_path / "locomo-tiny.json"
    path.write_text(json.dumps([synthetic_sample()]), encoding="utf-8")
    return path


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[Memory]:
    m = Memory(build_store(str(tmp_path / "ingest.db")), build_embedder("hashing"))
    yield m
    m.close()


# --- parsing -------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("evidence", "expected"), [
    (["D1:3; D2:1"], ["D1:3", "D2:1"]),
    (["D9:1 D4:4 D4:6"], ["D9:1", "D4:4", "D4:6"]),
    (["D:1:2"], ["D1:2"]),
    (["D2:02"], ["D2:2"]),
    (["D30:05", "D30:5"], ["D30:5"]),
    (["D1:18", "D", "D1:20"], ["D1:18", "D1:20"]),
    ("D8:6; D9:17", ["D8:6", "D9:17"]),
    ([], []),
])
def test_normalise_evidence(evidence: Any, expected: list[str]) -> None:
    assert locomo.normalise_evidence(evidence) == expected


def test_normalise_evidence_drops_ids_outside_the_conversation() -> None:
    assert locomo.normalise_evidence(["D2:4", "D9:9", "D:1:1"], known={"D1:1", "D2:4"}) == ["D2:4", "D1:1"]


@pytest.mark.parametrize(("text", "expected"), [
    (MAY_8, datetime(2023, 5, 8, 13, 56, tzinfo=UTC)),
    (JUNE_27, datetime(2023, 6, 27, 10, 37, tzinfo=UTC)),
    ("12:48 am on 1 February, 2023", datetime(2023, 2, 1, 0, 48, tzinfo=UTC)),
    (" 7:31 PM on 21 January, 2022 ", datetime(2022, 1, 21, 19, 31, tzinfo=UTC)),
])
def test_parse_session_date(text: str, expected: datetime) -> None:
    assert locomo.parse_session_date(text) == expected


def test_an_unparseable_session_date_fails_loudly(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unparseable session date 'yesterday'"):
        locomo.parse_session_date("yesterday")
    path = tmp_path / "bad.json"
    path.write_text(json.dumps([synthetic_sample(session_1_date="sometime in May")]), encoding="utf-8")
    with pytest.raises(ValueError, match="syn-1, session_1_date_time"):
        locomo.load_conversations(path)


def test_load_conversations(data_file: Path) -> None:
    [conversation] = locomo.load_conversations(data_file)
    assert conversation.speakers == ("Alice", "Bob")
    assert [s.number for s in conversation.sessions] == [1, 2]  # numeric order; session_3 has a date only
    assert conversation.sessions[0].started_at == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert conversation.sessions[0].turns[3].content == (
        "Bob: Look at my new guitar! [shares a photo: a photo of a red electric guitar]")
    questions = conversation.questions
    assert [q.evidence for q in questions] == [
        ("D1:1",), ("D1:3", "D2:1"), ("D1:2",), ("D2:2",), ("D2:4",), ("D1:1",), (), ()]
    assert questions[4].dropped == ("D9:9",)
    assert questions[7].dropped == ("D7:1",)
    assert questions[5].answer is None  # category 5 carries only an adversarial answer


# --- ingestion -----------------------------------------------------------------------------------------------------


def test_ingest_as_mem0_did(data_file: Path, memory: Memory) -> None:
    [conversation] = locomo.load_conversations(data_file)
    counts = locomo.ingest(memory, [conversation], infer=False, batch=2)
    assert (counts["adds"], counts["messages"]) == (8, 16)  # 2 sessions x 2 batches x 2 users; each turn twice

    may_8, june_27 = datetime(2023, 5, 8, 13, 56, tzinfo=UTC), datetime(2023, 6, 27, 10, 37, tzinfo=UTC)
    for speaker, other in (("Alice", "Bob"), ("Bob", "Alice")):
        scope = Scope(user_id=f"syn-1:{speaker}")
        records = {r.provenance[0].external_id: r for r in memory.store.iter_records(scope)}
        assert sorted(records) == ["D1:1", "D1:2", "D1:3", "D1:4", "D2:1", "D2:2", "D2:3", "D2:4"]
        for dia_id, record in records.items():
            turn = next(t for s in conversation.sessions for t in s.turns if t.dia_id == dia_id)
            assert record.content == turn.content
            assert record.role == ("user" if turn.speaker == speaker else "assistant")
            assert len(record.provenance) == 1
            assert record.event_time == (may_8 if dia_id.startswith("D1:") else june_27)
            assert record.provenance[0].created_at == record.event_time
        assert records["D1:4"].content.endswith("[shares a photo: a photo of a red electric guitar]")
        assert records["D1:1"].content.startswith("Alice: ")
        messages = memory.store.list_messages(scope)
        assert [m.external_id for m in messages] == ["D1:1", "D1:2", "D1:3", "D1:4", "D2:1", "D2:2", "D2:3", "D2:4"]
        assert {m.role for m in messages if m.content.startswith(f"{other}:")} == {"assistant"}
    assert locomo.memory_counts(memory.store)["total"] == 16


def test_session_messages_give_each_speaker_the_user_role(data_file: Path) -> None:
    [conversation] = locomo.load_conversations(data_file)
    session = conversation.sessions[1]
    alice = locomo.session_messages(session, "Alice")
    bob = locomo.session_messages(session, "Bob")
    assert [m["role"] for m in alice] == ["user", "assistant", "user", "assistant"]
    assert [m["role"] for m in bob] == ["assistant", "user", "assistant", "user"]
    assert alice[1] == {"role": "assistant", "content": "Bob: My sister Quenby is visiting from Lisbon.",
                        "id": "D2:2", "created_at": "2023-06-27T10:37:00+00:00"}


def test_ingest_plain_one_user_one_add_per_turn(data_file: Path, memory: Memory,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    [conversation] = locomo.load_conversations(data_file)
    calls: list[tuple[list[dict[str, Any]], dict[str, Any]]] = []
    real_add = memory.add

    def spy(messages: Any, **kwargs: Any) -> dict[str, Any]:
        calls.append((messages, kwargs))
        return real_add(messages, **kwargs)

    monkeypatch.setattr(memory, "add", spy)
    counts = locomo.ingest(memory, [conversation], infer=False, ingest_mode="plain")
    assert (counts["adds"], counts["messages"]) == (8, 8)  # 8 turns, each added once, once

    turns = [(s, t) for s in conversation.sessions for t in s.turns]
    assert len(calls) == len(turns)
    for (messages, kwargs), (session, turn) in zip(calls, turns, strict=True):
        assert messages == [{"role": "user", "content": turn.content, "id": turn.dia_id,
                             "created_at": session.started_at.isoformat()}]
        assert kwargs == {"user_id": "syn-1", "infer": False, "timestamp": session.started_at}

    records = list(memory.store.iter_records())
    assert {r.scope.user_id for r in records} == {"syn-1"}  # no per-speaker users
    assert {r.role for r in records} == {"user"}  # Bob's turns too
    by_turn = {r.provenance[0].external_id: r for r in records}
    assert len(records) == len(by_turn) == 8 and all(len(r.provenance) == 1 for r in records)
    for session, turn in turns:
        assert by_turn[turn.dia_id].content == turn.content
        assert by_turn[turn.dia_id].event_time == session.started_at
    assert by_turn["D1:4"].content == "Bob: Look at my new guitar! [shares a photo: a photo of a red electric guitar]"
    stored = memory.store.list_messages(Scope(user_id="syn-1"))
    assert [m.external_id for m in stored] == [t.dia_id for _, t in turns]
    assert {m.role for m in stored} == {"user"}


# --- metrics -------------------------------------------------------------------------------------------------------


def _hit(content: str, score: float, *dia_ids: str, user: str = "u", category: str = "fact") -> locomo.Retrieved:
    return locomo.Retrieved(content, score, tuple(dia_ids), user, category)


def test_merge_results_ranks_by_score_and_drops_the_other_speakers_copy() -> None:
    alice = [_hit("A: kitten", 0.9, "D1:1", user="a"), _hit("A: nurse", 0.5, "D1:3", user="a")]
    bob = [_hit("A: kitten", 0.7, "D1:1", user="b"), _hit("B: guitar", 0.6, "D1:4", user="b"),
           _hit("A: kitten", 0.4, "D2:3", user="b")]  # same text from another turn: a different memory
    merged = locomo.merge_results([alice, bob], k=10)
    assert [(m.content, m.user_id, m.dia_ids) for m in merged] == [
        ("A: kitten", "a", ("D1:1",)), ("B: guitar", "b", ("D1:4",)), ("A: nurse", "a", ("D1:3",)),
        ("A: kitten", "b", ("D2:3",))]
    assert [m.content for m in locomo.merge_results([bob, alice], k=2)] == ["A: kitten", "B: guitar"]


def test_dia_ids_of_a_search_result() -> None:
    item = {"provenance": [{"message_id": "m1", "role": "user", "external_id": "D3:07"},
                           {"message_id": "m2", "role": "user"}, {"message_id": "m3", "external_id": "D3:7"},
                           {"message_id": "m4", "external_id": "D4:1"}]}
    assert locomo.dia_ids_of(item) == ("D3:7", "D4:1")


def test_score_question_on_a_hand_computed_ranking() -> None:
    ranked = [("D1:3",), (), ("D1:1",), ("D3:1",), ("D4:4",), ("D2:2", "D1:1")]
    scores = locomo.score_question(["D1:1", "D2:2"], ranked, ks=(2, 5, 6))
    assert scores == {"any@2": 0.0, "frac@2": 0.0, "all@2": 0.0,
                      "any@5": 1.0, "frac@5": 0.5, "all@5": 0.0,
                      "any@6": 1.0, "frac@6": 1.0, "all@6": 1.0}
    two_of_three = locomo.score_question(["D1:1", "D1:2", "D1:3"], [("D1:1", "D1:2")], ks=(1,))
    assert two_of_three["frac@1"] == pytest.approx(2 / 3)
    with pytest.raises(ValueError):
        locomo.score_question([], ranked, ks=(5,))


def _row(category: int, any5: float | None, frac5: float = 0.0) -> dict[str, Any]:
    metrics = None if any5 is None else {"any@5": any5, "frac@5": frac5, "all@5": 0.0}
    return {"category": category, "metrics": metrics}


def test_summarise_micro_averages_and_keeps_category_5_apart() -> None:
    rows = [_row(1, 1.0, 0.5), _row(1, 0.0), _row(2, 1.0, 1.0), _row(3, None), _row(4, 1.0, 0.25),
            _row(5, 1.0, 1.0), _row(5, 1.0, 1.0)]
    summary = locomo.summarise(rows, ks=(5,))
    assert list(summary) == ["1", "2", "3", "4", "1-4", "5"]
    assert summary["1"]["any@5"] == 0.5 and summary["1"]["frac@5"] == 0.25
    assert summary["3"] == {"name": "open-domain", "questions": 1, "scored": 0, "skipped_no_evidence": 1,
                            "any@5": None, "frac@5": None, "all@5": None}
    headline = summary["1-4"]
    assert (headline["questions"], headline["scored"], headline["skipped_no_evidence"]) == (5, 4, 1)
    assert headline["any@5"] == 0.75  # 3 of 4 scored questions; category 5's two hits are not in it
    assert headline["frac@5"] == round((0.5 + 0 + 1 + 0.25) / 4, 4)
    assert summary["5"]["scored"] == 2 and summary["5"]["any@5"] == 1.0
    assert "| **1-4 overall** | 4 | 75.0 | 43.8 | 0.0 |" in locomo.format_table(summary, ks=(5,))


def test_percentiles() -> None:
    assert locomo.percentiles(list(range(1, 101))) == {"n": 100, "p50": 50.5, "p99": 99.01, "mean": 50.5,
                                                       "max": 100.0}
    assert locomo.percentiles([]) == {"n": 0}


# --- end to end ----------------------------------------------------------------------------------------------------


def _run(data_file: Path, tmp_path: Path, *extra: str) -> dict[str, Any]:
    out = tmp_path / "result.json"
    returned = locomo.main(["--data", str(data_file), "--embedder", "hashing", "--out", str(out), "--quiet",
                            "--details", *extra])
    written = json.loads(out.read_text(encoding="utf-8"))
    assert written == json.loads(json.dumps(returned))
    return written


def test_end_to_end_on_the_tiny_file(data_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "bench.db"
    result = _run(data_file, tmp_path, "--infer", "false", "--store", str(store))
    mode = result["modes"]["infer=false"]
    assert result["settings"]["k"] == [5, 10] and result["data"]["conversations"] == ["syn-1"]
    assert mode["ingestion"]["memories"]["total"] == 16 and not mode["reused_store"]
    assert mode["questions"] == {"total": 8, "scored": 6, "skipped_no_evidence": 2, "evidence_ids_dropped": 2,
                                 "with_episode_in_top": 0}
    details = {row["question"]: row for row in mode["details"]}
    quenby = details["Who is Quenby?"]  # the evidence turn shares a rare word with the question
    assert quenby["metrics"]["any@5"] == 1.0
    assert "D2:2" in quenby["retrieved"][0]["dia_ids"]
    retrieved = [(r["memory"], tuple(r["dia_ids"])) for r in quenby["retrieved"]]
    assert len(retrieved) == len(set(retrieved))  # the other speaker's copy of each turn is merged away

    retrieval = mode["retrieval"]
    assert retrieval["1-4"]["questions"] == 7 and retrieval["1-4"]["scored"] == 5
    assert retrieval["5"]["scored"] == 1
    scored_1_4 = [row for row in mode["details"] if row["category"] != 5 and row["metrics"]]
    assert retrieval["1-4"]["any@10"] == round(sum(r["metrics"]["any@10"] for r in scored_1_4) / 5, 4)
    assert mode["latency_ms"]["per_call"]["n"] == 16 and mode["latency_ms"]["per_question"]["n"] == 8
    assert "| **1-4 overall** | 5 |" in capsys.readouterr().out

    again = _run(data_file, tmp_path, "--infer", "false", "--store", str(store), "--reuse", "--k", "3")
    reused = again["modes"]["infer=false"]
    assert reused["reused_store"] and reused["ingestion"] == mode["ingestion"]
    assert "any@3" in reused["retrieval"]["1-4"] and "any@5" not in reused["retrieval"]["1-4"]


def test_end_to_end_plain_ingestion(data_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "plain.db"
    result = _run(data_file, tmp_path, "--infer", "false", "--ingest", "plain", "--store", str(store))
    mode = result["modes"]["infer=false"]
    assert result["settings"]["ingest"] == "plain" and result["settings"]["batch"] == 1
    assert mode["ingest"] == "plain" and not mode["reused_store"]
    assert (mode["ingestion"]["adds"], mode["ingestion"]["messages"]) == (8, 8)
    assert mode["ingestion"]["memories"]["total"] == 8  # each turn once: one user
    assert mode["latency_ms"]["per_call"]["n"] == 8 and mode["latency_ms"]["per_question"]["n"] == 8  # one call each

    [conversation] = locomo.load_conversations(data_file)
    content_of = {t.dia_id: t.content for s in conversation.sessions for t in s.turns}
    for row in mode["details"]:
        # Every hit is the one user's, its dia_ids its provenance (the turn it was stored from), and the metrics
        # are computed from exactly those dia_ids.
        assert {r["user_id"] for r in row["retrieved"]} == {"syn-1"}
        assert all([content_of[d] for d in r["dia_ids"]] == [r["memory"]] for r in row["retrieved"])
        if row["metrics"] is not None:
            expected = locomo.score_question(row["evidence"], [r["dia_ids"] for r in row["retrieved"]], (5, 10))
            assert row["metrics"] == expected
    details = {row["question"]: row for row in mode["details"]}
    assert details["Who is Quenby?"]["retrieved"][0]["dia_ids"] == ["D2:2"]
    assert details["Who is Quenby?"]["metrics"]["any@10"] == 1.0
    scored_1_4 = [row for row in mode["details"] if row["category"] != 5 and row["metrics"]]
    assert mode["retrieval"]["1-4"]["any@10"] == round(sum(r["metrics"]["any@10"] for r in scored_1_4) / 5, 4)
    assert "### LoCoMo, plain ingestion, infer=false" in capsys.readouterr().out

    # The ingestion mode is part of the --reuse key: the same store is reused by plain, re-ingested for mem0.
    again = _run(data_file, tmp_path, "--ingest", "plain", "--store", str(store), "--reuse")
    assert again["modes"]["infer=false"]["reused_store"]
    mem0 = _run(data_file, tmp_path, "--ingest", "mem0", "--store", str(store), "--reuse")["modes"]["infer=false"]
    assert not mem0["reused_store"] and mem0["ingest"] == "mem0"
    assert mem0["ingestion"]["memories"]["total"] == 16


def test_a_store_from_before_ingest_modes_still_matches_mem0(data_file: Path, tmp_path: Path) -> None:
    store = tmp_path / "old.db"
    _run(data_file, tmp_path, "--store", str(store))
    with Memory(build_store(str(store)), build_embedder("hashing")) as m:
        saved = json.loads(m.store.get_state(locomo.STATE_KEY) or "null")
        del saved["settings"]["ingest"]  # as the harness wrote it before --ingest
        m.store.set_state(locomo.STATE_KEY, json.dumps(saved))
    assert _run(data_file, tmp_path, "--store", str(store), "--reuse")["modes"]["infer=false"]["reused_store"]
    plain = _run(data_file, tmp_path, "--ingest", "plain", "--store", str(store), "--reuse")["modes"]["infer=false"]
    assert not plain["reused_store"]


def test_plain_ingestion_refuses_a_batch(data_file: Path) -> None:
    with pytest.raises(SystemExit):
        locomo.parse_args(["--data", str(data_file), "--ingest", "plain", "--batch", "3"])
    assert locomo.parse_args(["--ingest", "plain"]).batch == 1
    assert locomo.parse_args([]).batch == 2 and locomo.parse_args(["--batch", "4"]).batch == 4


def test_reuse_refuses_a_store_it_did_not_write(data_file: Path, tmp_path: Path) -> None:
    foreign = tmp_path / "foreign.db"
    with Memory(build_store(str(foreign)), build_embedder("hashing")) as m:
        m.add("I like tea", user_id="someone", infer=False)
    with pytest.raises(SystemExit, match="did not write"):
        _run(data_file, tmp_path, "--store", str(foreign), "--reuse")


def test_both_modes(data_file: Path, tmp_path: Path) -> None:
    result = _run(data_file, tmp_path, "--infer", "both", "--store", str(tmp_path / "s.db"), "--limit-questions", "4")
    assert set(result["modes"]) == {"infer=false", "infer=true"}
    assert result["modes"]["infer=true"]["extractor"] == "offline"
    assert (tmp_path / "s.infer-false.db").exists() and (tmp_path / "s.infer-true.db").exists()
    assert all(m["questions"]["total"] == 4 for m in result["modes"].values())


# --- LLM-judged answers --------------------------------------------------------------------------------------------


def test_parse_label() -> None:
    assert locomo.parse_label('{"label": "CORRECT"}') == "CORRECT"
    assert locomo.parse_label('```json\n{"label": "wrong"}\n```') == "WRONG"
    assert locomo.parse_label("The answer is INCORRECT.") == "WRONG"
    assert locomo.parse_label("I cannot tell") is None


def _scripted_llm(body: dict[str, Any]) -> str:
    system, user = body["messages"][0]["content"], body["messages"][-1]["content"]
    if system == locomo.ANSWER_PROMPT:
        return "Zephyrine" if "kitten" in user else "I don't know"
    if "Who is Quenby?" in user:
        return "INCORRECT, the answer misses the sister."  # free text: still read as WRONG
    return '{"label": "CORRECT"}' if "Gold answer: Zephyrine\nAnswer: Zephyrine" in user else '{"label": "WRONG"}'


def test_judge_against_a_local_openai_server(data_file: Path, tmp_path: Path) -> None:
    with FakeOpenAI(_scripted_llm) as server:
        result = _run(data_file, tmp_path, "--infer", "false", "--judge", "--llm", "openai:judge-model",
                      "--llm-base-url", server.base_url, "--llm-api-key", "sk-not-in-results")
        requests = server.chat_requests
    judged = result["modes"]["infer=false"]["judge"]
    assert judged["model"].startswith("openai:judge-model@")
    accuracy = judged["accuracy"]
    # Categories 1-4 with a gold answer are judged (7 questions, 2 calls each); category 5 is not.
    assert len(requests) == 14
    assert accuracy["4"] == {"name": "single-hop", "questions": 4, "correct": 1, "wrong": 3, "errors": 0,
                             "accuracy": 0.25}
    assert accuracy["1-4"]["questions"] == 7 and accuracy["1-4"]["accuracy"] == round(1 / 7, 4)
    assert accuracy["3"]["questions"] == 1 and accuracy["3"]["correct"] == 0
    answer_prompts = [r.body["messages"][-1]["content"] for r in requests
                      if r.body["messages"][0]["content"] == locomo.ANSWER_PROMPT]
    kitten = next(p for p in answer_prompts if "Alice's kitten" in p)
    assert "- (08 May 2023) Alice: Hi Bob! I just adopted a kitten named Zephyrine." in kitten
    assert "sk-not-in-results" not in (tmp_path / "result.json").read_text(encoding="utf-8")
    details = {row["question"]: row for row in result["modes"]["infer=false"]["details"]}
    assert details["What is the name of Alice's kitten?"]["judged"]["label"] == "CORRECT"
    assert "judged" not in details["What is the name of Bob's kitten?"]
