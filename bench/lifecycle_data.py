"""Synthetic months of daily chat for the lifecycle benchmark (bench/lifecycle.py), with the ground truth to score it.

    /tmp/venv/bin/python bench/lifecycle_data.py --users 3 --days 14 --show 0     # print user 0's chats and truth
    /tmp/venv/bin/python bench/lifecycle_data.py --users 100 --days 180            # totals only
    /tmp/venv/bin/python bench/lifecycle_data.py --users 5 --days 30 --json /tmp/chats.json

Each user is generated from their own random stream (seed and index), so user k is the same whatever --users is,
and a run over fewer days (`histories(..., until=N)`) is a prefix of the longer one. About 60 % of users chat in
Chinese, the rest in English; each chats every day, in 1-3 sessions of 2-10 messages (each with a short, generic
assistant reply), at plausible hours.

What a user says (the sentences are written in the forms jiyi's offline rules parse, core/rules_zh.py and
rules_en.py: the benchmark is about the lifecycle, not extraction):

* planted stable facts, said once in the first week and repeated 0-3 times later, sometimes in other words: name,
  hometown, allergy, pet (species and name), sibling (relation and name);
* facts that change: the city they live in (moves once or twice), where they work (changes job once or twice), and
  for half of the users a diet (vegetarian, later not); the current value is sometimes repeated between changes;
* repeated habits, 1-2 per user, several times a week in varying words ("我今天又去买了咖啡", "I went for a run again
  today");
* passing states ("今天好累", "I'm a bit stressed out this week"), plans with time words, one-off events ("我中午
  吃了一碗拉面"), and chit-chat, which is most of it.

The ground truth: every statement of a planted fact (day, fact, value), and for each planted fact said by the end a
probe: a question in the user's language, the value true at the end (words a memory must contain, and words it must
not: "吃素" vs "不再吃素") and, for changed facts, the superseded values.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

START = datetime(2025, 1, 6, tzinfo=UTC)  # a Monday; day 0 of every history
ZH_SHARE = 0.6
MINUTES_PER_EXCHANGE = 2
SESSION_HOURS = ((7, 9), (11, 13), (15, 17), (19, 22))  # [from, to) hours a session may start in; UTC, by convention
SESSIONS_PER_DAY = ((1, 45), (2, 35), (3, 20))  # (count, weight)
USER_MESSAGES = (2, 10)  # per session, inclusive
STABLE_FACTS = ("name", "hometown", "allergy", "pet", "sibling")
CHANGING_FACTS = ("residence", "job", "diet")
FACTS = STABLE_FACTS + CHANGING_FACTS

# Per-day chances of the non-fact kinds of message (a habit: per habit).
HABIT_CHANCE = 0.5
STATE_CHANCE = 0.35
PLAN_CHANCE = 0.15
EVENT_CHANCE = 0.4


# --- the data --------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Exchange:
    """One user message and the assistant's reply: one `add` call."""

    user: str
    assistant: str
    kind: str  # "fact" (first statement), "repeat", "change", "habit", "state", "plan", "event", "chat"
    fact: str | None = None  # which planted fact the message states
    value: str | None = None  # the value it states (a key of the user's profile values)


@dataclass(frozen=True, slots=True)
class Session:
    user_id: str
    day: int
    start: datetime
    exchanges: tuple[Exchange, ...]

    def time_of(self, index: int) -> datetime:
        return self.start + timedelta(minutes=MINUTES_PER_EXCHANGE * index)


@dataclass(frozen=True, slots=True)
class Value:
    """How to recognise a value in a memory's text: all of `words`, none of `absent` (case-insensitive)."""

    key: str
    words: tuple[str, ...]
    absent: tuple[str, ...] = ()

    def matches(self, text: str) -> bool:
        lower = text.lower()
        return all(w.lower() in lower for w in self.words) and not any(a.lower() in lower for a in self.absent)


@dataclass(frozen=True, slots=True)
class Statement:
    day: int
    fact: str
    value: str  # Value.key


@dataclass(frozen=True, slots=True)
class Probe:
    user_id: str
    lang: str
    fact: str
    query: str
    value: Value  # true at the end
    old: tuple[Value, ...]  # superseded values, oldest first (changed facts only)
    times_said: int
    last_said_day: int

    @property
    def changed(self) -> bool:
        return bool(self.old)


@dataclass(frozen=True, slots=True)
class History:
    user_id: str
    lang: str
    sessions: tuple[Session, ...]
    statements: tuple[Statement, ...]  # every statement of a planted fact, in the order said
    probes: tuple[Probe, ...]
    habits: tuple[str, ...]

    @property
    def exchanges(self) -> int:
        return sum(len(s.exchanges) for s in self.sessions)


# --- what users say, per language ------------------------------------------------------------------------------------

# In a template, {a|b|c} is one of the alternatives and {@pool} one of the language's pool words (innermost first);
# {v}, {s}, {r}, {p} are a planted fact's value, the pet's species, the sibling's relation and pronoun.
_ALTERNATIVES = re.compile(r"\{([^{}]*[|@][^{}]*)\}")


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


@dataclass(frozen=True)
class Language:
    code: str
    names: tuple[str, ...]
    hometowns: tuple[str, ...]
    cities: tuple[str, ...]  # where users live; never a hometown or a travel destination
    companies: tuple[str, ...]
    allergens: tuple[str, ...]  # never in a food of the `pools`
    allergy_word: str  # a memory of the allergy says it: 过敏 / allergic
    pets: tuple[tuple[str, str], ...]  # (species as said, species in a probe)
    pet_names: tuple[str, ...]
    siblings: tuple[tuple[str, str, tuple[str, ...]], ...]  # (relation, pronoun, names)
    # "<fact>": first statement, "<fact>:repeat", "<fact>:change"; "<fact>:<kind>:<value>" for one value only
    said: dict[str, tuple[str, ...]]
    queries: dict[str, str]
    diet_values: dict[str, Value]
    pools: dict[str, tuple[str, ...]]  # words for one-off events, plans and habits
    habits: dict[str, tuple[str, ...]]
    states: tuple[str, ...]
    plans: tuple[str, ...]
    events: tuple[str, ...]
    chat: tuple[str, ...]
    openers: tuple[str, ...]
    closers: tuple[str, ...]
    replies: tuple[str, ...]

    def expand(self, rng: random.Random, template: str) -> str:
        def pick(m: re.Match[str]) -> str:
            body = m.group(1)
            return rng.choice(self.pools[body[1:]]) if body.startswith("@") else rng.choice(body.split("|"))

        while True:
            expanded = _ALTERNATIVES.sub(pick, template)
            if expanded == template:
                return expanded
            template = expanded


ZH = Language(
    code="zh",
    names=_words("林晓 王磊 陈静 张伟 刘洋 赵敏 黄婷 周杰 吴倩 孙浩 郑爽 何琳 马超 高远 罗佳 谢雯 韩冰 唐宁 冯悦 曹阳"),
    hometowns=_words("成都 重庆 长沙 武汉 哈尔滨 昆明 南昌 合肥 兰州 太原 福州 贵阳"),
    cities=_words("北京 上海 深圳 杭州 广州 南京 苏州 天津 青岛 厦门 宁波 无锡"),
    companies=_words("腾讯 阿里巴巴 字节跳动 美团 京东 网易 百度 华为 小米 拼多多 快手 滴滴 携程 蔚来"),
    allergens=_words("花生 海鲜 芒果 牛奶 花粉 虾 鸡蛋 青霉素 坚果 桃子"),
    allergy_word="过敏",
    pets=(("猫", "猫"), ("狗", "狗"), ("兔子", "兔子"), ("仓鼠", "仓鼠")),
    pet_names=_words("团子 豆豆 年糕 布丁 芝麻 汤圆 旺财 雪球 橘子 馒头 花卷 球球"),
    siblings=(("妹妹", "她", _words("小雨 小雪 晓彤 佳怡 思琪")), ("姐姐", "她", _words("小雨 小雪 晓彤 佳怡 思琪")),
              ("哥哥", "他", _words("阿杰 小峰 浩然 思远 俊熙")), ("弟弟", "他", _words("阿杰 小峰 浩然 思远 俊熙"))),
    said={
        "name": ("我叫{v}。", "跟你说，我叫{v}。"),
        "name:repeat": ("我叫{v}，别忘了哦。", "记住哦，我叫{v}。"),
        "hometown": ("我老家是{v}的。", "我来自{v}。"),
        "hometown:repeat": ("我老家在{v}，好久没回去了。", "我来自{v}，那边的菜特别好吃。"),
        "allergy": ("我对{v}过敏。", "提醒一下，我对{v}过敏。"),
        "allergy:repeat": ("我对{v}过敏，吃了会起疹子。", "对了，我对{v}过敏的。"),
        "pet": ("我养了一只{s}叫{v}。",),
        "pet:repeat": ("我的{s}叫{v}，特别可爱。", "我家{s}叫{v}，今天特别乖。"),
        "sibling": ("我{r}叫{v}。", "我有个{r}，叫{v}。"),
        "sibling:repeat": ("我{r}叫{v}，{p}最近挺忙的。", "我{r}叫{v}，下周来找我玩。"),
        "residence": ("我住在{v}。", "我现在住在{v}。"),
        "residence:repeat": ("我现在住在{v}。", "我住在{v}，这边冬天挺冷的。"),
        "residence:change": ("我搬到了{v}。", "我上个月搬到{v}了。", "跟你说，我刚搬到{v}。"),
        "job": ("我在{v}工作。", "我在{v}上班。"),
        "job:repeat": ("我现在在{v}上班。", "我在{v}工作，最近挺忙的。"),
        "job:change": ("我跳槽到{v}了。", "我入职{v}了。", "我换到{v}工作了。"),
        "diet": ("我吃素。", "我是素食者。"),
        "diet:repeat": ("我一直吃素。", "我平时吃素。"),
        "diet:change": ("我不再吃素了。", "我现在不吃素了。"),
        "diet:repeat:not_vegetarian": ("我已经不吃素了。", "我现在不吃素了。"),
    },
    queries={
        "name": "我叫什么名字？",
        "hometown": "我老家是哪里的？",
        "allergy": "我对什么过敏？",
        "pet": "我的{s}叫什么名字？",
        "sibling": "我{r}叫什么？",
        "residence": "我现在住在哪个城市？",
        "job": "我现在在哪家公司上班？",
        "diet": "我现在还吃素吗？",
    },
    diet_values={
        "vegetarian": Value("vegetarian", ("吃素",), ("不再", "不吃素")),
        "not_vegetarian": Value("not_vegetarian", ("不再吃素",)),
    },
    pools={
        "past": _words("昨天 中午 周末 昨晚 上午 下午 前天"),
        "future": _words("下周 周末 明天 下个月 月底 后天"),
        "movie": _words("流浪地球 让子弹飞 千与千寻 星际穿越 盗梦空间 哪吒 疯狂动物城 寻梦环游记 阿甘正传 霸王别姬"),
        "food": _words("一碗拉面 麻辣烫 火锅 烤鸭 饺子 螺蛳粉 寿司 煎饼果子 酸菜鱼 烤串 黄焖鸡 牛肉面"),
        "place": _words("宜家 商场 公园 书店 博物馆 花鸟市场 电影院 图书馆 美术馆"),
        "item": _words("一双运动鞋 一本小说 新耳机 一盆绿萝 一件外套 一个保温杯 一盏台灯 一把雨伞"),
        "dest": _words("三亚 大理 西安 桂林 丽江 张家界 拉萨 敦煌"),
        "errand": _words("看牙医 体检 参加婚礼 面试 听演唱会 考驾照 见客户"),
    },
    habits={
        "coffee": ("我{今天|早上|下午}又{去楼下|去星巴克|去瑞幸|在公司楼下}买了{一杯|两杯}{拿铁|美式|咖啡}。",
                   "我今天又喝了{两|三}杯咖啡。"),
        "run": ("我{今天|早上|晚上}又去{公园|江边|操场|小区}跑了{三|五|八}公里。", "我今天又去跑步了。"),
        "games": ("我{昨晚|今天|晚上}又{打游戏|玩王者荣耀|玩原神}{打到很晚|玩了两个小时|玩了一下午}。",),
        "milk_tea": ("我{今天|下午|晚上}又{点了|喝了|买了}一杯{奶茶|珍珠奶茶|杨枝甘露}。",),
        "gym": ("我{今天|晚上|下班后}又去健身房{练了一个小时|练腿了|练背了|撸铁了}。",),
    },
    states=("今天好累。", "我最近{压力好大|有点焦虑|很郁闷|特别忙|有点孤独|心情不好}。",
            "我今天{好累啊|特别开心|有点烦}。", "好无聊啊。", "今天心情不错。"),
    plans=("{@future}我要去{@dest}{出差|旅游|度假}。", "{@future}我打算去{@errand}。",
           "我{@future}准备去{@errand}。"),
    events=("我{@past}看了{@movie}。", "我{@past}吃了{@food}。", "我{@past}去{@place}逛了逛。",
            "我{@past}买了{@item}。", "我{@past}和朋友去吃了{@food}。"),
    chat=("今天天气真不错。", "晚上吃什么好呢？", "最近有什么好看的电影吗？", "哈哈，太好笑了。", "周末过得好快。",
          "刚下班，路上好堵。", "这首歌真好听。", "猫和狗哪个更可爱？", "给我讲个笑话吧。", "外面在下雨。",
          "地铁上人好多。", "好的，谢谢你。", "嗯嗯。", "明白了。", "你平时喜欢聊什么？", "有什么推荐的书吗？",
          "今天好热啊。", "周五终于到了。", "你觉得早睡早起难吗？", "帮我想个周末去哪玩。", "哈哈哈哈。", "好吧。",
          "午饭随便吃了点。", "这个问题有点难。", "说得有道理。"),
    openers=("在吗？", "嗨～", "我回来啦。", "又来找你聊天啦。", "哈喽。"),
    closers=("晚安。", "好的，拜拜。", "先不聊了，回头见。", "我去忙了。"),
    replies=("嗯嗯，明白啦。", "听起来不错！", "记下了～", "辛苦啦，早点休息。", "哈哈，真有意思。", "好的！",
             "原来如此。", "加油呀！", "要照顾好自己哦。", "真不错呀。"),
)

EN = Language(
    code="en",
    names=("Ethan", "Olivia", "Mason", "Ava", "Lucas", "Chloe", "Owen", "Grace", "Caleb", "Hazel", "Julian", "Violet",
           "Miles", "Ruby", "Felix", "Iris", "Theo", "Stella", "Jasper", "Naomi"),
    hometowns=("Leeds", "Cork", "Adelaide", "Halifax", "Bristol", "Galway", "Perth", "Aberdeen", "Nottingham",
               "Wellington", "Hobart", "Plymouth"),
    cities=("Boston", "Denver", "Seattle", "Austin", "Chicago", "Portland", "Toronto", "Atlanta", "Phoenix",
            "Vancouver", "Minneapolis", "Nashville"),
    companies=("Google", "Stripe", "Shopify", "Spotify", "Airbnb", "Netflix", "Dropbox", "Atlassian", "Pinterest",
               "Salesforce", "Adobe", "Intel", "Oracle", "Canva"),
    allergens=("peanuts", "shellfish", "penicillin", "pollen", "strawberries", "eggs", "walnuts", "soy", "kiwi",
               "sesame"),
    allergy_word="allergic",
    pets=(("cat", "cat"), ("dog", "dog"), ("rabbit", "rabbit"), ("parrot", "parrot")),
    pet_names=("Mochi", "Biscuit", "Pepper", "Luna", "Waffles", "Ziggy", "Noodle", "Pickles", "Maple", "Oreo",
               "Bubbles", "Tofu"),
    siblings=(("sister", "she", ("Clara", "Nora", "Elise", "Maya", "Lena")),
              ("brother", "he", ("Leo", "Max", "Henry", "Oscar", "Simon"))),
    said={
        "name": ("My name is {v}.", "By the way, call me {v}."),
        "name:repeat": ("Remember, my name is {v}.", "Just call me {v}."),
        "hometown": ("I'm originally from {v}.", "I grew up in {v}."),
        "hometown:repeat": ("I grew up in {v}, I miss it sometimes.",
                            "I'm originally from {v}, the food there is great."),
        "allergy": ("I'm allergic to {v}.", "Just so you know, I'm allergic to {v}."),
        "allergy:repeat": ("Don't forget I'm allergic to {v}.", "I'm really allergic to {v}, so I have to be careful."),
        "pet": ("I have a {s} named {v}.",),
        "pet:repeat": ("My {s} {v} is sleeping on the couch.", "My {s} {v} is being super cute today."),
        "sibling": ("My {r}'s name is {v}.", "I have a {r} named {v}."),
        "sibling:repeat": ("My {r} {v} is visiting this weekend.", "My {r} {v} just called me."),
        "residence": ("I live in {v}.", "I currently live in {v}."),
        "residence:repeat": ("I live in {v} now.", "I still live in {v}."),
        "residence:change": ("I moved to {v}.", "We just moved to {v} last month.", "I've moved to {v}."),
        "job": ("I work at {v}.", "I currently work at {v}."),
        "job:repeat": ("I still work at {v}.", "I work at {v}, it's been busy."),
        "job:change": ("I just started a new job at {v}.", "I got a new job at {v}.",
                       "I've accepted a position at {v}."),
        "diet": ("I'm vegetarian.", "I am a vegetarian."),
        "diet:repeat": ("I'm vegetarian, so no meat for me.", "I'm strictly vegetarian."),
        "diet:change": ("I'm not vegetarian anymore.", "I'm no longer vegetarian."),
        "diet:repeat:not_vegetarian": ("I'm no longer vegetarian, remember.", "I'm not vegetarian anymore."),
    },
    queries={
        "name": "What's my name?",
        "hometown": "Where am I originally from?",
        "allergy": "What am I allergic to?",
        "pet": "What's my {s}'s name?",
        "sibling": "What's my {r}'s name?",
        "residence": "Which city do I live in now?",
        "job": "Where do I work now?",
        "diet": "Am I still vegetarian?",
    },
    diet_values={
        "vegetarian": Value("vegetarian", ("vegetarian",), ("no longer", "not vegetarian", "anymore")),
        "not_vegetarian": Value("not_vegetarian", ("no longer vegetarian",)),
    },
    pools={
        "past": ("yesterday", "last night", "on Saturday", "on Sunday", "this morning", "this afternoon"),
        "future": ("next week", "this weekend", "tomorrow", "next month"),
        "movie": ("Inception", "Interstellar", "Spirited Away", "Parasite", "Dune", "Arrival", "Coco", "Whiplash",
                  "Amelie", "Up"),
        "food": ("ramen", "tacos", "a burrito", "sushi", "pho", "a pizza", "dumplings", "curry", "a poke bowl",
                 "fried chicken"),
        "place": ("IKEA", "the mall", "the park", "a bookstore", "the museum", "the farmers market", "the cinema",
                  "the library"),
        "item": ("new running shoes", "a novel", "new headphones", "a houseplant", "a winter jacket", "a water bottle",
                 "a desk lamp", "an umbrella"),
        "dest": ("Paris", "Tokyo", "Rome", "Lisbon", "Prague", "Kyoto", "Vienna", "Reykjavik"),
        "errand": ("a dentist appointment", "a job interview", "a wedding to go to", "concert tickets",
                   "a doctor's appointment", "a big presentation"),
    },
    habits={
        "coffee": ("I {bought|grabbed|got} {a latte|an americano|a flat white|a cappuccino} {again this morning|"
                   "again after lunch|on the way to work again}.",),
        "run": ("I {went for a run|ran {3|5|8}k} "
                "{again today|again this morning|again after work|by the river again}.",),
        "games": ("I played {video games|Zelda|Minecraft} "
                  "{until midnight again|for two hours again|all evening again}.",),
        "milk_tea": ("I {ordered|got|grabbed} {a bubble tea|a taro milk tea|a brown sugar boba} again "
                     "{today|this afternoon|after work}.",),
        "gym": ("I {went to|hit} the gym again {tonight|after work|this morning}{| and did legs| and did back}.",),
    },
    states=("I'm {so tired|really happy|a bit stressed out|kind of anxious|bored|exhausted} "
            "{today|this week|right now}.", "Feeling kind of low today.", "What a long day."),
    plans=("I'm flying to {@dest} {@future}.", "I'm planning to visit {@dest} {@future}.",
           "I have {@errand} {@future}."),
    events=("I watched {@movie} {@past}.", "I had {@food} for {lunch|dinner}.", "I went to {@place} {@past}.",
            "I bought {@item} {@past}.", "I tried {@food} at a new place {@past}."),
    chat=("What a nice day today.", "Any good movies lately?", "Haha, that's funny.", "The weekend went by so fast.",
          "Traffic was terrible on the way home.", "This song is great.", "Cats or dogs, which are cuter?",
          "Tell me a joke.", "It's raining outside.", "The subway was packed.", "Thanks!", "Okay.", "Got it.",
          "What do you like to talk about?", "Any book recommendations?", "It's so hot today.",
          "Finally Friday.", "Is it hard to wake up early?", "Give me an idea for the weekend.", "Lol.",
          "Fair enough.", "Lunch was nothing special.", "That's a tough question.", "Good point."),
    openers=("Hey, you there?", "Hi!", "I'm back.", "Hello again.", "Hey."),
    closers=("Okay, bye for now.", "Gotta run, talk later.", "Talk to you later."),
    replies=("Got it!", "That sounds nice.", "Haha, love that.", "Take care!", "Noted.", "Oh, interesting!",
             "Good luck!", "Sounds like a plan.", "Hope you get some rest.", "Nice!"),
)

LANGUAGES = {"zh": ZH, "en": EN}


# --- one user ----------------------------------------------------------------------------------------------------


@dataclass
class _Profile:
    lang: Language
    name: str
    hometown: str
    allergy: str
    pet: tuple[str, str]  # (species as said, species in a probe)
    pet_name: str
    sibling: tuple[str, str]  # (relation, pronoun)
    sibling_name: str
    residences: list[str]
    jobs: list[str]
    diet: list[str]  # [] (never said), or ["vegetarian", "not_vegetarian"]
    habits: list[str]

    def values(self, fact: str) -> list[str]:
        """The values a fact takes, in order (one for a stable fact)."""
        return {
            "name": [self.name], "hometown": [self.hometown], "allergy": [self.allergy], "pet": [self.pet_name],
            "sibling": [self.sibling_name], "residence": self.residences, "job": self.jobs, "diet": self.diet,
        }[fact]

    def value(self, fact: str, key: str) -> Value:
        if fact == "diet":
            return self.lang.diet_values[key]
        if fact == "allergy":
            return Value(key, (key, self.lang.allergy_word))
        return Value(key, (key,))

    def fill(self, template: str, value: str) -> str:
        return template.format(v=value, s=self.pet[0], r=self.sibling[0], p=self.sibling[1])

    def query(self, fact: str) -> str:
        return self.lang.queries[fact].format(s=self.pet[1], r=self.sibling[0])


def _profile(rng: random.Random, lang: Language) -> _Profile:
    residences = rng.sample(lang.cities, rng.choice((2, 2, 3)))  # moves once or twice
    jobs = rng.sample(lang.companies, rng.choice((2, 2, 3)))
    relation, pronoun, sibling_names = rng.choice(lang.siblings)
    return _Profile(
        lang=lang,
        name=rng.choice(lang.names),
        hometown=rng.choice(lang.hometowns),
        allergy=rng.choice(lang.allergens),
        pet=rng.choice(lang.pets),
        pet_name=rng.choice(lang.pet_names),
        sibling=(relation, pronoun),
        sibling_name=rng.choice(sibling_names),
        residences=residences,
        jobs=jobs,
        diet=["vegetarian", "not_vegetarian"] if rng.random() < 0.5 else [],
        habits=rng.sample(sorted(lang.habits), rng.choice((1, 2))),
    )


def _schedule(rng: random.Random, profile: _Profile, days: int) -> list[tuple[int, Exchange]]:
    """When each planted fact is said, and how: (day, exchange)."""
    lang = profile.lang
    planned: list[tuple[int, Exchange]] = []

    def say(day: int, fact: str, value: str, kind: str) -> None:
        variant = fact if kind == "fact" else f"{fact}:{kind}"
        text = profile.fill(rng.choice(lang.said.get(f"{variant}:{value}") or lang.said[variant]), value)
        planned.append((day, Exchange(text, rng.choice(lang.replies), kind, fact, value)))

    first_week = max(1, min(7, days))
    for fact in STABLE_FACTS:
        (value,) = profile.values(fact)
        said_on = rng.randrange(first_week)
        say(said_on, fact, value, "fact")
        later = range(said_on + 7, days)
        for day in sorted(rng.sample(later, min(len(later), rng.choice((0, 1, 1, 2, 3))))):
            say(day, fact, value, "repeat")

    for fact in CHANGING_FACTS:
        values = profile.values(fact)
        if not values:
            continue
        first = rng.randrange(max(1, min(14, days // 4)))
        change_days = _change_days(rng, first, len(values) - 1, days)
        # Changes that do not fit in a short history are dropped: the truth is what was said.
        starts = [first, *change_days]
        for i, (day, value) in enumerate(zip(starts, values, strict=False)):
            say(day, fact, value, "fact" if i == 0 else "change")
            until = starts[i + 1] if i + 1 < len(starts) else days
            between = range(day + 3, until)
            for repeat_day in sorted(rng.sample(between, min(len(between), rng.choice((0, 1, 1, 2))))):
                say(repeat_day, fact, value, "repeat")
    return planned


def _change_days(rng: random.Random, first: int, changes: int, days: int) -> list[int]:
    """Days of `changes` changes after `first`: the first in the middle of the history, a second later."""
    out: list[int] = []
    low, high = max(first + 1, int(days * 0.25)), max(first + 1, int(days * 0.6))
    for _ in range(changes):
        if low >= days:
            break
        day = rng.randint(low, min(high, days - 1))
        out.append(day)
        low, high = day + max(1, days // 12), max(day + max(1, days // 12), int(days * 0.9))
    return out


def _day_sessions(rng: random.Random, user_id: str, profile: _Profile, day: int,
                  planted: list[Exchange]) -> list[Session]:
    lang = profile.lang
    count = rng.choices([c for c, _ in SESSIONS_PER_DAY], [w for _, w in SESSIONS_PER_DAY])[0]
    slots = sorted(rng.sample(range(len(SESSION_HOURS)), count))
    others: list[Exchange] = []

    def line(kind: str, templates: Sequence[str]) -> Exchange:
        return Exchange(lang.expand(rng, rng.choice(templates)), rng.choice(lang.replies), kind)

    for habit in profile.habits:
        if rng.random() < HABIT_CHANCE:
            others.append(line("habit", lang.habits[habit]))
    if rng.random() < STATE_CHANCE:
        others.append(line("state", lang.states))
    if rng.random() < PLAN_CHANCE:
        others.append(line("plan", lang.plans))
    if rng.random() < EVENT_CHANCE:
        others.append(line("event", lang.events))
    topical = planted + others
    rng.shuffle(topical)
    # Split the day's topical messages over its sessions; each session is filled up with chit-chat.
    share = [topical[i::count] for i in range(count)]
    sessions = []
    for slot, mine in zip(slots, share, strict=True):
        chats = max(rng.randint(*USER_MESSAGES) - len(mine), 0)
        head = [line("chat", lang.openers)] if chats and rng.random() < 0.6 else []
        tail = [line("chat", lang.closers)] if chats > len(head) and rng.random() < 0.4 else []
        middle = list(mine) + [line("chat", lang.chat) for _ in range(chats - len(head) - len(tail))]
        rng.shuffle(middle)
        exchanges = head + middle + tail
        first_hour, last_hour = SESSION_HOURS[slot]
        start = START + timedelta(days=day, hours=rng.randrange(first_hour, last_hour), minutes=rng.randrange(60))
        sessions.append(Session(user_id, day, start, tuple(exchanges)))
    return sessions


def user_history(index: int, days: int, seed: int = 0, *, until: int | None = None,
                 zh_share: float = ZH_SHARE) -> History:
    """User `index`'s `days` days of chat; with `until`, only the first `until` days of it (same sessions), and the
    truth as it stands at the end of day `until` - 1."""
    rng = random.Random(f"jiyi-lifecycle:{seed}:{index}")
    lang = ZH if rng.random() < zh_share else EN
    user_id = f"{lang.code}-{index:04d}"
    profile = _profile(rng, lang)
    by_day: dict[int, list[Exchange]] = {}
    for day, exchange in _schedule(rng, profile, days):
        by_day.setdefault(day, []).append(exchange)
    until = days if until is None else min(until, days)
    sessions: list[Session] = []
    for day in range(days):
        day_sessions = _day_sessions(rng, user_id, profile, day, by_day.get(day, []))
        if day < until:
            sessions.extend(day_sessions)
    statements = [Statement(s.day, e.fact, e.value) for s in sessions for e in s.exchanges
                  if e.fact is not None and e.value is not None]
    return History(user_id, lang.code, tuple(sessions), tuple(statements), _probes(user_id, profile, statements),
                   tuple(profile.habits))


def _probes(user_id: str, profile: _Profile, statements: Sequence[Statement]) -> tuple[Probe, ...]:
    probes = []
    for fact in FACTS:
        said = [s for s in statements if s.fact == fact]
        if not said:
            continue
        final = said[-1].value
        old: list[str] = []
        for s in said:
            if s.value != final and s.value not in old:
                old.append(s.value)
        probes.append(Probe(user_id, profile.lang.code, fact, profile.query(fact), profile.value(fact, final),
                            tuple(profile.value(fact, v) for v in old), len(said), said[-1].day))
    return tuple(probes)


def histories(users: int, days: int, seed: int = 0, *, until: int | None = None,
              zh_share: float = ZH_SHARE) -> list[History]:
    return [user_history(i, days, seed, until=until, zh_share=zh_share) for i in range(users)]


def day_plan(all_histories: Sequence[History], day: int) -> list[Session]:
    """Every user's sessions of one day, in time order (ties by user)."""
    return sorted((s for h in all_histories for s in h.sessions if s.day == day), key=lambda s: (s.start, s.user_id))


def totals(all_histories: Sequence[History]) -> dict[str, Any]:
    kinds: Counter[str] = Counter()
    user_bytes = assistant_bytes = sessions = 0
    for h in all_histories:
        sessions += len(h.sessions)
        for s in h.sessions:
            for e in s.exchanges:
                kinds[e.kind] += 1
                user_bytes += len(e.user.encode())
                assistant_bytes += len(e.assistant.encode())
    probes = [p for h in all_histories for p in h.probes]
    return {
        "users": len(all_histories),
        "languages": dict(Counter(h.lang for h in all_histories)),
        "sessions": sessions,
        "exchanges": sum(kinds.values()),
        "messages": 2 * sum(kinds.values()),
        "exchanges_by_kind": dict(kinds.most_common()),
        "user_message_bytes": user_bytes,
        "assistant_message_bytes": assistant_bytes,
        "planted_facts": len(probes),
        "planted_changed_facts": sum(p.changed for p in probes),
    }


# --- command line ------------------------------------------------------------------------------------------------


def _show(history: History) -> None:
    print(f"# {history.user_id} ({history.lang}), habits {', '.join(history.habits)}")
    for session in history.sessions:
        print(f"\n## day {session.day}, {session.start:%Y-%m-%d %H:%M}")
        for e in session.exchanges:
            mark = f"  [{e.kind}{': ' + e.fact if e.fact else ''}]" if e.kind != "chat" else ""
            print(f"user: {e.user}{mark}\nassistant: {e.assistant}")
    print("\n## truth at the end")
    for p in history.probes:
        old = f"; was {', '.join(v.key for v in p.old)}" if p.old else ""
        print(f"{p.fact}: {p.query} -> {p.value.key} (said {p.times_said}x, last on day {p.last_said_day}{old})")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--users", type=int, default=100)
    parser.add_argument("--days", type=int, default=180)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--show", type=int, metavar="INDEX", help="print this user's chats and truth")
    parser.add_argument("--json", help="write every history to this file")
    args = parser.parse_args(argv)
    generated = histories(args.users, args.days, args.seed)
    if args.show is not None:
        _show(generated[args.show])
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump([asdict(h) for h in generated], f, ensure_ascii=False, indent=1, default=str)
    print(json.dumps(totals(generated), ensure_ascii=False, indent=2), file=sys.stderr)


if __name__ == "__main__":
    main()
