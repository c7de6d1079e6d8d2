"""jiyi's own prompts, in English and Chinese; the conversation's language picks one.

Every prompt ends with the exact JSON shape we parse. Custom prompts from mem0 configs replace the instructions but
keep the data block, as mem0 does.
"""

from __future__ import annotations

FACT_KINDS = "preference | personal | relationship | plan | event | state | health | other"

USER_FACTS_EN = f"""You keep the long-term memory of a personal assistant. Read the conversation and write down what is
worth remembering about the USER for future conversations.

Only use what the user says. Never record what the assistant or the system says, and never record the assistant's
guesses. Worth remembering: preferences and dislikes; personal details (name, age, job, school, where they live or come
from, birthday); family, partners, friends and pets; plans and intentions, with their time; health, allergies and diet;
current feelings or situation when they matter beyond this moment. Not worth remembering: greetings, thanks, small talk,
questions the user asks, requests, hypotheticals, opinions about passing things.

Rules:
- One fact per item, short, in the third person about the user ("Is allergic to peanuts", "Has a sister named Jesica").
- Write each fact in the language the user wrote it in. Never translate.
- Keep names, numbers and places exactly. If the conversation date is given, turn relative times into dates
  ("tomorrow" → the date).
- If the user corrects or changes something ("I moved to Berlin", "I'm not vegetarian anymore"), state the new fact
  plainly; the memory manager will replace the old one.
- importance: 0.0–1.0 (0.9+ for health, allergies, names and core identity; 0.5 for ordinary preferences; 0.2 for
  passing moods). category: "core" for stable identity facts (name, birthday, allergies, family), else "fact".
- Nothing worth remembering → an empty list.

Answer with JSON only:
{{"facts": [{{"text": "...", "type": "{FACT_KINDS}", "importance": 0.5, "category": "fact"}}]}}"""

USER_FACTS_ZH = f"""你负责一个私人助理的长期记忆。阅读下面的对话，记下以后的对话中值得记住的关于【用户】的信息。

只根据用户说的话。绝不要记录助理或系统说的内容，也不要记录助理的猜测。值得记住的：喜好和厌恶；个人信息（名字、年龄、
职业、学校、住在哪里或来自哪里、生日）；家人、伴侣、朋友和宠物；计划和打算（连同时间）；健康、过敏和饮食；对以后仍有意义的
近况和情绪。不值得记住的：打招呼、道谢、闲聊、用户提的问题、请求、假设、对一时之事的评价。

规则：
- 每条一个事实，简短，用第三人称描述用户（"用户对海鲜过敏"、"用户有一个妹妹叫小雨"）。
- 用用户说话的语言记录，中文说的就用中文记，不要翻译。
- 名字、数字、地点保持原样。若给出了对话日期，把"明天""下周一"等相对时间换算成日期。
- 用户纠正或改变了某件事（"我搬到杭州了"、"我不再吃素了"），直接写出新的事实；记忆管理器会替换旧的。
- importance：0.0–1.0（健康、过敏、名字和身份信息 0.9 以上；普通喜好 0.5；一时的情绪 0.2）。category：稳定的身份信息
  （名字、生日、过敏、家人）为 "core"，其他为 "fact"。
- 没有值得记住的就返回空列表。

只用 JSON 回答：
{{"facts": [{{"text": "...", "type": "{FACT_KINDS}", "importance": 0.5, "category": "fact"}}]}}"""

AGENT_FACTS_EN = """You keep the long-term memory of an AI character. Read the conversation and write down what the
ASSISTANT (the character) says about ITSELF that it should stay consistent with later: its own preferences, opinions,
background, habits, relationships, promises it made to the user.

Only use the assistant's messages. Never record facts about the user. One short fact per item, in the third person about
the character, in the language it was said in. Nothing worth keeping → an empty list.

Answer with JSON only:
{"facts": [{"text": "...", "type": "persona", "importance": 0.5, "category": "fact"}]}"""

AGENT_FACTS_ZH = """你负责一个 AI 角色的长期记忆。阅读下面的对话，记下【助理（角色）】关于【它自己】说过、以后需要保持一致的内容：
它自己的喜好、观点、背景、习惯、人际关系，以及它对用户做出的承诺。

只根据助理的话，绝不记录关于用户的事实。每条一个简短事实，用第三人称描述这个角色，用原话的语言。没有就返回空列表。

只用 JSON 回答：
{"facts": [{"text": "...", "type": "persona", "importance": 0.5, "category": "fact"}]}"""

FORMAT_REMINDER = """
Answer with JSON only: {"facts": [{"text": "...", "type": "...", "importance": 0.5, "category": "fact"}]}"""

DECIDE_EN = """You manage a memory store. New facts were just learned from a conversation. Compare each new fact with
the existing memories and choose one operation per fact:

- ADD: new information not in memory. Give the fact as "text"; use a new id.
- UPDATE: a memory says the same thing with less detail, or something that is now different (a correction, a change:
  moved, new job, stopped a habit). Use that memory's id; "text" is the complete new memory; "old_memory" the old text.
  A correction replaces the old memory: never keep both.
- DELETE: a memory is wrong or retracted and the new fact adds nothing to store. Use that memory's id.
- NONE: the fact is already in memory with the same meaning. Use that memory's id.
Changes over time are not contradictions when both can be true at their times ("was nervous last week" / "is relaxed
now"): ADD the new one.
Keep the language of the facts. Only use ids from the list below.
BOOST: the assistant's reply is shown together with the memories it was given. For each of those memories that really
shaped the reply (not merely on the same topic), add {"id": "<its id>", "event": "BOOST"}.

Answer with JSON only:
{"memory": [{"id": "0", "text": "...", "event": "ADD|UPDATE|DELETE|NONE|BOOST", "old_memory": "..."}]}"""

DECIDE_ZH = """你管理一个记忆库。刚从对话中得到了一些新事实。把每条新事实和已有记忆比较，为每条新事实选一个操作：

- ADD：记忆里没有的新信息。"text" 写这条事实，id 用新的。
- UPDATE：某条记忆说的是同一件事但不如新事实详细，或者情况已经变了（纠正、改变：搬家、换工作、不再有某个习惯）。用那条记忆
  的 id；"text" 写完整的新记忆；"old_memory" 写旧内容。纠正必须替换旧记忆，不能两条都留。
- DELETE：某条记忆是错的或被收回，而新事实没有需要保存的内容。用那条记忆的 id。
- NONE：记忆里已经有意思相同的内容。用那条记忆的 id。
随时间的变化不一定是矛盾（"上周很紧张" 和 "现在很放松" 在各自的时间都成立）：这种情况 ADD 新的。
保持事实原来的语言。只能使用下面列表里的 id。
BOOST：下面还给出了助理的回复和它当时拿到的记忆。对其中真正影响了这次回复的记忆（不只是话题相同），加一项
{"id": "<它的 id>", "event": "BOOST"}。

只用 JSON 回答：
{"memory": [{"id": "0", "text": "...", "event": "ADD|UPDATE|DELETE|NONE|BOOST", "old_memory": "..."}]}"""

EPISODE_EN = """Summarize this stretch of conversation in one line for the assistant's diary: the topics talked about
and anything that happened, as short phrases separated by commas, in the conversation's language. No quotes, no markdown.
Answer with JSON only: {"summary": "..."}"""

EPISODE_ZH = """用一句话为助理的日记概括这段对话：聊了哪些话题、发生了什么，用顿号分隔的短语，用对话的语言。不要引号，不要 markdown。
只用 JSON 回答：{"summary": "..."}"""


def user_facts_prompt(chinese: bool) -> str:
    return USER_FACTS_ZH if chinese else USER_FACTS_EN


def agent_facts_prompt(chinese: bool) -> str:
    return AGENT_FACTS_ZH if chinese else AGENT_FACTS_EN


def decide_prompt(chinese: bool) -> str:
    return DECIDE_ZH if chinese else DECIDE_EN


def episode_prompt(chinese: bool) -> str:
    return EPISODE_ZH if chinese else EPISODE_EN


# --- read path: the query rewrite (last stage of query enhancement) --------------------------------------------------

REWRITE = """You turn the last message of a chat into one self-contained search query for the assistant's long-term
memory of the user. The input is JSON: user_name, char_name, user_question, recent_conversation.
- Resolve what the question refers to ("that", "it", "那个事情", "你还记得吗") from recent_conversation: name the
  people, things, events and feelings it is about, and what the user wants to know.
- Write in the language of user_question. One line, at most 40 words (or 60 Chinese characters).
- Output only the query: no explanation, no quotes, no markdown, no prefix.
Example: the conversation says the user could not sleep last night; the question is "你今天有什么不一样？" →
结合最近对话：用户昨晚失眠，询问今天状态有何变化"""


# --- lifecycle: review, merge, abstraction (core/llm_lifecycle.py) ---------------------------------------------------

REVIEW = """You look after the long-term memory a chat assistant keeps about one user. Review ONE memory.
The input is JSON: mode, memory {text, kinds, importance, created_at, last_used, times_used}.
- mode "promote": the memory became important. PROMOTE it to core memory (always shown to the assistant) only if it is
  a lasting fact that matters in most conversations: identity, health and diet constraints, close relationships,
  lasting preferences, a long-standing habit. KEEP it if it is true but not core. DELETE it if it is wrong, trivial or
  replaced by a newer memory.
- mode "forget": the memory has faded. KEEP it if it still says something true and useful about the user; DELETE it
  if it was about a passing moment or is replaced by a newer memory.
Before deciding you may look at related memories, at most 3 times: answer {"action": "SEARCH", "query": "..."} and the
results come back. Check for a newer memory that contradicts it before you KEEP or PROMOTE.
Answer with JSON only: {"action": "SEARCH", "query": "..."} or {"action": "PROMOTE" | "KEEP" | "DELETE",
"reason": "<one short sentence>"}"""

MERGE = """Several memories a chat assistant keeps about one user say nearly the same thing. Write ONE memory that
keeps every detail they hold (names, numbers, places, times), in the third person about the user, in the language
they are written in, in one sentence. Do not add anything they do not say.
The input is JSON: {"memories": ["...", ...]}. Answer with JSON only: {"memory": "..."}"""

ABSTRACT = """A chat assistant keeps long-term memories about one user, including habits it has noticed (L1: "often
does X"). Find what they say at a higher level, only where the memories clearly support it:
- L2, a preference behind habits ("User often buys coffee" → "User likes coffee");
- L3, a lasting pattern of the person's life that links several memories ("User likes coffee" + "User is always in a
  hurry in the morning" → "User relies on a coffee to get going in the morning").
Write each in the third person, in the language of the memories, one sentence. Give the ids of the memories it rests
on (at least one L1 habit for L2, at least two memories for L3). Do not repeat what a memory already says; nothing
clear → an empty list.
The input is JSON: {"memories": [{"id": 1, "text": "...", "level": 1}, ...]}.
Answer with JSON only: {"abstractions": [{"text": "...", "level": 2, "sources": [1, 3]}]}"""
