from __future__ import annotations

import json

import pytest

from jiyi.core.injection import MEMORY_HEADER, inject, memory_block
from jiyi.core.intent import asks_for_advice, asks_something, asks_to_be_reminded, greets, names_what_advice_is_for
from jiyi.core.messages import ChatMessage
from jiyi.core.query_enhancement import (
    QUESTION_LABEL,
    clean_rewrite,
    context_query,
    last_user_message,
    recent_conversation,
    rewrite_input,
)
from jiyi.text import query_terms

CHAT = [
    ChatMessage("system", "你是小林"),
    ChatMessage("user", "我昨晚失眠了，到三点才睡着"),
    ChatMessage("assistant", "啊，那你今天一定很累吧"),
    ChatMessage("user", "你今天有什么不一样？"),
]


def test_context_query_holds_the_recent_messages_then_the_question() -> None:
    index = last_user_message(CHAT)
    assert index == 3
    recent = recent_conversation(CHAT, index, 6)
    assert [m.role for m in recent] == ["user", "assistant"]  # the system prompt is not conversation
    query = context_query(recent, CHAT[index].content)
    assert query == ("user: 我昨晚失眠了，到三点才睡着\nassistant: 啊，那你今天一定很累吧\n"
                     "User question: 你今天有什么不一样？")


def test_context_query_drops_the_oldest_lines_first_and_stays_within_the_cap() -> None:
    recent = [ChatMessage("user" if i % 2 else "assistant", f"message {i} " + "x" * 200) for i in range(20)]
    query = context_query(recent, "what about it?", max_chars=1200)
    assert len(query) <= 1200
    assert query.endswith(QUESTION_LABEL + "what about it?")
    assert "message 19" in query and "message 0 " not in query
    long_question = "为什么" * 600
    assert len(context_query(recent, long_question, 1200)) == 1200


def test_context_keeps_the_end_of_a_single_overlong_message() -> None:
    query = context_query([ChatMessage("user", "开头" + "很长" * 800 + "失眠")], "后来呢？", 300)
    assert len(query) <= 300 and "失眠" in query and query.endswith("User question: 后来呢？")


def test_no_user_message_means_nothing_to_search_for() -> None:
    assert last_user_message([ChatMessage("system", "hi"), ChatMessage("assistant", "hello")]) is None
    assert last_user_message([ChatMessage("user", "   ")]) is None


def test_rewrite_input_is_the_seed_contract() -> None:
    payload = json.loads(rewrite_input("你今天有什么不一样？", list(CHAT[1:3]), "小雨", "小林"))
    assert set(payload) == {"user_name", "char_name", "user_question", "recent_conversation"}
    assert payload["user_name"] == "小雨" and payload["char_name"] == "小林"
    assert "失眠" in payload["recent_conversation"] and "User question" not in payload["recent_conversation"]


@pytest.mark.parametrize("answer, expected", [
    ("结合最近对话：用户昨晚失眠，询问今天状态有何变化", "结合最近对话：用户昨晚失眠，询问今天状态有何变化"),
    ("\"user's insomnia last night\"", "user's insomnia last night"),
    ("Query: user's insomnia last night\nI rewrote it because...", "user's insomnia last night"),
    ("```\n用户昨晚失眠\n```", "用户昨晚失眠"),
    ("<think>they mean sleep</think>\n**用户昨晚失眠**", "用户昨晚失眠"),
    ("改写：「用户的狗豆豆」", "用户的狗豆豆"),
    ("- 1. user's dog", "1. user's dog"),
    ("   \n\n", None),
])
def test_rewrite_output_is_cleaned_to_one_line(answer: str, expected: str | None) -> None:
    assert clean_rewrite(answer) == expected


@pytest.mark.parametrize("query", ["晚饭推荐什么？", "今晚吃啥", "周末去哪玩比较好", "国庆该去哪儿",
                                   "送女朋友什么礼物好", "失眠怎么办",
                                   # as chat says them: 啥 for 什么, 咋 for 怎么
                                   "晚上老睡不着，有啥办法吗", "想给外婆寄点东西，寄啥好呢", "老是加班我该咋办",
                                   "Can you recommend a restaurant?", "What should I cook tonight?",
                                   "any ideas for a birthday gift?",
                                   # a noun between what and should, shall, and ideas asked for at the end
                                   "What snacks should I pack for the trip?", "What shall I make for lunch?",
                                   "wanna do something active this weekend, any ideas?",
                                   "下周去海边潜水，要注意什么？", "带老人坐高铁有啥要注意的", "自驾去西藏的注意事项",
                                   "面包店里哪种好一点", "这几款耳机哪款比较好"])
def test_requests_for_advice_are_recognised(query: str) -> None:
    assert asks_for_advice(query)


@pytest.mark.parametrize("query", ["你今天有什么不一样？", "我妹妹叫什么来着", "When did I move to Shanghai?",
                                   "哈哈好的", "我周末去哪了", "人死了以后会去哪", "我昨天买了什么",
                                   "推荐我吃泰式咖喱的人是谁", "Who recommended the pizza?",
                                   "你吃了啥", "我昨天做了啥", "路上注意安全", "哪天好呢我看看",
                                   "我大学读的什么专业来着？", "我岳父是做什么工作的？"])
def test_other_questions_are_not_requests_for_advice(query: str) -> None:
    assert not asks_for_advice(query)



@pytest.mark.parametrize("query", ["我之前学的那个手机剪视频的软件叫啥来着", "你还记得我爸腿脚那事吗",
                                   "记不记得我上回说的那家店", "我跟你说过我妹在哪上学吧", "我说过我不吃香菜",
                                   "咱家那只猫几岁来着",
                                   "Do you remember my trainer's name?", "What was the name of my dog again?",
                                   "Did I ever tell you where my sister lives?", "remember when I went to Porto?",
                                   "上回搬家那个事你还记得不", "do you remember the wedding in the rain?"])
def test_a_question_that_asks_to_be_reminded_is_recognised(query: str) -> None:
    assert asks_to_be_reminded(query)


@pytest.mark.parametrize("query", ["明天周几来着", "你还记得吗？", "记得带伞", "我妹妹叫小雨", "今天好累",
                                   "I remember my first bike.", "What was the weather like?", "what is my dog's name",
                                   "remember to call me", "你还记得不", "do you remember?", "你记得今天几号吗",
                                   "你还记得是多少不", "do you remember what it was?"])
def test_other_questions_do_not_ask_to_be_reminded(query: str) -> None:
    # Not about the user ("明天周几来着"), no subject to look for ("你还记得吗？": the conversation before it is
    # searched), a statement, or a plain question.
    assert not asks_to_be_reminded(query)


@pytest.mark.parametrize("query", ["我现在还游泳吗", "我家狗狗叫什么", "我老丈人今年多大岁数了",
                                   "我现在是跟人合租还是自己住", "我去没去过成都", "我细佬叫咩名",
                                   "我住的那棟是幾樓", "我们屋住的小区叫么子", "我爸开的啥车来着",
                                   "推荐个好看的综艺呗", "what's my sister's name", "Do I still play the violin",
                                   "any news about my apartment?", "remind me of my goal"])
def test_a_question_or_a_request_asks_something(query: str) -> None:
    assert asks_something(query)


@pytest.mark.parametrize("query", ["哈哈哈哈哈哈笑死我了", "我家狗狗好乖", "谢谢你一直听我絮叨", "我几乎每天都跑步",
                                   "我今天好累", "I'm so done with today lol", "my cat just knocked over my coffee"])
def test_a_statement_or_an_exclamation_asks_nothing(query: str) -> None:
    # First person, so "about the user" (asks_about_the_user), yet nothing stored answers an exclamation.
    assert not asks_something(query)


def test_memory_block_keeps_the_order_and_the_budget() -> None:
    memories = ["用户对海鲜过敏", "x" * 2000, "用户不吃香菜", "用户喜欢川菜"]
    block, used = memory_block(memories, budget_chars=60)
    assert block.startswith(MEMORY_HEADER + "\n- 用户对海鲜过敏\n- 用户不吃香菜")
    assert used[:2] == [0, 2] and 1 not in used
    assert len(block) <= 60
    assert memory_block([], 800) == ("", [])
    assert memory_block(["y" * 900], 800) == ("", [])


def test_injection_appends_to_the_first_system_message_and_never_mutates_the_input() -> None:
    messages = [{"role": "system", "content": "你是小林。"}, {"role": "user", "content": "晚饭推荐什么？"},
                {"role": "system", "content": "second"}]
    result = inject(messages, "Relevant long-term memory:\n- 用户对海鲜过敏")
    assert result[0]["content"] == "你是小林。\n\nRelevant long-term memory:\n- 用户对海鲜过敏"
    assert result[2]["content"] == "second"
    assert messages[0]["content"] == "你是小林。"  # the caller's list is untouched
    assert inject(messages, "") == messages


def test_injection_inserts_a_system_message_when_there_is_none_and_handles_content_parts() -> None:
    block = "Relevant long-term memory:\n- likes tea"
    assert inject([{"role": "user", "content": "hi"}], block) == [
        {"role": "system", "content": block}, {"role": "user", "content": "hi"}]
    parts = inject([{"role": "system", "content": [{"type": "text", "text": "Be kind."}]}], block)
    assert parts[0]["content"] == [{"type": "text", "text": "Be kind."}, {"type": "text", "text": block}]


def test_a_request_for_advice_names_what_it_is_for_or_only_asks() -> None:
    """What the advice rule's constraints in the lexicon's words need: something they could bear on."""
    for named in ["今晚想点个外卖，你帮我推荐推荐吃啥", "明天早饭吃点啥好 给点建议",
                  "What shall I make for lunch today?", "wanna do something active this weekend, any ideas?"]:
        assert asks_for_advice(named) and names_what_advice_is_for(named), named
    for bare in ["有啥办法没？", "你有什么建议吗", "any suggestions?", "怎么办啊"]:
        assert asks_for_advice(bare) and not names_what_advice_is_for(bare), bare


def test_fillers_of_chat_are_small_talk_words() -> None:
    assert [w for w in query_terms("nova ur goated fr pls tell me a joke yaar lah") if not greets(w)] == [
        "nova", "goat", "tell", "joke"]
    assert not greets("汤圆") and not greets("violin")
