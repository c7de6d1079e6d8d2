"""Offline fact extraction for English: first-person statements rewritten as facts about the user.

The same idea as rules_zh: a rule recognises a statement in one clause ("I'm allergic to peanuts", "I moved to Berlin",
"I'm not vegetarian anymore") and says what kind of fact it is; questions, hypotheticals and passing remarks are skipped.
"""

from __future__ import annotations

import re

from jiyi.core.facts import Fact, FactKind
from jiyi.core.rule_base import Rule, first_fact, last_relation, make_fact, unique_facts

_I = re.IGNORECASE
_QUESTION_START = re.compile(r"^(?:what|who|where|when|why|how|which|do|does|did|can|could|would|will|should|is|are|am|"
                             r"was|were|have|has|shall|may|might|any|remind|tell me|guess)\b", _I)
_HYPOTHETICAL = re.compile(r"\b(?:if|unless|suppose|imagine|wish|would be|wonder|maybe|might|not sure|whether)\b", _I)
_LEADING = re.compile(r"^(?:oh|ah|well|so|and|but|also|btw|by the way|anyway|actually|honestly|haha+|lol|yeah|yes|no|"
                      r"ok(?:ay)?|hey|hi|hello|um+|hmm+|fun fact|guess what|just so you know|fyi|sorry|wait)\b[,!.:]?\s*", _I)
_OBJECT_END = re.compile(r"[\s,.;:!?~)…-]+$|\s+(?:lol|haha+|though|too|as well|actually|honestly|really|now)$", _I)
_VAGUE = re.compile(r"^(?:it|that|this|these|those|them|you|your|yours|him|her|the idea|the way|to know|to ask|when you|"
                    r"what you|how you|talking|chatting|hearing|that idea|this idea|so much|a lot)\b", _I)

TIME_WORDS = (r"(?:tomorrow|tonight|today|this (?:week|weekend|month|year|summer|winter|spring|fall|autumn|friday|saturday|"
              r"sunday|monday|tuesday|wednesday|thursday|evening|afternoon|morning)|next (?:week|weekend|month|year|summer|"
              r"winter|spring|fall|autumn|monday|tuesday|wednesday|thursday|friday|saturday|sunday|semester|term)|"
              r"on (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)|in (?:january|february|march|april|may|june|"
              r"july|august|september|october|november|december|a few (?:days|weeks|months)|two weeks|\d+ (?:days|weeks|months))|"
              r"later this (?:week|month|year)|soon|at the end of (?:the )?(?:month|year|week)|after graduation)")
_TIME = re.compile(r"\b" + TIME_WORDS + r"\b", _I)

RELATIONS = (r"(?:mom|mother|mum|dad|father|parents|wife|husband|partner|girlfriend|boyfriend|fianc[eé]e?|sister|brother|"
             r"siblings?|daughter|son|kids?|children|child|baby|grandma|grandmother|grandpa|grandfather|aunt|uncle|cousin|"
             r"niece|nephew|roommate|best friend|friend|boss|coworker|colleague|dog|cat|puppy|kitten|pet|parrot|hamster|"
             r"rabbit|bunny|turtle|fish|twins?)")
_PETS = {"dog", "cat", "puppy", "kitten", "pet", "parrot", "hamster", "rabbit", "bunny", "turtle", "fish"}
_STATES = (r"(?:tired|exhausted|stressed(?: out)?|anxious|sad|depressed|lonely|happy|excited|nervous|sick|ill|burned out|"
           r"burnt out|overwhelmed|worried|upset|bored|homesick|heartbroken|frustrated|scared|afraid|down|struggling|"
           r"pregnant|injured|unemployed|broke|single|engaged|married|divorced|retired)")
_CONDITIONS = (r"(?:asthma|diabetes|type [12] diabetes|high blood pressure|hypertension|insomnia|migraines?|anxiety|depression|"
               r"adhd|celiac disease|ibs|arthritis|eczema|a heart condition|back pain|chronic pain|a bad back|allergies|"
               r"hay fever|covid|the flu|a cold|autism|dyslexia|epilepsy|cancer)")
_DIETS = r"(?:vegetarian|vegan|pescatarian|lactose intolerant|gluten[- ]free|gluten intolerant|on a diet|keto|halal|kosher)"
_ADJECTIVE_ENDINGS = re.compile(r"(?:ed|ing|ful|ous|ive|able|ible|al|ic|less|ish|y)$", _I)

_IRREGULAR_3RD = {"have": "has", "do": "does", "go": "goes", "am": "is", "'m": "is", "are": "is", "don't": "doesn't",
                  "haven't": "hasn't", "'ve": "has", "was": "was", "were": "was"}
_NO_INFLECTION = {"can", "can't", "cannot", "could", "couldn't", "will", "won't", "would", "wouldn't", "should",
                  "shouldn't", "might", "must", "may", "did", "didn't", "used", "just", "also", "really", "still",
                  "never", "always", "usually", "often", "sometimes", "recently", "finally", "already", "totally",
                  "absolutely", "actually", "definitely", "only", "even", "kinda", "kind", "sort"}
# Irregular past tenses: already what a fact says in the third person ("I went" → "User went", never "User wents").
PAST_IRREGULAR = frozenset(
    "went had made got saw ate took bought ran came told met left felt found gave thought wrote began brought caught "
    "drank drove flew forgot slept spent swam taught won wore lost kept sent sold sat stood understood heard paid built "
    "fell grew knew rode rang sang spoke broke chose froze hid held led lent meant rose shook stole struck swore threw "
    "woke fought fed bit bent dug hung lay slid spun sprang stuck stung".split())
# A statement about something that happened, not a plan: a past verb or a past time.
_PAST_TIME = re.compile(r"\b(?:yesterday|last (?:night|week|weekend|month|year|time|monday|tuesday|wednesday|thursday|"
                        r"friday|saturday|sunday)|\d+ (?:days?|weeks?|months?) ago|earlier today|just now)\b", _I)
_FUTURE = re.compile(r"\b(?:will|'ll|going to|gonna|plan(?:ning)? to|about to|tomorrow|next|soon|later)\b", _I)


def _third_person_verb(word: str) -> str:
    lower = word.lower()
    if lower in _IRREGULAR_3RD:
        return _IRREGULAR_3RD[lower]
    if lower in _NO_INFLECTION or lower in PAST_IRREGULAR:
        return word
    if re.search(r"(?:ed|s)$", lower) and lower not in ("guess", "miss", "pass", "focus"):
        return word  # past tense or already inflected
    if re.search(r"(?:sh|ch|x|z|ss|o)$", lower):
        return word + "es"
    if re.search(r"[^aeiou]y$", lower):
        return word[:-1] + "ies"
    return word + "s"


def to_third_person(clause: str) -> str:
    """'I love my dog' → 'User loves User's dog'. The clause must start at its first-person subject."""
    text = clause.strip()
    text = re.sub(r"^(?:I'm|I am)\b", "User is", text, flags=_I)
    text = re.sub(r"^(?:I've|I have)\b", "User has", text, flags=_I)
    text = re.sub(r"^I'll\b|^I will\b", "User will", text, flags=_I)
    text = re.sub(r"^I'd\b", "User would", text, flags=_I)
    text = re.sub(r"^I was\b", "User was", text, flags=_I)
    text = re.sub(r"^My\b", "User's", text, flags=_I)
    match = re.match(r"^I\s+(\w+(?:'t)?)\b", text, flags=_I)
    if match:
        verb = match.group(1)
        adverbs = []
        rest = text[match.end():]
        while verb.lower() in ("really", "also", "just", "still", "totally", "absolutely", "actually", "usually",
                               "often", "always", "sometimes", "recently", "finally", "already", "kinda", "definitely"):
            adverbs.append(verb)
            nxt = re.match(r"^\s+(\w+(?:'t)?)\b", rest)
            if not nxt:
                break
            verb, rest = nxt.group(1), rest[nxt.end():]
        text = "User " + " ".join([*adverbs, _third_person_verb(verb)]) + rest
    text = re.sub(r"\bmy\b", "User's", text, flags=_I)
    text = re.sub(r"\bmyself\b", "themselves", text, flags=_I)
    text = re.sub(r"\bme\b", "User", text, flags=_I)
    text = re.sub(r"\bI(?:'m| am)\b", "User is", text)
    text = re.sub(r"\bI\b", "User", text)
    return text[0].upper() + text[1:] if text else text


def _clean_object(text: str | None, words: int = 12) -> str | None:
    if not text:
        return None
    text = text.strip()
    for _ in range(3):
        text = _OBJECT_END.sub("", text)
    if not text or len(text.split()) > words or _VAGUE.match(text):
        return None
    return text


def _fact(text: str, kind: FactKind, importance: float, **structure: object) -> Fact:
    return make_fact(_OBJECT_END.sub("", text.strip()), kind, importance, **structure)


def _from_anchor(m: re.Match[str], clause: str, end: int | None = None) -> str:
    """The clause from its first-person subject on, in the third person."""
    return to_third_person(clause[m.start("i"):end if end is not None else len(clause)])


def _topic(text: str) -> str:
    text = _TIME.sub("", text).strip()
    text = re.sub(r"\s+(?:ago|last \w+|years? ago)$", "", text, flags=_I)
    text = re.sub(r"^(?:the|a|an|some|my|to|eating|eat|drinking|drink)\s+", "", text.strip(), flags=_I)
    return text.lower()


def _allergy(m: re.Match[str], clause: str) -> Fact | None:
    what = _clean_object(m.group("what"), 6)
    return _fact(f"User is allergic to {what}", FactKind.HEALTH, 0.95, topic=f"allergic {_topic(what)}", core=True) \
        if what else None


def _allergy_noun(m: re.Match[str], clause: str) -> Fact | None:
    what = _clean_object(m.group("what"), 4)
    return _fact(f"User has a {what} allergy", FactKind.HEALTH, 0.95, topic=f"allergic {_topic(what)}", core=True) \
        if what else None


def _condition(m: re.Match[str], clause: str) -> Fact | None:
    return _fact(_from_anchor(m, clause, m.end("what")), FactKind.HEALTH, 0.85, topic=m.group("what").lower(),
                 core=True)


def _diet(m: re.Match[str], clause: str) -> Fact | None:
    diet = m.group("diet").lower()
    return _fact(f"User is {diet}", FactKind.HEALTH, 0.8, topic=diet.split()[0])


def _no_longer(m: re.Match[str], clause: str) -> Fact | None:
    what = _clean_object(m.group("what"), 8)
    if not what:
        return None
    what = re.sub(r"^(?:a|an)\s+", "", what, flags=_I)
    verb = m.group("be")
    text = f"User is no longer {what}" if verb else f"User no longer {what}"
    kind = FactKind.HEALTH if re.search(_DIETS + r"|smok|drink|eat", what, _I) else FactKind.PREFERENCE
    return _fact(text, kind, 0.7, topic=_topic(re.sub(r"^(?:likes?|loves?|enjoys?)\s+", "", what, flags=_I)),
                 negated=True)


def _quit(m: re.Match[str], clause: str) -> Fact | None:
    what = _clean_object(m.group("what"), 6)
    if not what or re.match(r"^(?:my job|the job|work)$", what, _I):
        return _fact(_from_anchor(m, clause), FactKind.PERSONAL, 0.7, slot="workplace", topic="quit job") \
            if what else None
    return _fact(f"User quit {what}", FactKind.HEALTH, 0.7, topic=_topic(what), negated=True)


def _moved(m: re.Match[str], clause: str) -> Fact | None:
    place = _clean_object(m.group("place"), 6)
    return _fact(f"User moved to {place}", FactKind.PERSONAL, 0.8, slot="residence", topic=place.lower()) \
        if place else None


def _residence(m: re.Match[str], clause: str) -> Fact | None:
    place = _clean_object(m.group("place"), 6)
    if not place or re.match(r"^(?:a|the)\s+(?:house|flat|apartment|dorm)\b", place, _I):
        return _fact(_from_anchor(m, clause), FactKind.PERSONAL, 0.6) if place else None
    return _fact(f"User lives in {place}", FactKind.PERSONAL, 0.7, slot="residence", topic=place.lower())


def _hometown(m: re.Match[str], clause: str) -> Fact | None:
    place = _clean_object(m.group("place"), 5)
    verb = "grew up in" if m.group("verb").lower().startswith("grew") else "is from"
    return _fact(f"User {verb} {place}", FactKind.PERSONAL, 0.7, slot="hometown", topic=place.lower()) \
        if place else None


def _work(m: re.Match[str], clause: str) -> Fact | None:
    what = _clean_object(m.group("what"), 8)
    if not what:
        return None
    prep = m.group("prep").lower()
    slot = "job" if prep == "as" else "workplace"
    return _fact(f"User works {prep} {what}", FactKind.PERSONAL, 0.75, slot=slot, topic=what.lower())


def _new_job(m: re.Match[str], clause: str) -> Fact | None:
    what = _clean_object(m.group("what"), 8)
    prep = (m.group("prep") or "at").lower()
    slot = "job" if prep == "as" else "workplace"
    return _fact(f"User works {prep} {what}", FactKind.PERSONAL, 0.8, slot=slot, topic=what.lower()) if what else None


def _study(m: re.Match[str], clause: str) -> Fact | None:
    text = _clean_object(_from_anchor(m, clause), 14)
    return _fact(text, FactKind.PERSONAL, 0.7, slot="school") if text else None


def _name(m: re.Match[str], clause: str) -> Fact | None:
    name = _clean_object(m.group("name"), 3)
    if not name or not name[0].isupper():
        return None
    return _fact(f"User's name is {name}", FactKind.PERSONAL, 0.9, slot="name", topic=name.lower(), core=True)


def _age(m: re.Match[str], clause: str) -> Fact | None:
    return _fact(f"User is {m.group('age')} years old", FactKind.PERSONAL, 0.6, slot="age")


def _birthday(m: re.Match[str], clause: str) -> Fact | None:
    date = _clean_object(m.group("date"), 5)
    return _fact(f"User's birthday is {date}", FactKind.PERSONAL, 0.9, slot="birthday", core=True) if date else None


def _identity(m: re.Match[str], clause: str) -> Fact | None:
    what = _clean_object(m.group("what"), 7)
    if not what:
        return None
    head = what.split()[-1].lower()
    if _ADJECTIVE_ENDINGS.search(head) and not re.search(r"(?:er|or|ist|ian|ant|ent|ee|ive)$", head):
        return None  # "a bit tired", "a little worried": states, handled elsewhere
    if re.match(r"^(?:bit|little|lot|fan of)\b", what, _I):
        return None
    return _fact(f"User is a{'n' if m.group('article').lower() == 'an' else ''} {what}", FactKind.PERSONAL, 0.75,
                 slot="job", topic=what.lower())


def _fan(m: re.Match[str], clause: str) -> Fact | None:
    what = _clean_object(m.group("what"), 8)
    return _fact(f"User is a {m.group('big') or ''}fan of {what}".replace("  ", " "), FactKind.PREFERENCE, 0.5,
                 topic=_topic(what)) if what else None


def _likes(m: re.Match[str], clause: str) -> Fact | None:
    what = _clean_object(m.group("what"), 12)
    if not what:
        return None
    return _fact(_from_anchor(m, clause, m.end("what")), FactKind.PREFERENCE, 0.5, topic=_topic(what))


def _dislikes(m: re.Match[str], clause: str) -> Fact | None:
    what = _clean_object(m.group("what"), 12)
    if not what:
        return None
    verb = m.group("verb").lower()
    eats = re.match(r"(?:don't|do not|never|can't|cannot) (?:eat|drink)", verb)
    text = _from_anchor(m, clause, m.end("what"))
    return _fact(text, FactKind.HEALTH if eats else FactKind.PREFERENCE, 0.6 if eats else 0.5, topic=_topic(what),
                 negated=True)


def _favorite(m: re.Match[str], clause: str) -> Fact | None:
    thing, value = _clean_object(m.group("thing"), 4), _clean_object(m.group("value"), 8)
    if not thing or not value:
        return None
    return _fact(f"User's favorite {thing} is {value}", FactKind.PREFERENCE, 0.6, slot=f"favorite:{thing.lower()}",
                 topic=value.lower())


def _has_relation(m: re.Match[str], clause: str) -> Fact | None:
    text = _clean_object(_from_anchor(m, clause), 14)
    return _fact(text, FactKind.RELATIONSHIP, 0.7, topic=m.group("rel").lower()) if text else None


def _relation_fact(m: re.Match[str], clause: str) -> Fact | None:
    text = _clean_object(_from_anchor(m, clause), 16)
    if not text:
        return None
    importance = 0.8 if re.search(r"name|named|\bis\b", text, _I) else 0.6
    return _fact(text, FactKind.RELATIONSHIP, importance, topic=m.group("rel").lower())


def _plan(m: re.Match[str], clause: str) -> Fact | None:
    rest = _clean_object(m.group("rest"), 16)
    if not rest:
        return None
    verb = m.group("verb").lower().strip()
    timed = m.group("when") or _TIME.search(rest)
    if verb in ("want to", "wanna", "'ll", "will", "need to", "have to", "gotta", "hope to") and not timed:
        return None  # "I want to sleep", "I have to go": the moment's wishes, not plans
    when = (m.group("when").lower() + " ") if m.group("when") else ""
    text = to_third_person(clause[m.start("i"):m.end("rest")])
    if when:
        text = f"{text} {when.strip()}"
    return _fact(text, FactKind.PLAN, 0.5)


def _state(m: re.Match[str], clause: str) -> Fact | None:
    tail = clause[m.end("state"):]
    if re.match(r"\s*(?:for you|to hear|that you|about that|with that|lol)", tail, _I):
        return None
    text = _from_anchor(m, clause, m.end("state"))
    extra = re.match(r"\s+(?:about|with|at|because of|from) [^,.!?]{1,40}", tail, _I)
    if extra:
        text += extra.group(0)
    health = m.group("state").lower() in ("sick", "ill", "injured", "pregnant")
    marital = m.group("state").lower() in ("single", "engaged", "married", "divorced", "retired", "unemployed")
    if marital:
        return _fact(text, FactKind.PERSONAL, 0.7, slot="relationship-status" if m.group("state").lower() != "retired"
                     else "job", topic=m.group("state").lower())
    return _fact(text, FactKind.HEALTH if health else FactKind.STATE, 0.6 if health else 0.3,
                 topic=m.group("state").lower())


def _sleep(m: re.Match[str], clause: str) -> Fact | None:
    return _fact("User has trouble sleeping", FactKind.HEALTH, 0.6, topic="sleep")


_SUBJ = r"(?P<i>\bI)"
_ADV = r"(?:\s+(?:really|also|just|totally|absolutely|actually|honestly|still|do|seriously|kinda|kind of|pretty much|so|truly))*"

RULES: tuple[Rule, ...] = (
    Rule("no-longer", re.compile(_SUBJ + r"(?P<be>'m| am)?\s*(?:no longer|not (?:a |an )?(?=\w+ any ?more))"
                                  r"\s*(?P<what>[^,.!?]+?)(?:\s+any ?more)?$", _I), _no_longer),
    Rule("dont-anymore", re.compile(_SUBJ + r"\s+(?:don't|do not|dont)\s+(?P<what>[^,.!?]+?)\s+any ?more", _I),
          lambda m, c: _no_longer_plain(m, c)),
    Rule("quit", re.compile(_SUBJ + r"\s+(?:just |finally |recently )?(?:quit|stopped|gave up)\s+(?P<what>[^,.!?]+)", _I),
          _quit),
    Rule("moved", re.compile(r"(?P<i>\b(?:I|we))(?:'ve| have| just| recently|\s)*\s*(?:moved|relocated)\s+(?:to|into)\s+"
                              r"(?P<place>[^,.!?]+?)(?:\s+(?:last|this|a few|in|recently)\b.*)?$", _I), _moved),
    Rule("new-job", re.compile(_SUBJ + r"(?:'ve| have| just| recently|\s)*\s*(?:got|landed|started|accepted)\s+(?:a\s+)?(?:new\s+)?"
                                r"(?:job|position|role|internship)\s+(?P<prep>at|as|with)\s+(?P<what>[^,.!?]+)", _I),
          _new_job),
    Rule("allergy", re.compile(_SUBJ + r"(?:'m| am)\s+(?:very |severely |really |super |deathly |a bit |mildly )?allergic\s+to\s+"
                                r"(?P<what>[^,.!?]+)", _I), _allergy),
    Rule("allergy-noun", re.compile(_SUBJ + r"\s+(?:have|'ve got|got)\s+(?:a|an)\s+(?:severe |bad |mild )?(?P<what>[\w -]{2,25}?)"
                                     r"\s+allergy", _I), _allergy_noun),
    Rule("condition", re.compile(_SUBJ + r"(?:\s+(?:have|'ve got|got|suffer from|was diagnosed with|'ve been diagnosed with|"
                                  r"have been diagnosed with|live with|struggle with|deal with))\s+(?P<what>" + _CONDITIONS + r")\b", _I),
          _condition),
    Rule("sleep", re.compile(_SUBJ + r"\s+(?:can't|cannot|haven't been able to|have trouble|have been having trouble|"
                              r"haven't been|have a hard time)\s+(?:sleep|sleeping)", _I), _sleep),
    Rule("diet", re.compile(_SUBJ + r"(?:'m| am)\s+(?:a\s+|now\s+|strictly\s+|fully\s+)?(?P<diet>" + _DIETS + r")\b", _I),
          _diet),
    Rule("name", re.compile(r"(?:\b(?i:my name is|my name's|call me|I'm called|I am called))\s+(?P<name>[A-Z][\w'-]*"
                             r"(?:\s+[A-Z][\w'-]*)?)", 0), _name),
    Rule("age", re.compile(_SUBJ + r"(?:'m| am|'ll be| will be| just turned| turned)\s+(?P<age>\d{1,3})(?:\s+years?\s+old|"
                            r"\s*y/?o|\s+this year|\s*$|\s*[,.!])", _I), _age),
    Rule("birthday", re.compile(r"(?P<i>\bmy) birthday(?:'s| is)\s+(?:on\s+)?(?P<date>[^,.!?]+)|"
                                 r"\bI was born on\s+(?P<date2>[^,.!?]+)", _I),
          lambda m, c: _birthday(m, c) if m.group("date") else (
              _fact(f"User's birthday is {m.group('date2').strip()}", FactKind.PERSONAL, 0.9, slot="birthday",
                    core=True))),
    Rule("favorite", re.compile(r"(?P<i>\bmy) (?:all[- ]time |absolute )?fav(?:ou?rite)? (?P<thing>[\w ]{2,24}?)\s+(?:is|are|was)\s+"
                                 r"(?P<value>[^,.!?]+)", _I), _favorite),
    Rule("residence", re.compile(_SUBJ + r"(?:\s+(?:currently|now|still))?\s+(?:live|am living|'m living|stay|reside)\s+in\s+"
                                  r"(?P<place>[^,.!?]+?)(?:\s+(?:now|with|since|for)\b.*)?$", _I), _residence),
    Rule("hometown", re.compile(_SUBJ + r"(?:'m| am|\s+come|\s+originally come)?\s*(?:originally\s+)?(?P<verb>from|grew up in)\s+"
                                 r"(?P<place>[^,.!?]+)", _I), _hometown),
    Rule("work", re.compile(_SUBJ + r"(?:\s+(?:currently|now|still))?\s+work(?:ing)?\s+(?P<prep>at|for|as|in)\s+(?P<what>[^,.!?]+)",
                             _I), _work),
    Rule("study", re.compile(_SUBJ + r"(?:'m| am)?\s+(?:study|studying|majoring|in (?:my )?(?:first|second|third|final|last) year|"
                              r"a (?:freshman|sophomore|junior|senior|student|grad student|phd student))\b[^,.!?]*", _I),
          _study),
    Rule("plan", re.compile(r"(?:(?P<when>" + TIME_WORDS + r")[, ]+)?" + _SUBJ + r"(?P<verb>'m going to|'m gonna| am going to|"
                             r"'m planning to|'m planning on| am planning to| plan to| intend to|'m about to|'m thinking of|"
                             r"'m thinking about| want to| wanna| hope to|'ll| will| need to| have to| gotta|'m taking|"
                             r"'m starting|'m flying| am flying|'m visiting| am visiting|'m moving| am moving|'m getting|"
                             r"'m having| am having|'m running| am running|'ve decided to| decided to|'m applying)"
                             r"\s*(?P<rest>[^,.!?]{3,80})", _I), _plan),
    Rule("fan", re.compile(_SUBJ + r"(?:'m| am)\s+(?:a\s+)?(?:huge |big |massive )?(?P<big>)fan\s+of\s+(?P<what>[^,.!?]+)", _I), _fan),
    Rule("into", re.compile(_SUBJ + r"(?:'m| am)\s+(?:really |so |super |very |totally )?(?:into|obsessed with|passionate about|"
                             r"addicted to|crazy about|hooked on)\s+(?P<what>[^,.!?]+)", _I), _likes),
    Rule("dislikes", re.compile(_SUBJ + _ADV + r"\s+(?P<verb>hate|hates|dislike|can't stand|cannot stand|don't like|do not like|"
                                 r"don't enjoy|can't eat|cannot eat|don't eat|do not eat|never eat|don't drink|never drink|"
                                 r"avoid|detest|loathe|can't handle)\s+(?P<what>[^,.!?]+)", _I), _dislikes),
    Rule("likes", re.compile(_SUBJ + _ADV + r"\s+(?P<verb>love|loves|like|likes|enjoy|enjoys|adore|prefer|am fond of|'m fond of|"
                              r"dig|always eat|usually eat|often go|go|play|collect|watch|read|listen to)\s+"
                              r"(?P<what>[^,.!?]+)", _I),
          lambda m, c: _likes(m, c) if m.group("verb").lower() in ("love", "loves", "like", "likes", "enjoy", "enjoys",
                                                                     "adore", "prefer", "am fond of", "'m fond of", "dig")
          or re.search(r"\b(?:every|on weekends|a lot|regularly|daily|weekly)\b", m.group("what"), _I) else None),
    Rule("has-relation", re.compile(_SUBJ + r"\s+(?:have|'ve got|have got|got)\s+(?:a|an|two|three|four|\d+|one)\s+(?:\w+\s+){0,2}?"
                                     r"(?P<rel>" + RELATIONS + r")s?\b[^,.!?]*", _I), _has_relation),
    Rule("relation-fact", re.compile(r"(?P<i>\bmy)\s+(?:\w+\s+)?(?P<rel>" + RELATIONS + r")(?:\s+[A-Z][\w'-]+)?(?:'s name)?\s+(?:is|was|'s|works|lives|"
                                      r"likes|loves|has|just|got|named|called|turned|turns|will|wants|studies|plays)\b[^,.!?]*",
                                      _I), _relation_fact),
    Rule("identity", re.compile(_SUBJ + r"(?:'m| am)\s+(?:now\s+|currently\s+|actually\s+)?(?P<article>an?)\s+(?P<what>[\w -]+)$",
                                 _I), _identity),
    Rule("state", re.compile(_SUBJ + r"(?:'m| am|'ve been| have been| feel| am feeling|'m feeling| got| get)\s+(?:so |really |very |"
                              r"a bit |a little |kind of |kinda |pretty |super |extremely |totally |quite |just |still |"
                              r"always |constantly |now |recently |currently |feeling |)*(?P<state>" + _STATES + r")\b", _I), _state),
)

_PRONOUN_NAME = re.compile(r"^(?i:her|his|its|their)\s+name(?:'s| is)\s+(?P<name>[A-Z][\w'-]+)", 0)
_PRONOUN_SUBJECT = re.compile(r"^(?:she|he|they)(?:'s|\s+(?:is|has|works|lives|likes|loves|just|got|was|will|wants|"
                              r"studies|plays|turned|turns))\b[^,.!?]*", _I)
_PRONOUN_VERB = re.compile(r"^(?:she|he|they)(?:'s)?\s*", _I)


def last_relation_in(texts: list[str]) -> str | None:
    return last_relation(extract_english, texts)


def _no_longer_plain(m: re.Match[str], clause: str) -> Fact | None:
    what = _clean_object(m.group("what"), 8)
    if not what:
        return None
    kind = FactKind.HEALTH if re.search(r"\b(?:eat|drink|smoke)\b", what, _I) else FactKind.PREFERENCE
    topic = _topic(re.sub(r"^(?:like|love|enjoy|eat|drink)\s+", "", what, flags=_I))
    return _fact(f"User no longer {_third_person_verb(what.split()[0])} {' '.join(what.split()[1:])}".strip(),
                 kind, 0.7, topic=topic, negated=True)


_ABBREVIATIONS = re.compile(r"\b(St|Mr|Mrs|Ms|Dr|Jr|Sr|Mt|vs|etc|e\.g|i\.e)\.", _I)
# "I'm 34 and just started piano": the second half keeps the first half's subject.
_AND_VERB = (r",?\s+and\s+(?=(?:just|also|now|recently|currently|started|have|'ve|am|been|got|was|will|love|like|work|"
             r"live|go|play|teach|study|moved|grew)\b)")


def _clauses(text: str) -> list[tuple[str, bool]]:
    out: list[tuple[str, bool]] = []
    text = _ABBREVIATIONS.sub(lambda m: m.group(1), text)
    for sentence, mark in re.findall(r"([^.!?;\n]+(?:\.(?=\d)[^.!?;\n]*)*)([.!?;\n]*)", text):
        parts = re.split(r",?\s+(?:and|but|so|because|though|although)\s+(?=(?:I|I'm|I've|my|we)\b)|,\s+(?=(?:I|I'm|I've|my)\b)|"
                         r"\s+-\s+|,\s+but\s+|" + _AND_VERB, sentence)
        parts = [p.strip() for p in parts if p and p.strip()]
        for i, part in enumerate(parts):
            if i and not re.match(r"(?i:I|I'm|I've|I'd|I'll|my|we|you|he|she|they|it)\b", part) \
                    and re.match(r"(?i:I|I'm|I've|my)\b", parts[i - 1]):
                part = "I " + part
            out.append((part, "?" in mark and i == len(parts) - 1))
    return out


_CHAT_STARTS = re.compile(
    r"^(?:I|I'm|I am)\s+(?:think|guess|mean|know|see|agree|hope|wonder|feel like|was wondering|just wanted|want to know|"
    r"need help|need (?:some )?advice|need (?:a |some )?(?:idea|recommendation|suggestion)s?|would like|'d like|can't wait|"
    r"sure|glad|appreciate|understand|forgot|don't know|not sure|fine|good|okay|ok|here|back|curious|wondering|kidding|"
    r"joking|sorry|thinking|remember|said|told you|asked|was just|have no idea|get it|got it|do|did|am|love that|"
    r"like that|love it|like it|love this|like this|love your|like your|loved that|'ll try|'ll think|'ll let you|"
    r"'ll check|'ll see|will try|need to go|have to go|gotta go|'m off|bet|suppose|doubt|believe|promise|heard|"
    r"read (?:that|somewhere)|saw (?:that|a)|just (?:saw|read|heard)|really appreciate|can't believe|cannot believe|"
    r"was thinking|'ve been thinking|keep forgetting|messed up|misspoke|meant|not so sure|still kind of|in shock)\b", _I)
_MY_CHAT = re.compile(r"^my\s+(?:bad|pleasure|god|gosh|goodness|question|point|apologies|fault)\b", _I)
_TRAILER = re.compile(r"\s+(?:lol|haha+|though|honestly|which|but|because|so that|,?\s*and\s+(?:honestly|it|it's|that|"
                      r"this|they|he|she|then))\b.*$|\s*,\s*(?:lol|haha+|honestly|so|which|but).*$", _I)


def _generic(clause: str) -> Fact | None:
    """A first-person statement no specific rule knows, kept as said: "I teach high school chemistry in Ohio"."""
    if not re.match(r"(?i:I|I'm|I've|I'd|My)\b", clause) or _CHAT_STARTS.match(clause) or _MY_CHAT.match(clause):
        return None
    if re.match(r"(?i:I'd|I would)\b", clause):
        return None  # wishes and conditionals
    clause = _TRAILER.sub("", clause).strip(" ,")
    words = clause.split()
    if not (3 if not re.match(r"(?i:I'm)\s+\w[\w-]*-\w+$", clause) else 2) <= len(words) <= 18:
        return None  # two words only for a compound like "I'm left-handed"
    if re.search(r"\b(?:you|your)\b", clause, _I) and not re.search(r"\bthank", clause, _I):
        return None  # about the conversation with the assistant
    if re.search(r"\b(?:that|one|it|this|them|so)(?:\s+any ?more)?$", clause, _I) or re.match(r"(?i:my)\s+\w+'s\b", clause):
        return None  # "I'm not doing that anymore", "my friend's cat…": nothing definite about the user
    return _fact(to_third_person(clause), statement_kind(clause), 0.4)


def statement_kind(clause: str) -> FactKind:
    """A plan (said with a future), an event (something that happened), or neither."""
    if _FUTURE.search(clause):
        return FactKind.PLAN
    verb = re.match(r"(?i:I)\s+(?:(?:just|also|really|finally|already|actually)\s+)?(\w+)", clause)
    if _PAST_TIME.search(clause) or (verb and (verb.group(1).lower() in PAST_IRREGULAR
                                               or re.fullmatch(r"\w+ed", verb.group(1).lower()))):
        return FactKind.EVENT
    return FactKind.PLAN if _TIME.search(clause) else FactKind.OTHER


def extract_english(text: str, last_relation: str | None = None) -> list[Fact]:
    """Facts about the user in one English message; `last_relation` is who "she"/"her" refers to from earlier."""
    facts: list[Fact] = []
    for clause, asked in _clauses(text):
        for _ in range(2):
            clause = _LEADING.sub("", clause)
        if not clause or asked or _QUESTION_START.match(clause) or _HYPOTHETICAL.search(clause):
            continue
        subject = _PRONOUN_SUBJECT.match(clause)
        if subject and last_relation and last_relation not in _PETS | {"kids", "children", "parents"}:
            about_them = _clean_object(to_third_person(_PRONOUN_VERB.sub(f"my {last_relation} ", clause, count=1)), 16)
            if about_them:
                facts.append(_fact(about_them.replace(f"User's {last_relation} 's", f"User's {last_relation} is"),
                                   FactKind.RELATIONSHIP, 0.6, topic=last_relation))
            continue
        if re.match(r"^(?:you|your|he|she|they|it|we're not|people)\b", clause, _I):
            continue
        pronoun = _PRONOUN_NAME.match(clause)
        if pronoun and last_relation:
            name = pronoun.group("name")
            if facts and facts[-1].topic == last_relation and facts[-1].text.startswith("User has"):
                facts[-1].text += f" named {name}"
            else:
                facts.append(_fact(f"User's {last_relation}'s name is {name}", FactKind.RELATIONSHIP, 0.8,
                                   topic=last_relation))
            continue
        found = first_fact(RULES, clause) or _generic(clause)
        if found is not None:
            facts.append(found)
            if found.kind is FactKind.RELATIONSHIP and found.topic:
                last_relation = found.topic
    return unique_facts(facts, fold_case=True)
