"""Reading a JSON object out of what LLMs really send. The same cases run end-to-end through the fake server in
test_openai_client.py, so each shape is known to survive the HTTP client too."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from jiyi.llms.base import LLMBadOutput
from jiyi.llms.jsonparse import parse_json_object, strip_reasoning

# (id, what the model sent, what the parser must read out of it)
READABLE: list[tuple[str, str, dict[str, Any]]] = [
    ("plain", '{"facts": ["likes green tea", "lives in Hangzhou"]}',
     {"facts": ["likes green tea", "lives in Hangzhou"]}),
    ("plain-chinese", '{"facts": ["喜欢喝龙井茶", "住在杭州"]}', {"facts": ["喜欢喝龙井茶", "住在杭州"]}),
    ("fenced-json", '```json\n{"facts": ["a"]}\n```', {"facts": ["a"]}),
    ("fenced-bare", '```\n{"facts": ["a"]}\n```', {"facts": ["a"]}),
    ("chatter", 'Sure! Here is the JSON: {"facts": ["a", "b"]} Let me know if you need anything else.',
     {"facts": ["a", "b"]}),
    ("chatter-and-fence", 'Here you go:\n```json\n{"facts": ["a"]}\n```\nHope this helps!', {"facts": ["a"]}),
    ("chatter-with-braces-first", 'I read {the text} carefully. {"facts": ["a"]}', {"facts": ["a"]}),
    ("truncated-list", '{"facts": ["a", "b", "c', {"facts": ["a", "b"]}),
    ("truncated-after-comma", '{"facts": ["a", "b",', {"facts": ["a", "b"]}),
    ("truncated-objects", '{"memory": [{"id": "1", "event": "ADD"}, {"id": "2", "ev',
     {"memory": [{"id": "1", "event": "ADD"}]}),
    ("truncated-in-fence", '```json\n{"facts": ["a", "b", "c', {"facts": ["a", "b"]}),
    ("truncated-escapes", r'{"facts": ["she said \"hi\", then left", "b", "c',
     {"facts": ['she said "hi", then left', "b"]}),
    ("truncated-braces-in-strings", '{"facts": ["uses {x} and [y]", "b", "unfinished [',
     {"facts": ["uses {x} and [y]", "b"]}),
    ("think-block", '<think>The user said {"maybe": 1}... let me think.</think>\n{"facts": ["a"]}', {"facts": ["a"]}),
    ("bare-list", '["a", "b"]', {"items": ["a", "b"]}),
    ("first-of-two", '{"a": 1}\n{"b": 2}', {"a": 1}),
    ("fence-wins-over-example", 'For example {"facts": []}. Answer:\n```json\n{"facts": ["a"]}\n```', {"facts": ["a"]}),
]

# (id, what the model sent): nothing usable, so the caller must learn that rather than get {}.
UNREADABLE: list[tuple[str, str | None]] = [
    ("none", None),
    ("empty", ""),
    ("whitespace", "  \n\t "),
    ("prose", "I'm sorry, I can't help with that."),
    ("truncated-before-any-item", '{"facts": ["a'),
    ("truncated-at-the-start", '{"fac'),
    ("only-thinking", "<think>still thinking about {the answer"),
    ("broken-syntax", '{"facts": ["a" "b"]}'),
    ("scalar", "42"),
    ("brackets-inside-a-cut-string", '{"facts": ["see [1, 2'),
]


@pytest.mark.parametrize("text, expected", [c[1:] for c in READABLE], ids=[c[0] for c in READABLE])
def test_reads_the_json_object(text: str, expected: dict[str, Any]) -> None:
    assert parse_json_object(text) == expected


@pytest.mark.parametrize("text", [c[1] for c in UNREADABLE], ids=[c[0] for c in UNREADABLE])
def test_nothing_usable_is_bad_output(text: str | None) -> None:
    with pytest.raises(LLMBadOutput):
        parse_json_object(text)


def test_bad_output_is_an_llm_error_and_a_backend_failure() -> None:
    from jiyi.errors import BackendUnavailable
    from jiyi.llms.base import LLMError

    assert issubclass(LLMBadOutput, LLMError) and issubclass(LLMError, BackendUnavailable)


def test_the_error_shows_the_start_of_what_came_back() -> None:
    with pytest.raises(LLMBadOutput, match="sorry"):
        parse_json_object("I'm sorry, I can't help with that.")


@pytest.mark.parametrize("text, expected", [
    ("<think>hmm</think>answer", "answer"),
    ("<THINK>\nmulti\nline\n</THINK>\n\n{}", "{}"),
    ("<think>a</think>x<think>b</think>y", "xy"),
    ("<think>never closed", ""),
    ("no reasoning here", "no reasoning here"),
])
def test_strip_reasoning(text: str, expected: str) -> None:
    assert strip_reasoning(text) == expected


# JSON's own punctuation inside the facts is where a truncation repair goes wrong, so it is drawn often.
fact = st.text(alphabet='ab1 ,:[]{}"\\', max_size=12) | st.text(max_size=12)


@given(facts=st.lists(fact, min_size=1, max_size=6), cut=st.integers(1, 200))
@example(facts=["see [1, 2]"], cut=len('{"facts": ["see [1, 2'))  # JSON inside the cut string is not the answer
def test_a_truncated_answer_gives_a_prefix_of_the_facts_or_bad_output(facts: list[str], cut: int) -> None:
    """Cut anywhere, the answer never invents or alters a fact: it is the complete leading items, or an error."""
    text = json.dumps({"facts": facts}, ensure_ascii=False)
    try:
        value = parse_json_object(text[:cut])
    except LLMBadOutput:
        return
    assert set(value) == {"facts"}
    assert value["facts"] == facts[: len(value["facts"])]
    assert value["facts"], "an empty salvage would silently lose the turn"


decision = st.fixed_dictionaries({"id": st.text(alphabet="0123456789", min_size=1, max_size=3),
                                  "text": fact, "event": st.sampled_from(["ADD", "UPDATE", "DELETE", "NONE"])})


@given(decisions=st.lists(decision, min_size=1, max_size=4), cut=st.integers(1, 400))
def test_a_truncated_list_of_objects_keeps_only_whole_objects(decisions: list[dict[str, str]], cut: int) -> None:
    """A decision cut before its "event" must not come back as a decision without one."""
    text = json.dumps({"memory": decisions}, ensure_ascii=False)
    try:
        value = parse_json_object(text[:cut])
    except LLMBadOutput:
        return
    assert value["memory"] == decisions[: len(value["memory"])]


@given(value=st.dictionaries(st.text(max_size=8), st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3),
    max_leaves=8), max_size=4), chatter=st.sampled_from(["", "Here it is: ", "```json\n", "好的，结果如下：\n"]))
def test_any_complete_object_round_trips(value: dict[str, Any], chatter: str) -> None:
    text = chatter + json.dumps(value, ensure_ascii=False) + ("\n```" if chatter.startswith("```") else "")
    assert parse_json_object(text) == value
