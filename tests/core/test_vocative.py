"""The assistant's name said to it is a way of addressing, not a word to search for (core/vocative.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from jiyi import AsyncMemory, Memory, build_embedder, build_store
from jiyi.core.vocative import without_the_name


@pytest.mark.parametrize(("message", "name", "searched"), [
    ("小暖在不在", "小暖", "在不在"),  # first
    ("早晨晴晴", "晴晴", "早晨"),  # a Chinese name last
    ("早上好呀暖暖", "暖暖", "早上好呀"),
    ("小雪 早啊 今儿北京刮大风", "小雪", "早啊 今儿北京刮大风"),
    ("wren i'm so tired today", "Wren", "i'm so tired today"),  # any case
    ("heyyy juno", "juno", "heyyy"),  # after a greeting, drawn out or not
    ("hey Sunny you awake", "Sunny", "hey you awake"),
    ("Good morning Harbor.", "Harbor", "Good morning"),
    ("Buenas noches, Sam!", "Sam", "Buenas noches"),  # set off by punctuation
    ("Sam, my doctor's office wants to know my blood type", "Sam", "my doctor's office wants to know my blood type"),
])
def test_the_name_is_taken_out_where_it_addresses(message: str, name: str, searched: str) -> None:
    assert without_the_name(message, name) == searched


@pytest.mark.parametrize(("message", "name"), [
    ("it was sunny all day", "Sunny"),  # a name that is a word keeps its meaning inside a sentence
    ("ask Sage about it", "Sage"),
    ("my friend Sam came over", "Sam"),
    ("samantha is here", "sam"),  # a part of another word
    ("今天下小雪了", "小雪"),
    ("我跟echo说过", "echo"),
    ("nova", "nova"),  # nothing else would be left
    ("早晨", None),
    ("早晨", ""),
])
def test_the_message_is_searched_as_said_otherwise(message: str, name: str | None) -> None:
    assert without_the_name(message, name) == message


def test_a_greeting_by_name_does_not_bring_the_messages_that_open_with_it(tmp_path: Path) -> None:
    """SillyTavern sends char_name: "小暖在不在" must not match every message the user began with 小暖."""
    said = [("小暖，跟你唠个事儿，我琢磨着不干了，份子钱一个月四千多，太黑了", "那您打算干点啥呢？"),
            ("小暖啊，刚收车，今儿个贼累，拉了一天活儿", "辛苦啦！"),
            ("小暖，我家小子在广州念大三，学土木的", "真不错！")]
    store = build_store(f"sqlite:///{tmp_path / 'v.db'}")
    with Memory(_async=AsyncMemory(store, build_embedder("e5"))) as memory:
        for user, assistant in said:
            memory.add([{"role": "user", "content": user}, {"role": "assistant", "content": assistant}], user_id="u")

        def injected(char_name: str | None) -> list[str]:
            answer = memory.context([{"role": "user", "content": "小暖在不在"}], user_id="u", char_name=char_name)
            return [m["memory"] for m in answer["memories"]]

        assert any(text.startswith("小暖") for text in injected(None))  # the premise: the name alone matches them
        assert not any(text.startswith("小暖") for text in injected("小暖"))
