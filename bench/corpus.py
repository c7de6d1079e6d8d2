"""Deterministic synthetic memories and queries for jiyi's benchmarks: what a companion-chat user tells an assistant.

Memories are facts, preferences, events, plans and moods, half Chinese and half English, made from templates and
vocabulary lists (names, relations, cities, foods, dates, numbers, ...). The stream is seeded and prefix-stable:
`memories(n, seed)[:k] == memories(k, seed)`, so vectors cached for the first k texts stay valid for a larger corpus.
Queries are questions and short keyword queries in both languages, drawn from the same vocabulary.

    python bench/corpus.py            # print a sample
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator
from typing import Any

CORPUS_VERSION = 1  # bump whenever templates or vocabulary change: cached vectors are keyed by it

Filler = list[str] | Callable[[random.Random], str]

# --- Chinese vocabulary -----------------------------------------------------------------------------------------------

ZH: dict[str, Filler] = {
    "rel": ["妹妹", "哥哥", "姐姐", "弟弟", "表姐", "堂弟", "同事", "室友", "闺蜜", "大学同学", "高中同学", "邻居",
            "女朋友", "男朋友", "老板", "领导", "发小", "舅舅", "小姨", "师兄", "学姐", "健身教练", "网友", "前同事"],
    "name": ["小雨", "阿杰", "林晓", "周航", "王磊", "佳佳", "婷婷", "刘洋", "陈静", "张伟", "李娜", "赵敏", "孙浩",
             "小米", "乐乐", "明明", "思思", "子轩", "欣怡", "浩然", "雨桐", "一鸣", "晓峰", "梦瑶", "俊杰", "可欣",
             "志强", "丽丽", "大鹏", "诗涵", "文博", "小雪", "嘉怡", "天宇", "晨曦", "若曦"],
    "family": ["妈妈", "爸爸", "外婆", "奶奶", "爷爷", "外公", "老公", "老婆", "儿子", "女儿", "姑姑", "叔叔"],
    "city": ["北京", "上海", "广州", "深圳", "杭州", "成都", "重庆", "西安", "南京", "武汉", "长沙", "厦门", "青岛",
             "大理", "昆明", "苏州", "天津", "哈尔滨", "三亚", "桂林", "拉萨", "香港", "台北", "东京", "大阪", "首尔",
             "曼谷", "新加坡", "巴黎", "伦敦", "纽约", "悉尼", "清迈", "乌鲁木齐", "洛阳", "丽江", "珠海", "宁波"],
    "food": ["火锅", "麻辣烫", "小龙虾", "烤鸭", "饺子", "螺蛳粉", "寿司", "拉面", "牛肉面", "煎饼果子", "肠粉",
             "生煎包", "酸菜鱼", "红烧肉", "宫保鸡丁", "麻婆豆腐", "榴莲", "芒果", "冰淇淋", "披萨", "汉堡", "烧烤",
             "糖醋排骨", "番茄炒蛋", "热干面", "肉夹馍", "羊肉串", "臭豆腐", "酸辣粉", "小笼包", "叉烧", "凉皮",
             "黄焖鸡", "韩式炸鸡", "泰式咖喱", "牛排", "鳗鱼饭", "馄饨", "粽子", "月饼"],
    "drink": ["美式咖啡", "拿铁", "绿茶", "普洱", "豆浆", "奶茶", "柠檬水", "燕麦奶", "乌龙茶", "热牛奶", "椰子水"],
    "taste": ["辣", "甜", "咸", "油", "腻", "酸", "淡"],
    "allergen": ["花生", "海鲜", "虾", "芒果", "牛奶", "鸡蛋", "花粉", "猫毛", "青霉素", "坚果", "尘螨", "酒精"],
    "hobby": ["跑步", "游泳", "弹吉他", "画画", "打羽毛球", "爬山", "练瑜伽", "拍照", "看书", "打游戏", "下围棋",
              "钓鱼", "做饭", "烘焙", "骑车", "滑雪", "写书法", "跳舞", "追剧", "养花", "打篮球", "练拳击", "拼乐高"],
    "skill": ["日语", "韩语", "法语", "钢琴", "尤克里里", "Python", "剪辑视频", "游泳", "开车", "摄影", "插花",
              "咖啡拉花", "素描", "街舞", "理财", "西班牙语"],
    "pettype": ["橘猫", "布偶猫", "英短", "柯基", "金毛", "柴犬", "泰迪", "仓鼠", "鹦鹉", "兔子", "乌龟", "边牧"],
    "petname": ["豆包", "旺财", "咪咪", "年糕", "可乐", "芝麻", "球球", "元宝", "布丁", "馒头", "雪球", "汤圆",
                "花卷", "奥利奥", "大黄", "七七"],
    "job": ["程序员", "护士", "老师", "设计师", "会计", "医生", "律师", "产品经理", "销售", "厨师", "记者", "摄影师",
            "公务员", "健身教练", "建筑师", "翻译", "HR", "运营", "客服", "外卖骑手", "研究生", "咖啡师"],
    "company": ["一家互联网公司", "银行", "医院", "小学", "外企", "设计工作室", "律所", "国企", "创业公司",
                "出版社", "游戏公司", "咨询公司", "物流公司"],
    "place": ["健身房", "图书馆", "公园", "游泳馆", "咖啡馆", "商场", "体育馆", "社区中心", "江边", "学校操场"],
    "when": ["上周", "昨天", "前天", "上个月", "去年", "前年", "春节期间", "国庆假期", "五一假期", "中秋节",
             "上周末", "今年夏天", "去年冬天", "元旦", "2023年", "2022年秋天", "三月份", "寒假", "暑假"],
    "future": ["下周", "下个月", "明年", "今年年底", "国庆", "过年的时候", "这个周末", "明年春天", "暑假"],
    "weekday": ["周一", "周二", "周三", "周四", "周五", "周六", "周日"],
    "movie": ["《流浪地球》", "《三体》", "《活着》", "《哈利波特》", "《甄嬛传》", "《狂飙》", "《繁花》",
              "《千与千寻》", "《肖申克的救赎》", "《你好，李焕英》", "《长安三万里》", "《盗梦空间》",
              "《请回答1988》", "《红楼梦》", "《围城》", "《白夜行》", "《挪威的森林》", "《百年孤独》",
              "《三国演义》", "《奥本海默》"],
    "opinion": ["特别感人", "有点无聊", "节奏太慢", "非常精彩", "看哭了", "一般般", "值得二刷", "结局很意外"],
    "singer": ["周杰伦", "陈奕迅", "邓紫棋", "五月天", "林俊杰", "王菲", "李健", "毛不易", "孙燕姿", "张学友",
               "薛之谦", "Taylor Swift", "朴树", "蔡依林"],
    "thing": ["新手机", "笔记本电脑", "电动车", "咖啡机", "扫地机器人", "相机", "吉他", "自行车", "降噪耳机",
              "平板", "空气炸锅", "投影仪", "按摩椅", "机械键盘", "智能手表", "跑步机", "一双跑鞋", "钱包", "雨伞"],
    "emotion": ["失眠", "焦虑", "头疼", "心情低落", "胃口不好", "想哭", "容易发脾气", "很累"],
    "exam": ["雅思", "驾照", "考研", "教师资格证", "CPA", "日语N2", "托福", "公务员考试", "PMP"],
    "condition": ["血压有点高", "血糖偏高", "胃不好", "缺铁", "尿酸高", "有脂肪肝", "颈椎有问题", "维生素D不足"],
    "reason": ["家务分工", "谁去接孩子", "过年回谁家", "花钱太多", "他总是迟到", "周末去哪儿玩", "养不养狗"],
    "fear": ["打雷", "蛇", "蟑螂", "坐飞机", "打针", "黑", "高的地方", "在很多人面前讲话", "看牙医"],
    "event": ["演唱会", "樱花", "枫叶", "雪景", "日出", "灯会", "画展", "马拉松", "音乐节", "球赛"],
    "grade": ["幼儿园", "一年级", "三年级", "初二", "高三", "大一", "研二"],
    "n": lambda r: str(r.randint(2, 15)),
    "age": lambda r: str(r.randint(3, 88)),
    "money": lambda r: str(r.choice([r.randint(2, 99) * 10, r.randint(1, 60) * 100, r.randint(1, 30) * 1000])),
    "kg": lambda r: str(r.randint(42, 95)),
    "date": lambda r: f"{r.randint(1, 12)}月{r.randint(1, 28)}号",
    "clock": lambda r: f"{r.choice(['早上', '晚上', '下午'])}{r.randint(1, 11)}点{r.choice(['', '半'])}",
    "year": lambda r: str(r.randint(1995, 2024)),
}

ZH_TEMPLATES = [
    "我{rel}{name}住在{city}，在那边做{job}。",
    "我最喜欢吃{food}，尤其是{city}的。",
    "我对{allergen}过敏，碰到就会起疹子。",
    "{date}是我{rel}{name}的生日。",
    "我{when}去{city}出差了{n}天，累坏了。",
    "我养了一只{pettype}，叫{petname}，今年{n}岁了。",
    "我每周{weekday}晚上去{place}{hobby}。",
    "我不喜欢吃{food}，觉得太{taste}了。",
    "我{when}和{rel}{name}一起去{city}玩，花了{money}块钱。",
    "我最近在学{skill}，已经坚持了{n}个星期。",
    "我在{company}当{job}，已经干了{n}年了。",
    "我{when}看了{movie}，觉得{opinion}。",
    "我最喜欢的歌手是{singer}，{when}还去看了他的演唱会。",
    "我{when}买了{thing}，花了{money}元。",
    "我每天{clock}起床，起来先喝一杯{drink}。",
    "最近工作压力很大，我经常{emotion}。",
    "我现在{kg}公斤，目标是年底减到{kg2}公斤。",
    "我{rel}{name}{future}要在{city}结婚，我得去当伴娘。",
    "我小时候在{city}长大，{year}年搬到了{city2}。",
    "我打算{future}去{city}看{event}。",
    "{rel}{name}推荐我去{city}吃{food}，说特别正宗。",
    "我周末一般{hobby}，有时候也{hobby2}。",
    "我准备{future}考{exam}，每天晚上复习{n}个小时。",
    "医生说我{condition}，让我少吃{food}。",
    "我{when}和{family}吵了一架，因为{reason}。",
    "我{family}今年{age}岁了，住在{city}。",
    "我{rel}{name}的孩子在读{grade}，特别调皮。",
    "我只喝{drink}，不加糖。",
    "我从小就怕{fear}。",
    "我{when}在{place}把{thing}弄丢了，心疼死了。",
    "我{family}做的{food}是全世界最好吃的。",
    "{name}是我的{rel}，我们认识{n}年了。",
    "我{when}在{city}的{place}遇到了{rel}{name}。",
    "我{family}的生日是{date}，今年想送他一个{thing}。",
    "我已经连续{n}天{hobby}了，感觉精神好多了。",
    "我每个月房租{money}元，住在{city}。",
    "我的{pettype}{petname}特别爱吃{food}，但我不敢多给。",
    "{when}我第一次吃{food}，觉得一般。",
    "我想{future}带{family}去{city}旅游。",
    "我和{rel}{name}约好了{future}一起去{hobby}。",
]

# --- English vocabulary -----------------------------------------------------------------------------------------------

EN: dict[str, Filler] = {
    "rel": ["sister", "brother", "cousin", "coworker", "roommate", "best friend", "college friend", "neighbor",
            "girlfriend", "boyfriend", "boss", "manager", "childhood friend", "uncle", "aunt", "gym buddy",
            "classmate", "former colleague", "landlord", "therapist", "piano teacher", "nephew", "niece"],
    "name": ["Emma", "Liam", "Olivia", "Noah", "Sophia", "Jack", "Mia", "Lucas", "Chloe", "Ethan", "Grace",
             "Daniel", "Lily", "Ben", "Zoe", "Ryan", "Hannah", "Leo", "Ava", "Sam", "Nora", "Kevin", "Rachel",
             "Tom", "Anna", "Marcus", "Priya", "Carlos", "Yuki", "Fatima", "Oliver", "Isabel", "Hiro", "Maya",
             "Diego", "Sarah"],
    "family": ["mom", "dad", "grandma", "grandpa", "husband", "wife", "son", "daughter", "stepdad", "mother-in-law"],
    "city": ["London", "Paris", "Berlin", "New York", "Tokyo", "Seoul", "Sydney", "Toronto", "Vancouver", "Chicago",
             "Boston", "Seattle", "Austin", "Lisbon", "Barcelona", "Rome", "Amsterdam", "Dublin", "Singapore",
             "Bangkok", "Shanghai", "Beijing", "Hong Kong", "Melbourne", "San Francisco", "Denver", "Prague",
             "Vienna", "Edinburgh", "Mexico City", "Istanbul", "Kyoto", "Hanoi", "Bali", "Copenhagen"],
    "food": ["sushi", "ramen", "tacos", "pizza", "pad thai", "dumplings", "pho", "burgers", "lasagna", "curry",
             "bibimbap", "falafel", "fish and chips", "dim sum", "paella", "pancakes", "mac and cheese", "kimchi",
             "hot pot", "avocado toast", "cheesecake", "croissants", "steak", "oysters", "mango sticky rice",
             "peanut butter", "blue cheese", "cilantro", "olives", "spicy chicken wings", "bagels", "gelato"],
    "drink": ["black coffee", "oat milk latte", "green tea", "chai", "sparkling water", "espresso", "matcha",
              "orange juice", "chamomile tea", "cold brew", "kombucha"],
    "allergen": ["peanuts", "shellfish", "shrimp", "tree nuts", "dairy", "eggs", "pollen", "cats", "penicillin",
                 "gluten", "dust mites", "bee stings"],
    "hobby": ["running", "swimming", "playing guitar", "painting", "badminton", "hiking", "yoga", "photography",
              "reading", "gaming", "chess", "fishing", "cooking", "baking", "cycling", "skiing", "rock climbing",
              "dancing", "gardening", "knitting", "boxing", "pottery", "surfing"],
    "skill": ["Japanese", "Korean", "French", "Spanish", "piano", "the ukulele", "Python", "video editing",
              "driving", "watercolor", "salsa", "sign language", "woodworking", "investing", "Mandarin"],
    "pettype": ["cat", "tabby cat", "corgi", "golden retriever", "shiba inu", "poodle", "hamster", "parrot",
                "rabbit", "turtle", "border collie", "beagle"],
    "petname": ["Mochi", "Biscuit", "Luna", "Max", "Pepper", "Oreo", "Milo", "Coco", "Simba", "Nala", "Waffles",
                "Bean", "Ziggy", "Pumpkin", "Teddy", "Kiwi"],
    "job": ["software engineer", "nurse", "teacher", "graphic designer", "accountant", "doctor", "lawyer",
            "product manager", "sales rep", "chef", "journalist", "photographer", "architect", "translator",
            "data analyst", "barista", "pharmacist", "civil servant", "UX researcher", "paramedic"],
    "company": ["a tech startup", "a bank", "a hospital", "an elementary school", "a law firm", "a design studio",
                "a consulting firm", "a game studio", "a logistics company", "a bakery", "the city council"],
    "place": ["gym", "library", "park", "pool", "coffee shop", "mall", "community center", "climbing gym",
              "riverside trail", "yoga studio"],
    "when": ["last week", "yesterday", "two days ago", "last month", "last year", "over Christmas",
             "during spring break", "last weekend", "this summer", "last winter", "on New Year's Eve", "in 2022",
             "in March", "over Thanksgiving", "during the holidays", "on my birthday", "back in college"],
    "future": ["next week", "next month", "next year", "by the end of the year", "this weekend", "in the spring",
               "in October", "over the summer", "after my exams"],
    "weekday": ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"],
    "movie": ["Inception", "Interstellar", "Spirited Away", "The Godfather", "Parasite", "Oppenheimer", "Dune",
              "Pride and Prejudice", "Harry Potter", "The Office", "Breaking Bad", "Friends", "Stranger Things",
              "The Three-Body Problem", "Succession", "Everything Everywhere All at Once", "Atomic Habits",
              "Sapiens", "The Great Gatsby", "Normal People"],
    "opinion": ["amazing", "kind of boring", "way too long", "beautiful", "overrated", "really moving",
                "hilarious", "confusing at the end"],
    "singer": ["Taylor Swift", "Adele", "Ed Sheeran", "BTS", "Billie Eilish", "Coldplay", "Jay Chou", "Beyonce",
               "Radiohead", "Bruno Mars", "Olivia Rodrigo", "Norah Jones"],
    "thing": ["a new phone", "a laptop", "an e-bike", "an espresso machine", "a robot vacuum", "a camera",
              "a guitar", "a road bike", "noise-cancelling headphones", "a tablet", "an air fryer", "a projector",
              "a standing desk", "a mechanical keyboard", "a smartwatch", "running shoes", "my wallet", "an umbrella"],
    "emotion": ["can't sleep", "feel anxious", "get headaches", "feel down", "lose my appetite", "snap at people",
                "feel exhausted"],
    "exam": ["the IELTS", "my driving test", "the GRE", "the bar exam", "the CPA exam", "the JLPT N2", "the TOEFL",
             "a PMP certification", "the MCAT"],
    "condition": ["high blood pressure", "high blood sugar", "low iron", "high cholesterol", "acid reflux",
                  "a vitamin D deficiency", "a bad lower back"],
    "reason": ["chores", "money", "who picks up the kids", "where to spend the holidays", "being late again",
               "getting a dog", "screen time"],
    "fear": ["thunderstorms", "snakes", "spiders", "flying", "needles", "the dark", "heights", "public speaking",
             "the dentist"],
    "event": ["a concert", "the cherry blossoms", "the northern lights", "the marathon", "a music festival",
              "a football match", "an art exhibition", "the fall foliage", "a comedy show"],
    "grade": ["kindergarten", "first grade", "third grade", "middle school", "high school", "college"],
    "n": lambda r: str(r.randint(2, 15)),
    "age": lambda r: str(r.randint(3, 88)),
    "money": lambda r: f"${r.choice([r.randint(2, 99) * 5, r.randint(1, 40) * 50, r.randint(1, 20) * 500])}",
    "kg": lambda r: str(r.randint(45, 100)),
    "date": lambda r: f"{r.choice(_MONTHS)} {r.randint(1, 28)}",
    "clock": lambda r: f"{r.randint(5, 11)}:{r.choice(['00', '15', '30', '45'])}",
    "year": lambda r: str(r.randint(1995, 2024)),
}

_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December"]

EN_TEMPLATES = [
    "My {rel} {name} lives in {city} and works as a {job}.",
    "I love {food}, especially the place near my office in {city}.",
    "I'm allergic to {allergen}, so please remind me to check labels.",
    "My {rel} {name}'s birthday is on {date}.",
    "I went to {city} for a {n}-day business trip {when}.",
    "I have a {pettype} named {petname} who is {n} years old.",
    "Every {weekday} evening I go to the {place} for {hobby}.",
    "I really can't stand {food}.",
    "{when} my {rel} {name} and I went to {city} and spent {money}.",
    "I've been learning {skill} for {n} weeks now.",
    "I work as a {job} at {company} and have been there for {n} years.",
    "I watched {movie} {when} and thought it was {opinion}.",
    "My favorite singer is {singer}; I saw them live {when}.",
    "I bought {thing} {when} for {money}.",
    "I get up at {clock} every morning and start with a {drink}.",
    "Work has been stressful lately and I often {emotion}.",
    "I weigh {kg} kg right now and want to get down to {kg2} kg.",
    "My {rel} {name} is getting married in {city} {future}.",
    "I grew up in {city} and moved to {city2} in {year}.",
    "I'm planning to visit {city} {future} to see {event}.",
    "My {rel} {name} told me to try the {food} in {city}.",
    "On weekends I usually do some {hobby}, sometimes {hobby2}.",
    "I'm taking {exam} {future} and study {n} hours every night.",
    "My doctor said I have {condition} and should cut back on {food}.",
    "I had a fight with my {family} {when} about {reason}.",
    "My {family} is {age} and lives in {city}.",
    "My {rel} {name}'s kid is in {grade} and very energetic.",
    "I only drink {drink}, no sugar.",
    "I've been scared of {fear} since I was a kid.",
    "I lost {thing} at the {place} {when} and I'm still upset about it.",
    "My {family} makes the best {food} in the world.",
    "{name} is my {rel}; we've known each other for {n} years.",
    "I ran into my {rel} {name} at a {place} in {city} {when}.",
    "My {family}'s birthday is {date} and I want to get them {thing}.",
    "I've done {hobby} {n} days in a row and feel much better.",
    "My rent is {money} a month for a small flat in {city}.",
    "My {pettype} {petname} loves {food} but I try not to give him too much.",
    "I tried {food} for the first time {when} and it was just okay.",
    "I want to take my {family} to {city} {future}.",
    "{name} and I agreed to go {hobby} together {future}.",
]

# --- queries ----------------------------------------------------------------------------------------------------------

ZH_QUERIES = [
    "我{rel}住在哪里？", "我对什么过敏？", "{name}的生日是哪天？", "我喜欢吃什么？", "我的{pettype}叫什么名字？",
    "我去{city}花了多少钱？", "我在哪里上班？", "我最喜欢的歌手是谁？", "我平时几点起床？", "我最近在学什么？",
    "我为什么和{family}吵架？", "我{family}多大了？", "我周末一般做什么？", "我准备考什么证？", "医生让我注意什么？",
    "我怕什么？", "我什么时候去{city}？", "{name}是谁？", "我买了什么东西？", "我最近心情怎么样？",
    "{food}", "{city} 出差", "{movie}", "{hobby}", "{allergen} 过敏", "{rel}{name}", "{thing}", "{drink}",
    "我{when}做了什么？", "推荐我吃{food}的人是谁？", "我的体重目标是多少？", "我房租多少钱？",
]

EN_QUERIES = [
    "Where does my {rel} live?", "What am I allergic to?", "When is {name}'s birthday?", "What food do I like?",
    "What's my {pettype}'s name?", "How much did I spend in {city}?", "Where do I work?", "Who is my favorite singer?",
    "What time do I wake up?", "What am I learning these days?", "Why did I fight with my {family}?",
    "How old is my {family}?", "What do I do on weekends?", "Which exam am I preparing for?",
    "What did my doctor tell me?", "What am I afraid of?", "When am I going to {city}?", "Who is {name}?",
    "What did I buy recently?", "How have I been feeling lately?", "{food}", "trip to {city}", "{movie}", "{hobby}",
    "{allergen} allergy", "my {rel} {name}", "{thing}", "{drink}", "What did I do {when}?",
    "who recommended the {food}", "what's my target weight", "how much is my rent",
]

_SLOT = re.compile(r"\{(\w+)\}")


def _fill(template: str, vocab: dict[str, Filler], rng: random.Random) -> str:
    """Fill each {slot}; "city2" draws from "city" but differs from "city" when both appear."""
    values: dict[str, str] = {}
    for slot in _SLOT.findall(template):
        if slot in values:
            continue
        key = slot.rstrip("0123456789")
        filler = vocab[key]
        for _ in range(10):
            value = filler(rng) if callable(filler) else rng.choice(filler)
            if value not in values.values():
                break
        values[slot] = value
    return template.format_map(values)


def _stream(templates: list[list[str]], vocabs: list[dict[str, Filler]], seed: int, salt: str) -> Iterator[str]:
    """Distinct filled templates forever, alternating languages at random."""
    rng = random.Random(f"{salt}:{seed}")
    seen: set[str] = set()
    while True:
        lang = rng.randrange(len(templates))
        text = _fill(rng.choice(templates[lang]), vocabs[lang], rng)
        if text not in seen:
            seen.add(text)
            yield text


def memories(n: int, seed: int = 0) -> list[str]:
    """The first `n` distinct memory sentences of the seeded stream (about half Chinese, half English)."""
    stream = _stream([ZH_TEMPLATES, EN_TEMPLATES], [ZH, EN], seed, "memories")
    return [next(stream) for _ in range(n)]


def queries(n: int, seed: int = 0, salt: str = "queries") -> list[str]:
    """`n` distinct questions and keyword queries in both languages; another `salt` gives another set."""
    stream = _stream([ZH_QUERIES, EN_QUERIES], [ZH, EN], seed, salt)
    return [next(stream) for _ in range(n)]


def describe(texts: list[str]) -> dict[str, Any]:
    """Counts a reader of the results wants: how many, how many Chinese, average length."""
    zh = sum(1 for t in texts if re.search(r"[\u4e00-\u9fff]", t))
    return {"count": len(texts), "distinct": len(set(texts)), "chinese": zh, "english": len(texts) - zh,
            "mean_chars": round(sum(map(len, texts)) / max(len(texts), 1), 1)}


if __name__ == "__main__":
    sample = memories(20, seed=0)
    print("\n".join(sample))
    print()
    print("\n".join(queries(12, seed=0)))
