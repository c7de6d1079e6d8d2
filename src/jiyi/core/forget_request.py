"""A user asking, in the chat, to forget something: "忘掉我刚才说的", "把我住在无锡这件事删了", "forget that".

Such a message is an instruction, not a statement: the write path deletes what it points to at once (the memories
made from the user's previous message, or the memories that match the named topic, within the user's own scope) and
extracts nothing from it. "我忘了带钥匙" (I forgot my keys) is not a request: only an imperative counts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ForgetRequest:
    topic: str | None  # None: what the user said just before


_POLITE_ZH = r"^(?:请|麻烦你?|你)?(?:帮我)?"
_VERB_ZH = r"(?:忘[掉记了]|删[掉除了]|别记(?:住|着)?|不要记(?:住|着)?|别再记(?:住|着)?)"
_ZH_VERB_FIRST = re.compile(_POLITE_ZH + _VERB_ZH + r"(?:掉)?(?P<what>.*?)[吧吧啊哈。！!~，,]*$")
_ZH_OBJECT_FIRST = re.compile(_POLITE_ZH + r"把(?P<what>.+?)(?:给我)?" + _VERB_ZH + r"(?:掉|吧|了|。|！|!|~)*$")
_EN = re.compile(r"^(?:please\s+|can you\s+|could you\s+)*(?:forget|delete|erase|remove|don't remember|do not remember|"
                 r"stop remembering)\s+(?P<what>.*?)[\s.!~]*(?:please)?[\s.!~]*$", re.IGNORECASE)
_THIS_ZH = re.compile(r"^(?:我?刚[才刚]?(?:说的|讲的|那句话?|跟你说的)(?:话|事|那些)?|这个|那个|这些|那些|"
                      r"这句话?|那句话?|这件事|那件事|它|这条)$")
_THIS_EN = re.compile(r"^(?:that|this|it|what i (?:just )?(?:said|told you)|everything i just said|"
                      r"the last thing i said|that last (?:part|thing|message))$", re.IGNORECASE)
_FORGOT_ZH = re.compile(_POLITE_ZH + "忘了")
_TOPIC_WRAP_ZH = re.compile(r"^(?:关于|有关)|(?:的事情?|这件事|那件事|的记忆|这条记忆|的那些?事?)$")
_TOPIC_WRAP_EN = re.compile(r"^(?:about|that|the fact that)\s+", re.IGNORECASE)


def forget_request(text: str) -> ForgetRequest | None:
    text = text.strip()
    if not text or len(text) > 80:
        return None
    for pattern in (_ZH_OBJECT_FIRST, _ZH_VERB_FIRST):
        match = pattern.match(text)
        if match:
            what = match.group("what").strip(" ，,。")
            if not what or _THIS_ZH.match(what):
                return ForgetRequest(None)
            if pattern is _ZH_VERB_FIRST and _FORGOT_ZH.match(text) and not text.endswith("吧"):
                return None  # "忘了带钥匙": forgot to, not forget it
            topic = _TOPIC_WRAP_ZH.sub("", what).strip()
            return ForgetRequest(topic or None)
    match = _EN.match(text)
    if match:
        what = match.group("what").strip(" ,.")
        if not what or _THIS_EN.match(what):
            return ForgetRequest(None)
        topic = _TOPIC_WRAP_EN.sub("", what).strip()
        return ForgetRequest(topic or None)
    return None
