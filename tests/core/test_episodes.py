"""Offline episode summaries: a stretch of chat becomes "[stamp] 聊了A、B" / "[stamp] Talked about A, B", naming the
events and entities the user brought up, not the words that happened to be frequent."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jiyi.core.episodes import summarize_offline
from jiyi.core.messages import ChatMessage

START = datetime(2026, 9, 25, 1, 11, tzinfo=UTC)
STAMP = re.compile(r"^\[\d{4}-\d{2}-\d{2} \d{2}:\d{2}\] (.+)$")
ZH_BOUND, EN_BOUND = 40, 80


def chat(*turns: str) -> list[ChatMessage]:
    """Alternating user / assistant turns, user first."""
    return [ChatMessage("user" if i % 2 == 0 else "assistant", text) for i, text in enumerate(turns)]


def body(summary: str) -> str:
    match = STAMP.match(summary)
    assert match, summary
    return match.group(1)


def check_bound(summary: str) -> str:
    text = body(summary)
    chinese = text.startswith("聊了") or text == "闲聊"
    assert len(text) <= (ZH_BOUND if chinese else EN_BOUND), summary
    return text


# --- stretches written for development (the code was tuned while looking at these) --------------------------

INTERVIEW_AND_HIKE_ZH = chat(
    "早上好呀",
    "早上好！今天感觉怎么样？",
    "还行吧，就是下周三有个面试，有点紧张",
    "面试前紧张很正常，是什么岗位的面试？",
    "产品经理，字节跳动的，已经是第二轮面试了",
    "第二轮说明第一轮表现不错，可以提前准备一下项目经历。",
    "嗯嗯，我打算把之前做的项目再梳理一遍",
    "好主意，面试官很喜欢问细节。",
    "哈哈好的，谢谢",
    "不客气！",
    "对了，周末我和小王约了去香山爬山",
    "听起来不错，这个季节香山的红叶应该很好看。",
    "是啊，上次爬山还是去年了",
    "记得带够水，注意安全。",
    "好的好的，晚安",
    "晚安！",
)

HOTEL_TRIP_ZH = chat(
    "我们到成都了！",
    "欢迎来到成都！酒店怎么样？",
    "房间还不错，楼下有一部电梯坏了，要走楼梯",
    "那有点麻烦，可以跟前台反映一下。",
    "嗯，已经说了。晚上打算去吃火锅",
    "成都的火锅很有名，可以试试九宫格。",
    "明天一早要去大熊猫基地",
    "大熊猫基地早上去最好，熊猫比较活跃。",
    "哈哈好的，我女儿特别想看熊猫宝宝",
    "她一定会很开心的！",
    "火锅太辣了，我们点了鸳鸯锅",
    "鸳鸯锅是个稳妥的选择。",
    "嗯嗯，挺好吃的",
    "太好了，祝你们玩得开心！",
)

MOTHER_SURGERY_ZH = chat(
    "在吗",
    "在的，怎么了？",
    "我妈妈住院了，医生说要做阑尾手术",
    "别太担心，阑尾手术是很常见的小手术。",
    "嗯，手术安排在周五上午",
    "术后注意饮食清淡，多休息。",
    "我请了三天假去医院陪护",
    "你真孝顺，自己也要注意休息。",
    "谢谢，就是有点累",
    "辛苦了，有什么需要随时说。",
    "手术很顺利，我妈妈已经醒了",
    "太好了！祝阿姨早日康复。",
)

GROUP_MOVIE_ZH = [
    ChatMessage("user", "阿明：大家好啊"),
    ChatMessage("assistant", "阿明好！"),
    ChatMessage("user", "阿明：昨晚去看了《流浪地球》，特效太震撼了"),
    ChatMessage("assistant", "《流浪地球》的特效确实是国产科幻的标杆。"),
    ChatMessage("user", "小美：我也想看！不过最近在纠结要不要换iPhone 16"),
    ChatMessage("assistant", "iPhone 16 主要升级了相机和芯片。"),
    ChatMessage("user", "阿明：iPhone 16 太贵了，我还是用着旧手机"),
    ChatMessage("assistant", "旧手机够用也挺好的。"),
    ChatMessage("user", "小美：哈哈，好吧"),
    ChatMessage("assistant", "哈哈"),
    ChatMessage("user", "阿明：下周末一起去看《流浪地球》第二遍吗"),
    ChatMessage("assistant", "听起来是个好计划！"),
]

INTERVIEW_AND_HIKE_EN = chat(
    "hey, good morning!",
    "Good morning! How are you doing today?",
    "I'm ok, just really nervous about my job interview at Google on Friday",
    "That's exciting! What role is the interview for?",
    "A product manager position. It's the final round of interviews",
    "Making it to the final round is great news. Have you prepared some stories?",
    "yeah I wrote down a few stories from my last job",
    "That's a good thing to do. Practice them out loud too.",
    "Thanks, that really helps lol",
    "Anytime!",
    "Also we're going hiking on Saturday at Mount Tam with my brother",
    "Nice, the weather should be good this weekend.",
    "Hiking always helps me relax after a stressful week",
    "Sounds like a good plan.",
    "ok bye!",
    "Bye, good luck!",
)

PUPPY_EN = chat(
    "Guess what, I just adopted a puppy!",
    "That's wonderful! What's the puppy's name?",
    "His name is Biscuit, he's a golden retriever",
    "Biscuit is such a cute name. How old is he?",
    "Ten weeks. Biscuit chewed my new shoes this morning haha",
    "Puppies love to chew. Chew toys can help.",
    "I ordered some chew toys yesterday",
    "Good idea.",
    "He has his first vet appointment on Tuesday",
    "The vet will check his vaccinations.",
    "Cool, thanks",
    "You're welcome! Enjoy Biscuit.",
)

GROUP_TRIP_EN = [
    ChatMessage("user", "Maya: hi everyone"),
    ChatMessage("assistant", "Hi Maya!"),
    ChatMessage("user", "Maya: so are we still doing the Lisbon trip in May?"),
    ChatMessage("assistant", "Lisbon in May sounds lovely."),
    ChatMessage("user", "Tom: yes! I found an Airbnb near Alfama for four nights"),
    ChatMessage("assistant", "Alfama is a great neighborhood for a first visit."),
    ChatMessage("user", "Maya: the flights from Berlin are pretty cheap right now"),
    ChatMessage("assistant", "It might be worth booking the flights soon."),
    ChatMessage("user", "Tom: lol ok, I'll book the Airbnb tonight"),
    ChatMessage("assistant", "Great, let me know if you need help planning the days."),
    ChatMessage("user", "Maya: awesome, thanks"),
    ChatMessage("assistant", "Have fun!"),
]

GUITAR_EN = chat(
    "hi",
    "Hi there! What's up?",
    "not much, I started learning guitar last month",
    "That's great! Acoustic or electric?",
    "Acoustic. My fingers really hurt from the strings",
    "That's normal at first; calluses will form in a few weeks.",
    "I'm trying to learn the F chord but it's so hard",
    "The F chord is a classic barrier. Try a partial barre first.",
    "ok I'll try that",
    "Also practice slowly with a metronome.",
    "haha sure. anyway how are you",
    "I'm doing well, thanks for asking!",
    "my guitar teacher says I should practice every day",
    "Your teacher is right, short daily practice works best.",
)

SMALL_TALK_ZH = chat("哈哈哈", "哈哈，怎么了？", "没事，就是有点无聊", "要不要聊聊天？", "好呀", "你今天过得怎么样？",
                     "还行吧，嗯嗯", "那就好。", "晚安", "晚安！")

SMALL_TALK_EN = chat("hey", "Hey! How's it going?", "good, you?", "I'm great, thanks!", "lol nice", "😊",
                     "ok I'm gonna go now", "Sure, talk later!", "bye", "Bye!")


@pytest.mark.parametrize(("messages", "salient", "filler"), [
    (INTERVIEW_AND_HIKE_ZH, ["面试", "爬山"], ["早上好", "不错", "晚安", "哈哈", "小王约"]),
    (HOTEL_TRIP_ZH, ["火锅", "熊猫"], ["不错", "楼下", "一部", "哈哈", "九宫格"]),
    (MOTHER_SURGERY_ZH, ["手术"], ["在吗", "有点", "三天", "谢谢"]),
    (GROUP_MOVIE_ZH, ["流浪地球", "iPhone 16"], ["阿明", "小美", "哈哈", "大家"]),
    (INTERVIEW_AND_HIKE_EN, ["interview", "hiking"], ["good", "really", "morning", "thing", "lol", "bye"]),
    (PUPPY_EN, ["Biscuit", "puppy"], ["name", "haha", "morning", "cool", "vaccinations"]),
    (GROUP_TRIP_EN, ["Lisbon", "Airbnb"], ["Maya", "Tom", "lol", "everyone", "neighborhood"]),
    (GUITAR_EN, ["guitar"], ["hi", "really", "hard", "metronome", "anyway"]),
], ids=["interview-zh", "hotel-zh", "surgery-zh", "group-movie-zh", "interview-en", "puppy-en", "group-trip-en",
        "guitar-en"])
def test_salient_topics_are_named_and_filler_is_not(messages: list[ChatMessage], salient: list[str],
                                                     filler: list[str]) -> None:
    summary = summarize_offline(messages, START)
    assert summary.startswith("[2026-09-25 01:11] "), summary
    text = check_bound(summary)
    chinese = text.startswith("聊了")
    assert chinese or text.startswith("Talked about "), summary
    for topic in salient:
        assert topic.lower() in text.lower(), (topic, summary)
    topics = re.split(r"[、,]\s*", text.removeprefix("聊了").removeprefix("Talked about "))
    for word in filler:  # whole topics for English ("hiking" contains "hi"), substrings for Chinese
        assert not any(word in t if chinese else word.lower() in t.lower().split() for t in topics), (word, summary)


@pytest.mark.parametrize(("messages", "expected"), [(SMALL_TALK_ZH, "闲聊"), (SMALL_TALK_EN, "Small talk")])
def test_small_talk_stays_small_talk(messages: list[ChatMessage], expected: str) -> None:
    assert summarize_offline(messages, START) == f"[2026-09-25 01:11] {expected}"


def test_what_only_the_assistant_said_is_not_a_topic() -> None:
    messages = chat("I can't sleep lately, my new job is stressful", "Maybe a trip to Paris would help you relax?",
                    "the job has so many meetings", "Paris is beautiful in spring, the Louvre is amazing.",
                    "maybe, I don't know", "The Louvre has free entry on some evenings.")
    summary = summarize_offline(messages, START)
    assert "job" in summary and "Paris" not in summary and "Louvre" not in summary, summary


def test_long_topics_are_cut_at_a_topic_boundary() -> None:
    messages = chat(*[f"我最近在研究{topic}，{topic}很有意思" for topic in
                      ["量子计算机体系结构", "深度强化学习算法", "分布式数据库系统", "古代汉语音韵学", "城市规划理论"]])
    text = check_bound(summarize_offline(messages, START))
    topics = text.removeprefix("聊了").split("、")
    joined = "".join(t for m in messages for t in [m.content])
    assert topics and all(t in joined for t in topics), text  # whole topics only, none cut short
    long_en = chat(*[f"I've been reading about {t} and {t} is fascinating" for t in
                     ["Byzantine Empire", "General Relativity", "Renaissance Florence", "Hanseatic League",
                      "Ottoman Architecture"]])
    text = check_bound(summarize_offline(long_en, START))
    assert all(t in " ".join(m.content for m in long_en) for t in text.removeprefix("Talked about ").split(", "))


def test_stamp_is_the_start_in_minutes() -> None:
    summary = summarize_offline(chat("我在准备考研"), datetime(2026, 1, 3, 18, 0, 59, tzinfo=UTC))
    assert summary.startswith("[2026-01-03 18:00] 聊了") and "考研" in summary, summary


# --- property: any input gives a bounded, non-empty summary --------------------------------------------------

messages_strategy = st.lists(st.builds(
    ChatMessage, st.sampled_from(["user", "assistant", "system", "tool"]),
    st.one_of(st.text(max_size=200), st.just(""), st.text("面试爬山哈好的 ，。:：ABC abc", max_size=60)),
    st.one_of(st.none(), st.text(max_size=10))), max_size=40)


@settings(max_examples=300, deadline=None)
@given(messages_strategy)
def test_any_input_gives_a_bounded_summary(messages: list[ChatMessage]) -> None:
    summary = summarize_offline(messages, START)
    assert body(summary).strip()
    check_bound(summary)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(max_size=300), max_size=30))
def test_only_assistant_messages_give_a_bounded_summary(texts: list[str]) -> None:
    summary = summarize_offline([ChatMessage("assistant", t) for t in texts], START)
    assert body(summary).strip()
    check_bound(summary)


# --- HELD-OUT: written before the implementation existed; never tuned against ------------------------------
# These stretches were written before summarize_offline was rewritten and before any output was seen; they only
# check the one obviously salient entity. If one fails, the failure is reported, not fitted.

HELD_OUT = [
    (chat(
        "早上好呀",
        "早上好！今天有什么安排吗？",
        "我刚拿到了杭州那边的offer，下个月要搬过去",
        "恭喜你！杭州是个好地方。",
        "哈哈谢谢，不过有点舍不得现在的同事",
        "可以理解，换城市总是不容易的。",
        "杭州的房租比我想的贵不少",
        "可以看看离公司稍远一点的小区。",
        "嗯嗯，我周末先去杭州看看房子",
        "好主意，祝你顺利。",
        "好的，那先这样，拜拜",
    ), "杭州"),
    (chat(
        "hey, how's it going",
        "Pretty good! What's new with you?",
        "I signed up for the Chicago marathon in October",
        "That's a big goal! Have you run one before?",
        "Nope, first time. My longest run so far is 10 miles",
        "That's a solid base. Are you following a training plan?",
        "yeah, a 16 week marathon plan from a running app",
        "Nice, consistency is key.",
        "my knees get sore after long runs though",
        "Maybe check your shoes and add some strength work.",
        "good idea, thanks!",
    ), "marathon"),
    ([
        ChatMessage("user", "小李：大家晚上好"),
        ChatMessage("assistant", "晚上好，小李！"),
        ChatMessage("user", "小李：我家新房终于开始装修了"),
        ChatMessage("assistant", "太好了，打算装成什么风格？"),
        ChatMessage("user", "小李：想弄北欧风，不过装修预算有点超了"),
        ChatMessage("assistant", "可以先把钱花在水电和厨房这些重要的地方。"),
        ChatMessage("user", "小李：对，厨房橱柜我看中了一套，挺贵的"),
        ChatMessage("assistant", "可以多比较几家。"),
        ChatMessage("user", "小李：嗯，哈哈，累死了"),
        ChatMessage("assistant", "辛苦了，早点休息。"),
    ], "装修"),
]


@pytest.mark.parametrize(("messages", "entity"), HELD_OUT, ids=["heldout-hangzhou-zh", "heldout-marathon-en",
                                                                  "heldout-renovation-zh"])
def test_heldout_stretch_names_its_salient_entity(messages: list[ChatMessage], entity: str) -> None:
    summary = summarize_offline(messages, START)
    check_bound(summary)
    assert entity.lower() in summary.lower(), summary
