"""Offline fact extraction for English: first-person statements rewritten as facts about the user.

The same idea as rules_zh: a rule recognises a statement in one clause ("I'm allergic to peanuts", "I moved to Berlin",
"I'm not vegetarian anymore") and says what kind of fact it is; questions, hypotheticals and passing remarks are skipped.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from jiyi.core.facts import Fact, FactKind
from jiyi.core.question_words import opener_alternation
from jiyi.core.rule_base import (
    ANIMAL,
    FEMALE,
    MALE,
    MOOD_SLOT,
    PERSON,
    PLURAL,
    THING,
    Mention,
    Rule,
    first_fact,
    habit_slot,
    last_relation,
    make_fact,
    named,
    resolve,
    unique_facts,
)

_I = re.IGNORECASE
# A clause that asks states nothing: "may I…", "might it…", "guess what" open questions here too.
_QUESTION_START = re.compile(r"^(?:" + opener_alternation("shall", "may", "might", "guess") + r")\b", _I)
_HYPOTHETICAL = re.compile(r"\b(?:if|unless|suppose|imagine|wish|would be|wonder|maybe|might|not sure|whether)\b", _I)
_LEADING = re.compile(r"^(?:oh|ah|well|so|and|but|also|btw|by the way|anyway|actually|honestly|haha+|lol|yeah|yes|"
                      r"no(?!\s+\w+ing\b)|ok(?:ay)?|hey|hi|hello|um+|hmm+|fun fact|guess what|just so you know|fyi|sorry|"
                      r"wait|sadly|unfortunately|luckily|fortunately|thankfully|happily|ugh|phew|update|news|good news|"
                      r"great news|big news|like I said|as I said|as I mentioned|like I mentioned|like I told you)\b[,!.:]?\s*", _I)
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
           r"pregnant|injured|unemployed|broke|single|engaged|married|divorced|retired|"
           # relief: how a mood ends ("feeling much more relaxed now")
           r"relaxed|calm(?:er)?|relieved|better(?!\s+(?:at|than|off|with|to)\b)|at ease|at peace|less stressed|"
           r"happier|content)")
_CONDITIONS = (r"(?:asthma|diabetes|type [12] diabetes|high blood pressure|hypertension|insomnia|migraines?|anxiety|depression|"
               r"adhd|celiac disease|ibs|arthritis|eczema|a heart condition|back pain|chronic pain|a bad back|allergies|"
               r"hay fever|covid|the flu|a cold|autism|dyslexia|epilepsy|cancer)")
_DIETS = r"(?:vegetarian|vegan|pescatarian|lactose intolerant|gluten[- ]free|gluten intolerant|on a diet|keto|halal|kosher)"
_ADJECTIVE_ENDINGS = re.compile(r"(?:ed|ing|ful|ous|ive|able|ible|al|ic|less|ish|y)$", _I)

_IRREGULAR_3RD = {"have": "has", "do": "does", "go": "goes", "am": "is", "'m": "is", "are": "is", "don't": "doesn't",
                  "haven't": "hasn't", "'ve": "has", "was": "was", "were": "was"}
_NO_INFLECTION = {"quit", "hurt", "cut", "put", "set", "hit", "let", "shut", "cost", "split",  # past or present
                  "can", "can't", "cannot", "could", "couldn't", "will", "won't", "would", "wouldn't", "should",
                  "shouldn't", "might", "must", "may", "did", "didn't", "used", "just", "also", "really", "still",
                  "never", "always", "usually", "often", "sometimes", "recently", "finally", "already", "totally",
                  "absolutely", "actually", "definitely", "only", "even", "kinda", "kind", "sort", "not", "no", "so", "too"}
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


# Present tenses that end like a past one: "I need a latte every day" → "User needs…", not "User need…".
_PRESENT_IN_ED = frozenset("need feed bleed breed speed proceed succeed exceed heed weed seed shred wed embed".split())


_TAKES_ES = re.compile(r"(?:sh|ch|x|z|ss|o)$")  # wash → washes, go → goes
_CONSONANT_Y = re.compile(r"[^aeiou]y$")  # study → studies (but play → plays)


def _third_person_verb(word: str) -> str:
    lower = word.lower()
    if lower in _IRREGULAR_3RD:
        return _IRREGULAR_3RD[lower]
    if lower in _NO_INFLECTION or lower in PAST_IRREGULAR:
        return word
    if lower.endswith("ss") or lower == "focus":  # "miss", "guess", "stress": a present tense, never an inflected one
        return word + "es"
    if (lower.endswith("ed") and lower not in _PRESENT_IN_ED) or lower.endswith("s"):
        return word  # past tense or already inflected
    if _TAKES_ES.search(lower):
        return word + "es"
    if _CONSONANT_Y.search(lower):
        return word[:-1] + "ies"
    return word + "s"


ADVERBS = _ADVERBS = (r"really|also|just|still|totally|absolutely|actually|usually|often|always|sometimes|recently|finally|"
            r"already|kinda|kind of|sort of|definitely|never|mostly|normally|generally|now|rarely|seldom|hardly ever")

_LEADING_I_AM = re.compile(r"^(?:I'm|I am)\b", _I)
_LEADING_I_HAVE = re.compile(r"^(?:I've|I have)\b", _I)
_LEADING_I_WILL = re.compile(r"^I'll\b|^I will\b", _I)
_LEADING_I_WOULD = re.compile(r"^I'd\b", _I)
_LEADING_I_WAS = re.compile(r"^I was\b", _I)
_LEADING_MY = re.compile(r"^My\b", _I)
# Any -ly word before the verb is an adverb ("I officially pulled out" → "User officially pulled out", not "User
# officiallies…"), but for the verbs that end so; "no longer" too ("I no longer care" → "User no longer cares").
_LY_VERBS = r"apply|reply|rely|fly|supply|multiply|ally|bully|tally|rally|comply|imply|belly|jelly"
_BEFORE_A_VERB = _ADVERBS + r"|no longer|(?!(?:" + _LY_VERBS + r")\b)\w+ly"
_LEADING_I_VERB = re.compile(r"^I\s+((?:" + _BEFORE_A_VERB + r")\s+)*(\w+(?:'t)?)\b", _I)  # I (really) love
_MY = re.compile(r"\bmy\b", _I)
_MYSELF = re.compile(r"\bmyself\b", _I)
_ME = re.compile(r"\bme\b", _I)
_I_AM = re.compile(r"\bI(?:'m| am)\b")
_WORD_I = re.compile(r"\bI\b")


def to_third_person(clause: str) -> str:
    """'I love my dog' → 'User loves User's dog'. The clause must start at its first-person subject."""
    text = clause.strip()
    text = _LEADING_I_AM.sub("User is", text)
    text = _LEADING_I_HAVE.sub("User has", text)
    text = _LEADING_I_WILL.sub("User will", text)
    text = _LEADING_I_WOULD.sub("User would", text)
    text = _LEADING_I_WAS.sub("User was", text)
    text = _LEADING_MY.sub("User's", text)
    match = _LEADING_I_VERB.match(text)
    if match:
        adverbs = text[2:match.start(2)]
        text = "User " + adverbs + _third_person_verb(match.group(2)) + text[match.end():]
    text = _MY.sub("User's", text)
    text = _MYSELF.sub("themselves", text)
    text = _ME.sub("User", text)
    text = _I_AM.sub("User is", text)
    text = _WORD_I.sub("User", text)
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


_TRAILING_AGO = re.compile(r"\s+(?:ago|last \w+|years? ago)$", _I)
_TOPIC_LEAD_WORD = re.compile(r"^(?:the|a|an|some|my|to|eating|eat|drinking|drink)\s+", _I)


def _topic(text: str) -> str:
    text = _TIME.sub("", text).strip()
    text = _TRAILING_AGO.sub("", text)
    text = _TOPIC_LEAD_WORD.sub("", text.strip())
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


_LEADING_A_AN = re.compile(r"^(?:a|an)\s+", _I)
_DIET_OR_CONSUMPTION = re.compile(_DIETS + r"|smok|drink|eat", _I)
_LEADING_LIKES = re.compile(r"^(?:likes?|loves?|enjoys?)\s+", _I)


def _no_longer(m: re.Match[str], clause: str) -> Fact | None:
    what = _clean_object(m.group("what"), 8)
    if not what:
        return None
    what = _LEADING_A_AN.sub("", what)
    verb = m.group("be")
    first, _, rest = what.partition(" ")
    text = f"User is no longer {what}" if verb else f"User no longer {_third_person_verb(first)} {rest}".rstrip()
    kind = FactKind.HEALTH if _DIET_OR_CONSUMPTION.search(what) else FactKind.PREFERENCE
    return _fact(text, kind, 0.7, topic=_topic(_LEADING_LIKES.sub("", what)), negated=True)


_THE_JOB = re.compile(r"^(?:my job|the job|work)$", _I)


def _quit(m: re.Match[str], clause: str) -> Fact | None:
    what = _clean_object(m.group("what"), 6)
    if not what or _THE_JOB.match(what):
        return _fact(_from_anchor(m, clause), FactKind.PERSONAL, 0.7, slot="workplace", topic="quit job") \
            if what else None
    key = activity_key(what)
    return _fact(f"User quit {what}", FactKind.HEALTH, 0.7, topic=_topic(what), negated=True,
                 slot=habit_slot(key) if key and key == _ACTIVITY_WORDS.get(what.split()[0].lower()) else None)


_RUN_BY_SOMEONE_ELSE = re.compile(r"\b(?:meeting|class|lesson|flight|order|subscription|appointment|call)s?\b", _I)
_LEADING_MY_OUR = re.compile(r"^(?:my|our)\b", _I)


def _called_off(m: re.Match[str], clause: str) -> Fact | None:
    """"We cancelled the Japan trip": a plan of the user's that is off (it replaces the plan, offline.decide)."""
    what = _clean_object(m.group("what"), 8)
    if not what or _RUN_BY_SOMEONE_ELSE.search(what):
        return None  # what someone else runs, or a service: not the user's own plan
    what = _LEADING_MY_OUR.sub("User's", what)
    return _fact(f"User {m.group('verb').lower()} {what}", FactKind.PLAN, 0.6)


def _moved(m: re.Match[str], clause: str) -> Fact | None:
    place = _clean_object(m.group("place"), 6)
    return _fact(f"User moved to {place}", FactKind.PERSONAL, 0.8, slot="residence", topic=place.lower()) \
        if place else None


_A_DWELLING = re.compile(r"^(?:a|the)\s+(?:house|flat|apartment|dorm)\b", _I)


def _residence(m: re.Match[str], clause: str) -> Fact | None:
    place = _clean_object(m.group("place"), 6)
    if not place or _A_DWELLING.match(place):
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


_AGENT_NOUN_ENDING = re.compile(r"(?:er|or|ist|ian|ant|ent|ee|ive)$")  # a teacher, an artist, a detective
_A_DEGREE = re.compile(r"^(?:bit|little|lot|fan of)\b", _I)


def _identity(m: re.Match[str], clause: str) -> Fact | None:
    what = _clean_object(m.group("what"), 7)
    if not what:
        return None
    head = what.split()[-1].lower()
    if _ADJECTIVE_ENDINGS.search(head) and not _AGENT_NOUN_ENDING.search(head):
        return None  # "a bit tired", "a little worried": states, handled elsewhere
    if _A_DEGREE.match(what):
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


_DOES_NOT_EAT = re.compile(r"(?:don't|do not|never|can't|cannot) (?:eat|drink)")


def _dislikes(m: re.Match[str], clause: str) -> Fact | None:
    what = _clean_object(m.group("what"), 12)
    if not what:
        return None
    verb = m.group("verb").lower()
    eats = _DOES_NOT_EAT.match(verb)
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


_NAMES_OR_SAYS_IS = re.compile(r"name|named|\bis\b", _I)


def _relation_fact(m: re.Match[str], clause: str) -> Fact | None:
    text = _clean_object(_from_anchor(m, clause), 16)
    if not text:
        return None
    importance = 0.8 if _NAMES_OR_SAYS_IS.search(text) else 0.6
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


_STATE_OF_THE_CHAT = re.compile(r"\s*(?:for you|to hear|that you|about that|with that|lol)", _I)
_STATE_CAUSE = re.compile(r"\s+(?:about|with|at|because of|from) [^,.!?]{1,40}", _I)
_STATE_WHEN = re.compile(r"\b(?:lately|recently|these days|this week|this month|all week|at the moment|right now|now)\b",
                         _I)
_TRAILING_PUNCTUATION = re.compile(r"[\s,.;:!?~)…-]+$")


def _state(m: re.Match[str], clause: str) -> Fact | None:
    tail = clause[m.end("state"):]
    if _STATE_OF_THE_CHAT.match(tail):
        return None
    text = _from_anchor(m, clause, m.end("state"))
    extra = _STATE_CAUSE.match(tail)
    if extra:
        text += extra.group(0)
    when = _STATE_WHEN.search(tail)
    if when and when.group(0).lower() not in text.lower():
        text += " " + when.group(0)  # the time a mood is said with is part of it ("so stressed lately")
    state = m.group("state").lower()
    health = state in ("sick", "ill", "injured", "pregnant")
    marital = state in ("single", "engaged", "married", "divorced", "retired", "unemployed")
    if marital:
        return _fact(text, FactKind.PERSONAL, 0.7, slot="relationship-status" if state != "retired"
                     else "job", topic=state)
    if health:
        return _fact(text, FactKind.HEALTH, 0.6, topic=state)
    return make_fact(_TRAILING_PUNCTUATION.sub("", text), FactKind.STATE, 0.3, topic=state, slot=MOOD_SLOT)


# --- habits, and what ends them ----------------------------------------------------------------------------------

FREQUENCY = (r"(?:every (?:single )?(?:day|morning|night|evening|afternoon|week|weekend|month|other day|monday|tuesday|"
             r"wednesday|thursday|friday|saturday|sunday)|each (?:day|morning|night|evening|week)|daily|nightly|weekly|"
             r"on weekends|on weekdays|(?:once|twice|three times|four times|five times|\d+ times|a few times|a couple "
             r"(?:of )?times) a (?:day|week|month)|most (?:days|mornings|nights|evenings))")
# One word for an activity however it is said, so that "no running for now" ends "I jog every morning".
_ACTIVITY_WORDS = {
    "run": "run", "runs": "run", "running": "run", "ran": "run", "jog": "run", "jogs": "run", "jogging": "run",
    "jogged": "run", "swim": "swim", "swims": "swim", "swimming": "swim", "swam": "swim", "laps": "swim",
    "cycle": "cycle", "cycles": "cycle", "cycling": "cycle", "bike": "cycle", "bikes": "cycle", "biking": "cycle",
    "smoke": "smoke", "smokes": "smoke", "smoking": "smoke", "smoked": "smoke", "cigarettes": "smoke",
    "cigarette": "smoke", "vape": "smoke", "vaping": "smoke", "lift": "gym", "lifting": "gym", "weights": "gym",
    "workout": "gym", "workouts": "gym", "gym": "gym", "drinking": "alcohol", "alcohol": "alcohol", "booze": "alcohol",
    "beer": "alcohol", "wine": "alcohol", "hike": "hike", "hiking": "hike", "hikes": "hike",
}
# Verbs whose object is the activity ("drink coffee" → coffee, "go to the gym" → gym, "play tennis" → tennis).
_LIGHT_VERBS = frozenset("drink drinks drank eat eats ate have has had take takes took play plays played do does did go "
                         "goes went practice practices practise read reads watch watches make makes get gets grab "
                         "grabs buy buys bought order orders need needs start starts hit hits walk walks".split())
_FILLER = frozenset("a an the some my of to for at in on with cup cups glass glasses mug mugs bottle bottles shot shots "
                    "few couple bit little lot k km mile miles minutes minute hour hours out up again another one two "
                    "three four five six seven eight nine ten half first morning evening quick big small large iced hot "
                    "fresh new usual daily".split())


_LETTERS = re.compile(r"[A-Za-z]+")
_FREQUENCY_WORD = re.compile(FREQUENCY[3:-1])  # a word that only says how often ("daily", "weekly")
_DAY_WORD = re.compile(r"every|each|day|week|night|month")
_ING_WORD = re.compile(r"\w+(?:ing)")
_PLURAL_WORD = re.compile(r"\w+[^s]s")


def activity_key(phrase: str) -> str | None:
    """The activity of a routine or a restriction: "jog 5k every morning" → run, "drink two cups of coffee" →
    coffee, "go to the gym" → gym; None when nothing is named."""
    words: list[str] = [w.lower() for w in _LETTERS.findall(phrase)]
    words = [w for w in words if not _FREQUENCY_WORD.fullmatch(w)]
    while words and (words[0] in _FILLER or words[0] in ("really", "also", "just", "still", "usually", "always",
                                                         "now", "even", "never", "to")):
        words = words[1:]
    if not words:
        return None
    head = words[0]
    if head in _LIGHT_VERBS and head not in _ACTIVITY_WORDS:
        rest = [w for w in words[1:] if w not in _FILLER and not _DAY_WORD.fullmatch(w)]
        if not rest:
            return "alcohol" if head in ("drink", "drinks", "drank") else None  # "I can't drink for now"
        head = rest[0]
    if head in _ACTIVITY_WORDS:
        return _ACTIVITY_WORDS[head]
    if _ING_WORD.fullmatch(head) and len(head) > 5:
        head = head[:-3]
        head = head[:-1] if len(head) > 2 and head[-1] == head[-2] else head
    elif _PLURAL_WORD.fullmatch(head) and len(head) > 3:
        head = head[:-1]  # lattes → latte
    return head


_SAID_BEFORE = re.compile(r"\s*(?:it|that|this|them|one)\b", _I)


def _habit(m: re.Match[str], clause: str) -> Fact | None:
    """"I jog 5k every morning", "I drink coffee every day now": a routine, one per activity (slot habit:<activity>)."""
    verb = m.group("verb").lower()
    if _SAID_BEFORE.match(m.group("obj")):
        return None  # "I could eat it every day": about something said before, not a routine
    if verb in ("could", "would", "can", "will", "should", "might", "must", "may", "'d", "wish", "am", "'m", "was", "feel", "get", "love", "like", "hate", "enjoy", "think", "want", "wish", "try",
                "work", "live", "talk", "chat", "see", "miss", "worry", "cry", "wake", "sleep", "come", "text", "call"):
        return None  # a state, a liking (other rules), or not an activity
    key = activity_key(verb + " " + m.group("obj"))
    if not key or len(key) < 3:
        return None
    text = _clean_object(_from_anchor(m, clause), 16)
    return _fact(text, FactKind.PREFERENCE, 0.5, topic=key, slot=habit_slot(key)) if text else None


_STOPPED = (r"(?:can't|cannot|can no longer|won't be able to|am not allowed to|'m not allowed to|not allowed to|"
            r"shouldn't|should not|had to stop|have to stop|have stopped|'ve stopped|stopped|had to give up|gave up|"
            r"have given up|'ve given up|'m taking a break from|am taking a break from|'m off|am off)")
_FOR_NOW = (r"(?:for now|for a while|anymore|any more|at the moment|until [^,.!?]+|"
            r"for (?:a|one|two|three|four|six|\d+|a few|several|a couple of) (?:days?|weeks?|months?))")


_NOT_AN_ACTIVITY = re.compile(r"^(?:wait|believe|stop|help|remember|decide|sleep|stand|tell|say|think|do|go)$", _I)
_FOR_USER = re.compile(r"\bfor User\b")
_LEADING_NO = re.compile(r"^no\s+(\w+)", _I)


def _stopped(m: re.Match[str], clause: str) -> Fact | None:
    """"I can't run for now", "no running for a while": the activity is off; it ends the routine (same habit slot)."""
    key = activity_key(m.group("act"))
    if not key or _NOT_AN_ACTIVITY.match(m.group("act").split()[0]):
        return None
    start = max(m.start("i"), 0)
    said = clause[start:]
    if not m.group("i") and not _FOR_USER.search(said):
        # "no swimming until it clears up" → No swimming for User until it clears up
        said = _LEADING_NO.sub(lambda n: f"No {n.group(1)} for User", said)
    text = _until_now(to_third_person(said) if m.group("i") else said)
    return make_fact(text, FactKind.HEALTH, 0.6, topic=key, slot=habit_slot(key), negated=True) if text else None


_ENDS_FOR_NOW = re.compile(r"\bfor now[\s,.!]*$", _I)


def _until_now(text: str) -> str | None:
    """The text of a restriction, its "for now" kept (a trailing "now" is dropped from other facts)."""
    cleaned = _clean_object(text, 16)
    if cleaned and _ENDS_FOR_NOW.search(text):
        cleaned += " now" if cleaned.lower().endswith(" for") else ""
    return cleaned


_STARTS_FIRST_PERSON = re.compile(r"(?i:I|I'm|I've|my)\b")
_STARTS_WITH_I = re.compile(r"(?i:I)\b")
_AN_INSTRUCTION = re.compile(r"(?i:to|not to)\b")


def _doctor(m: re.Match[str], clause: str) -> Fact | None:
    """"The doctor says no running for now" → User's doctor says no running for now (it ends the running routine);
    "my doctor told me I have high blood pressure" → User has high blood pressure."""
    rest = m.group("rest").strip()
    said = rest if _STARTS_FIRST_PERSON.match(rest) else "I " + rest
    inner = first_fact(RULES, said)
    stop = _STOP_PHRASE.match(rest)
    if stop or (inner is not None and inner.negated and inner.slot):
        key = activity_key(stop.group("act")) if stop else inner.topic  # type: ignore[union-attr]
        if not key:
            return None
        text = _until_now("User's doctor says " + (to_third_person(rest) if _STARTS_WITH_I.match(rest) else rest))
        return make_fact(text, FactKind.HEALTH, 0.7, topic=key, slot=habit_slot(key), negated=True) if text else None
    if inner is not None:
        inner.kind, inner.importance = FactKind.HEALTH, max(inner.importance, 0.7)
        return inner
    if _AN_INSTRUCTION.match(rest):  # an instruction: "told me to cut down on salt"
        return _fact(f"User's doctor told User {rest}", FactKind.HEALTH, 0.6)
    return None


_STOP_PHRASE = re.compile(r"^(?:no|not to|to stop|to avoid|to quit|to cut out|stop|avoid)\s+(?P<act>\w+(?:\s+\w+)?)", _I)
_BODY = (r"(?:(?:left|right|lower|upper)\s+)?(?:knee|ankle|wrist|back|shoulder|arm|leg|foot|hand|finger|toe|neck|hip|"
         r"hamstring|calf|acl|meniscus|rib|elbow|achilles|groin|thumb)s?")


_CONJUNCTION = re.compile(r"\s+(?:so|and|but|because)\b")


def _injury(m: re.Match[str], clause: str) -> Fact | None:
    rest = _clean_object(clause[m.end("part"):], 6) or ""
    rest = _CONJUNCTION.split(rest)[0]
    text = f"User {m.group('verb').lower()} their {m.group('part')}" + (f" {rest}" if rest else "")
    return _fact(text, FactKind.HEALTH, 0.7, topic=f"{m.group('part').lower()} injury")


_STARTS_WITH_PRONOUN = re.compile(r"(?i:it|this|that|he|she|they|you)\b")


def _necessity(m: re.Match[str], clause: str) -> Fact | None:
    """"Coffee has become a daily must for me", "I can't start my day without coffee": a habit said as a need."""
    thing = _clean_object(m.group("thing") or m.group("thing2"), 4)
    if not thing or _VAGUE.match(thing) or _STARTS_WITH_PRONOUN.match(thing):
        return None
    key = activity_key(thing)
    if not key:
        return None
    text = to_third_person(clause[m.start("i"):]) if m.group("thing2") else _ME.sub("User", clause)
    return _fact(text, FactKind.PREFERENCE, 0.6, topic=key, slot=habit_slot(key))


def _sleep(m: re.Match[str], clause: str) -> Fact | None:
    return _fact("User has trouble sleeping", FactKind.HEALTH, 0.6, topic="sleep")


# "I go hiking on weekends", "I play chess regularly": a routine (other verbs of the likes rule are likings).
_REGULARLY = re.compile(r"\b(?:every|on weekends|a lot|regularly|daily|weekly)\b", _I)

_SUBJ = r"(?P<i>\bI)"
_ADV = r"(?:\s+(?:really|also|just|totally|absolutely|actually|honestly|still|do|seriously|kinda|kind of|pretty much|so|truly))*"

RULES: tuple[Rule, ...] = (
    Rule("doctor", re.compile(r"^(?:the |my |our )?(?:doctor|doc|gp|physio|physiotherapist|dentist|cardiologist)(?:'s)?\s+"
                               r"(?:says|said|told me|tells me|wants me|has told me|advised me|advises me|recommended|"
                               r"recommends|ordered me|thinks|put me on)(?:\s+that)?\s*(?P<rest>[^.!?]{3,80})", _I), _doctor),
    Rule("stopped", re.compile(_SUBJ + r"(?:'m| am)?\s*(?:(?:still|currently|now|temporarily|basically|just)\s+)?" + _STOPPED +
                                r"\s+(?P<act>[a-z]+(?:\s+[a-z]+)?)\b[^,.!?]*?(?:\s+" + _FOR_NOW + r")[^,.!?]*$", _I),
          _stopped),
    Rule("no-more", re.compile(r"^(?P<i>)no\s+(?P<act>\w+ing)\b(?:\s+(?!for\s+now)\w+){0,3}?\s+" + _FOR_NOW + r"\b[^,.!?]*$", _I), _stopped),
    Rule("injury", re.compile(_SUBJ + r"\s+(?:just\s+|recently\s+|badly\s+)?(?P<verb>hurt|injured|broke|sprained|twisted|pulled|"
                               r"tore|dislocated|fractured|busted|messed up|strained)\s+my\s+(?P<part>" + _BODY + r")\b", _I),
          _injury),
    Rule("necessity", re.compile(r"^(?P<thing>[\w' -]{2,25}?)\s+(?:has become|has turned into|is now|is|became)\s+"
                                  r"(?:a |an |my |part of my )?(?:daily |morning |absolute |total )?(?:must|must-have|"
                                  r"necessity|essential|ritual|routine|habit|non-negotiable|staple)\b[^,.!?]*$|"
                                  + _SUBJ + r"\s+can't\s+(?:start|get through|survive|function|live|go a day)\s*(?:my|the|a)?"
                                  r"\s*(?:day|morning|mornings|days|week)?\s+without\s+(?:my\s+)?(?P<thing2>[^,.!?]+)", _I),
          _necessity),
    Rule("fan-here", re.compile(r"^(?P<i>)(?:a\s+)?(?P<big>huge|big|massive|die-hard|lifelong|longtime)?\s*"
                                 r"(?P<what>[A-Z][\w'.&-]*(?:\s+[A-Z][\w'.&-]*){0,3})\s+fan\s+here\b", 0),
          lambda m, c: _fact(f"User is a {(m.group('big') + ' ') if m.group('big') else ''}{m.group('what')} fan",
                             FactKind.PREFERENCE, 0.5, topic=_topic(m.group("what")))),
    Rule("no-longer", re.compile(_SUBJ + r"(?P<be>'m| am)?\s*(?:no longer|not (?:a |an )?(?=\w+ any ?more))"
                                  r"\s*(?P<what>[^,.!?]+?)(?:\s+any ?more)?$", _I), _no_longer),
    Rule("dont-anymore", re.compile(_SUBJ + r"\s+(?:don't|do not|dont)\s+(?P<what>[^,.!?]+?)\s+any ?more", _I),
          lambda m, c: _no_longer_plain(m, c)),
    Rule("quit", re.compile(_SUBJ + r"\s+(?:just |finally |recently )?(?:quit|stopped|gave up)\s+(?P<what>[^,.!?]+)", _I),
          _quit),
    Rule("called-off", re.compile(r"(?P<i>\b(?:I|we))(?:'ve| have| just| finally| had to|\s)*\s*(?P<verb>cancell?ed|called off|"
                                   r"postponed|pushed back)\s+(?P<what>(?:the|my|our)\s+[^,.!?]+)", _I), _called_off),
    Rule("moved", re.compile(r"(?P<i>\b(?:I|we))(?:'ve| have| just| recently|\s)*\s*(?:moved|relocated)\s+(?:to|into)\s+"
                              r"(?P<place>[^,.!?]+?)(?:\s+(?:last|this|a few|in|recently|for|because|with|to be|since)\b.*)?$", _I), _moved),
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
                            r"\s*y/?o|\s+this year|\s*$|\s*[,.!]|\s+(?:last|on|yesterday|today|in)\b)", _I), _age),
    Rule("birthday", re.compile(r"(?P<i>\bmy) birthday(?:'s| is)\s+(?:on\s+)?(?P<date>[^,.!?]+)|"
                                 r"\bI was born on\s+(?P<date2>[^,.!?]+)", _I),
          lambda m, c: _birthday(m, c) if m.group("date") else (
              _fact(f"User's birthday is {m.group('date2').strip()}", FactKind.PERSONAL, 0.9, slot="birthday",
                    core=True))),
    Rule("favorite", re.compile(r"(?P<i>\bmy) (?:all[- ]time |absolute )?fav(?:ou?rite)? (?P<thing>[\w ]{2,24}?)\s+(?:is|are|was)\s+"
                                 r"(?P<value>[^,.!?]+)", _I), _favorite),
    Rule("residence", re.compile(_SUBJ + r"(?:\s+(?:currently|now|still))?\s+(?:live|am living|'m living|stay|reside)\s+in\s+"
                                  r"(?P<place>[^,.!?]+?)(?:\s+(?:now|with|since|for)\b.*|,\s*(?:in|near|by|on)\b.*)?$", _I), _residence),
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
          or _REGULARLY.search(m.group("what")) else None),
    Rule("has-relation", re.compile(_SUBJ + r"\s+(?:have|'ve got|have got|got)\s+(?:a|an|two|three|four|\d+|one)\s+(?:\w+\s+){0,2}?"
                                     r"(?P<rel>" + RELATIONS + r")s?\b[^,.!?]*", _I), _has_relation),
    Rule("relation-fact", re.compile(r"(?P<i>\bmy)\s+(?:\w+\s+)?(?P<rel>" + RELATIONS + r")(?:\s+[A-Z][\w'-]+)?(?:'s name)?\s+(?:is|was|'s|works|lives|"
                                      r"likes|loves|has|just|got|named|called|turned|turns|will|wants|studies|plays)\b[^,.!?]*",
                                      _I), _relation_fact),
    Rule("identity", re.compile(_SUBJ + r"(?:'m| am)\s+(?:now\s+|currently\s+|actually\s+)?(?P<article>an?)\s+(?P<what>[\w -]+)$",
                                 _I), _identity),
    Rule("state", re.compile(_SUBJ + r"(?:'m| am|'ve been| have been| feel| am feeling|'m feeling| got| get| felt| was)\s+"
                              r"(?:so |really |very |a bit |a little |kind of |kinda |pretty |super |extremely |totally |quite |"
                              r"just |still |always |constantly |now |recently |currently |feeling |much |much more |more |"
                              r"a lot |a lot more |so much |so much more |way |way more |far |far more |finally |"
                              r"lately |)*(?P<state>" + _STATES + r")\b", _I), _state),
    Rule("habit", re.compile(_SUBJ + r"(?:\s+(?:usually|always|still|now|also|normally|generally|basically|pretty much|"
                              r"really|religiously))*\s+(?P<verb>[a-z]+)\b(?P<obj>[^,.!?]{0,40}?)\s*\b" + FREQUENCY +
                              r"\b[^,.!?]*$", _I), _habit),
)

_PRONOUN_NAME = re.compile(r"^(?P<p>(?i:her|his|its|their))\s+name(?:'s| is)\s+(?P<name>[A-Z][\w'-]+)", 0)


# --- who "she" / "his" / "it" is ----------------------------------------------------------------------------------

_FEMALE = frozenset("mom mother mum wife girlfriend fiancee fiancée sister daughter grandma grandmother aunt niece "
                    "stepmom stepdaughter".split())
_MALE = frozenset("dad father husband boyfriend fiance fiancé brother son grandpa grandfather uncle nephew stepdad "
                  "stepson".split())
_PLURAL_RELATIONS = frozenset("parents siblings kids children twins".split())
_MENTION = re.compile(
    r"\b(?:(?P<my>my|our)\s+|(?P<have>(?:have|'ve got|have got|got|adopted|rescued|has)\s+(?:a|an|one|two|three|four|\d+)\s+)|"
    r"(?P<other>[\w-]+'s|his|her|their|your|a|an|the)\s+)?"
    r"(?:(?:new|old|little|big|younger|older|baby|twin|best|eldest|oldest|youngest|step|rescue|adopted|"
    r"\w+-year-old|\d+-year-old)\s+){0,2}(?P<rel>" + RELATIONS[3:-1] + r")(?P<plural>s)?\b"
    r"(?:\s+(?:named|called)\s+(?P<name>(?-i:[A-Z][\w'-]+))|,?\s+(?P<name2>(?-i:[A-Z][a-z][\w'-]*))\b)?", _I)
_THING = re.compile(r"(?:\bmy|\bI\s+(?:just\s+|finally\s+)?(?:bought|got|ordered|adopted)\s+(?:a|an))\s+"
                    r"(?:(?:new|old|first|own|little|big|brand new|favorite|favourite|used|second-hand)\s+)?(?P<thing>[\w-]+)\b",
                    _I)
_NOT_THINGS = frozenset("bad god gosh goodness pleasure apologies fault point question own way life mind day turn time idea "
                        "opinion head heart name birthday guess side best part job work friends family mood fave "
                        "favorite favourite self".split())
_NOT_NAMES = frozenset("I I'm Im And But So Is Was Has Just".split())


def _gender(noun: str, plural: bool = False) -> str:
    noun = noun.lower()
    if plural or noun in _PLURAL_RELATIONS:
        return PLURAL
    if noun in _PETS:
        return ANIMAL
    return FEMALE if noun in _FEMALE else MALE if noun in _MALE else PERSON


_STARTS_I_SUBJECT = re.compile(r"(?i:I|I've|I'm)\b")
_SOMEONE_ELSES = re.compile(r"\b(?:friend|coworker|neighbor|neighbour|colleague)'s\b", _I)
_RELATION_WORD = re.compile(RELATIONS)


def _mentions(clause: str) -> list[Mention]:
    """The people, pets and things a clause names, in order: "I have a cat named Luna" → my cat (named Luna)."""
    found: list[tuple[int, Mention]] = []
    for m in _MENTION.finditer(clause):
        noun = m.group("rel").lower()
        other = (m.group("other") or "").lower()
        owned = bool(m.group("my") or m.group("have")) or (
            other in ("a", "an") and _STARTS_I_SUBJECT.match(clause) is not None
            and not _SOMEONE_ELSES.search(clause))
        name = m.group("name") or m.group("name2")
        if name in _NOT_NAMES:
            name = None
        plural = bool(m.group("plural"))
        found.append((m.start("rel"), Mention(f"my {noun}{'s' if plural else ''}", noun, _gender(noun, plural), owned,
                                              name)))
    for m in _THING.finditer(clause):
        thing = m.group("thing").lower()
        if thing in _NOT_THINGS or _RELATION_WORD.fullmatch(thing) or any(p == m.start("thing") for p, _ in found):
            continue
        found.append((m.start("thing"), Mention(f"my {thing}", thing, THING, True)))
    return [mention for _, mention in sorted(found, key=lambda item: item[0])]


def mentions_in(text: str) -> list[Mention]:
    """Everyone and everything the user named in a message, in the order named."""
    return [m for clause, _, _ in _clauses(text) for m in _mentions(clause)]


_PRONOUN = re.compile(r"^(?P<p>she|he|it|they)(?P<verb>'s|'ll|'d|'re|'ve)?\b", _I)
_POSSESSIVE = re.compile(r"^(?P<p>her|his|its|their)\s+(?=[a-z])", _I)
_PRONOUN_GENDER = {"she": FEMALE, "her": FEMALE, "he": MALE, "his": MALE, "him": MALE, "it": THING, "its": THING,
                   "they": PLURAL, "their": PLURAL, "them": PLURAL}
_CONTRACTED = {"'s": " is", "'ll": " will", "'d": " would", "'re": " are", "'ve": " have"}
# "She's so cute", "it was fun": an exclamation about the moment, not a fact about them.
_ADMIRING = re.compile(r"^\s*(?:is|was|'s|looks|sounds|seems|are|were)\s+(?:so|too|really|very|super|such|kinda|pretty|"
                       r"a bit|absolutely|totally|just)?\s*(?:a\s+)?(?:cute|annoying|great|awesome|fine|okay|ok|good|bad|"
                       r"terrible|amazing|adorable|funny|hilarious|crazy|weird|nice|cool|fun|sweet|lovely|beautiful|"
                       r"gorgeous|precious|silly|boring|hard|tough|rough|insane|wild|a lot|the best|the worst)\b", _I)


_HAS_BEEN = re.compile(r"\s+(?:been|got|had|gotten)\b", _I)
_STARTS_CAPITALISED = re.compile(r"^(?-i:[A-Z][\w'-]+)\b")


def _resolved(clause: str, mentions: Sequence[Mention], fresh: Sequence[Mention]) -> str | None:
    """The clause with "she" / "his" / "it" (or a pet's or person's name) at its start replaced by who it is
    ("my daughter …"); None when it is not about anyone of the user's. A thing ("it" → my car) only from this
    message or the one before (`fresh`)."""
    m = _PRONOUN.match(clause) or _POSSESSIVE.match(clause)
    if m:
        pronoun = m.group("p").lower()
        gender = _PRONOUN_GENDER[pronoun]
        who = resolve(fresh if gender == THING else mentions, gender)
        rest = clause[m.end():]
        if who is None or (gender == THING and who.gender == THING and _ADMIRING.match(rest)):
            return None
        if _ADMIRING.match(_CONTRACTED.get((m.groupdict().get("verb") or "").lower(), "") + rest):
            return None
        if m.re is _POSSESSIVE:
            return f"{who.phrase}'s {rest}"
        verb = (m.group("verb") or "").lower()
        if verb == "'s" and _HAS_BEEN.match(rest):
            verb = "'ve"  # she's been → has been
        plural = who.gender == PLURAL
        be = {"'s": " is", "'re": " are"}.get(verb, _CONTRACTED.get(verb, ""))
        if be == " is" and plural:
            be = " are"
        if verb == "'ve" and not plural:
            be = " has"
        return who.phrase + be + rest
    first = _STARTS_CAPITALISED.match(clause)
    if first:
        who = named(mentions, first.group(0))
        if who is not None and not _ADMIRING.match(clause[first.end():]):
            return f"{who.phrase} {clause}"  # "Ethan starts kindergarten" → my son Ethan starts kindergarten
    return clause


_OBJECT_PRONOUN = re.compile(r"\b(?P<p>her|him|them|his|their)\b(?P<next>\s+[a-z]+)?", _I)
_NOT_NOUNS = frozenset("to for with about at in on and or but so too again back up out off a an the some that this "
                       "yesterday today tonight now then every lol haha much more sometimes".split())


_ABOUT_THE_USER = re.compile(r"(?i:I|I'm|I've|I'll|I'd|my)\b")


def _objects_resolved(clause: str, mentions: Sequence[Mention]) -> str:
    """"I'm learning recipes for her" → … for my mom: a pronoun inside a clause about the user, replaced by who."""
    if not _ABOUT_THE_USER.match(clause):
        return clause

    def replace(m: re.Match[str]) -> str:
        pronoun = m.group("p").lower()
        who = resolve(mentions, _PRONOUN_GENDER[pronoun])
        if who is None:
            return m.group(0)
        following = m.group("next") or ""
        possessive = pronoun in ("his", "their") or (pronoun == "her" and following
                                                     and following.strip().lower() not in _NOT_NOUNS)
        return who.phrase + ("'s" if possessive else "") + following

    return _OBJECT_PRONOUN.sub(replace, clause)


def last_relation_in(texts: list[str]) -> str | None:
    return last_relation(extract_english, texts)


_EATS_DRINKS_SMOKES = re.compile(r"\b(?:eat|drink|smoke)\b", _I)
_LEADING_LIKE_OR_EAT = re.compile(r"^(?:like|love|enjoy|eat|drink)\s+", _I)


def _no_longer_plain(m: re.Match[str], clause: str) -> Fact | None:
    what = _clean_object(m.group("what"), 8)
    if not what:
        return None
    kind = FactKind.HEALTH if _EATS_DRINKS_SMOKES.search(what) else FactKind.PREFERENCE
    topic = _topic(_LEADING_LIKE_OR_EAT.sub("", what))
    return _fact(f"User no longer {_third_person_verb(what.split()[0])} {' '.join(what.split()[1:])}".strip(),
                 kind, 0.7, topic=topic, negated=True)


_ABBREVIATIONS = re.compile(r"\b(St|Mr|Mrs|Ms|Dr|Jr|Sr|Mt|vs|etc|e\.g|i\.e)\.", _I)
# "I'm 34 and just started piano": the second half keeps the first half's subject.
_DROPPED_SUBJECT = (r"(?:(?:finally|now|really|so|honestly|actually|just|still)\s+)?"
                    r"(?:grew|went|moved|started|got|been|looking|living|working|studying|lived|worked|studied|born|raised|just|now|currently|trying|hoping|planning|feeling|feel|felt|hurt|broke|bought|had|"
                    r"doing|taking|going|getting|learning|training|saving|headed|heading)")
_AND_VERB = (r",?\s+and\s+(?=(?:just|also|now|recently|currently|started|have|'ve|am|been|got|was|will|love|like|work|"
             r"live|go|play|teach|study|moved|grew)\b)")
# A sentence and the marks that end it; a dot between digits ("3.5 miles") does not end one.
_SENTENCE = re.compile(r"([^.!?;\n]+(?:\.(?=\d)[^.!?;\n]*)*)([.!?;\n]*)")
_SUPPOSITION = re.compile(r"\s*(?:if|unless|suppose|imagine|when)\b", _I)
_CLAUSE_BREAK = re.compile(
    r",?\s+(?:and|but|so|because|though|although)\s+(?=(?:I|I'm|I've|my|we)\b)|,\s+(?=(?:I|I'm|I've|my)\b)|"
    r",\s+(?=(?:she|he|they)(?:'s|'re|'ll)?\s)|"
    r",?\s+since\s+(?=(?:I|my)\b(?!\s+was\b))|"
    r"\s+-\s+|,\s+but\s+|,\s+so\s+|,\s+(?=(?:(?:is|isn't|are|aren't|do|does|don't|did|can|could|would|"
    r"will|should)\s+(?:that|it|this|you|i|we|they|there)\b|right\b|you know\b|what do you|how about|"
    r"any\s))|,\s+(?=" + _DROPPED_SUBJECT + r"\b)|"
    r",\s+(?=(?:the|my|our)\s+(?:doctor|doc|gp|physio|physiotherapist|dentist|therapist)\b)|"
    r",\s+(?=no\s+\w+ing\b)|"
    + _AND_VERB)
_MY_SOMEONE_NAMED = re.compile(r"(?i:my)\s+[a-z]+(?:\s+(?-i:[A-Z][a-z]+))?")  # "My girlfriend Sarah"
_STARTS_WITH_WORD_I = re.compile(r"I\b")
_HAS_OWN_SUBJECT = re.compile(r"(?i:I|I'm|I've|I'd|I'll|my|we|you|he|she|they|it|please|thanks|thank|lol|haha|"
                              r"sorry|no|yes|yeah|ok|okay|which|that|this|there|what|how|why|the|a|an)\b")
_GERUND_SUBJECT = re.compile(r"(?i:\w+ing\b[^,]*?\s(?:is|was|are|makes|gets|can)\b)")


def _clauses(text: str) -> list[tuple[str, bool, int]]:
    """Clauses with whether each is the asking part of a question and its sentence's number."""
    out: list[tuple[str, bool, int]] = []
    text = _ABBREVIATIONS.sub(lambda m: m.group(1), text)
    for number, (sentence, mark) in enumerate(_SENTENCE.findall(text)):
        if _SUPPOSITION.match(sentence) and "," in sentence:
            continue  # "If I get the job, I'll move to Berlin": the whole sentence is a supposition
        parts = _CLAUSE_BREAK.split(sentence)
        parts = [p.strip() for p in parts if p and p.strip()]
        if parts:
            parts[0] = _subject_dropped(_LEADING.sub("", _LEADING.sub("", parts[0])))
        joined: list[str] = []
        for part in parts:
            if joined and _MY_SOMEONE_NAMED.fullmatch(joined[-1]) and _STARTS_WITH_WORD_I.match(part):
                joined[-1] += " and " + part  # "My girlfriend Sarah and I have been together": one subject
            else:
                joined.append(part)
        for i, part in enumerate(joined):
            if i and not _HAS_OWN_SUBJECT.match(part) \
                    and (_STARTS_FIRST_PERSON.match(joined[i - 1]) or _FEELING.match(part)) \
                    and not _GERUND_SUBJECT.match(part) \
                    and (not _NOT_A_VERB.match(part) or _FEELING.match(part)):
                # "running in cold air is rough": a gerund subject, not a dropped "I'm"; "so many people came",
                # "another rejection": no verb to give a subject to
                part = _with_subject(part)
            out.append((part, "?" in mark and i == len(joined) - 1, number))
    return out


# Words a clause with a dropped "I" does not start with: determiners, quantifiers, conjunctions, prepositions.
_NOT_A_VERB = re.compile(
    r"(?i:another|other|many|much|some|any|all|every|each|no|not|very|too|such|more|most|few|lots?|plenty|both|either|"
    r"neither|only|even|then|than|because|since|if|when|while|after|before|for|with|without|from|to|in|on|at|by|of|"
    r"about|as|or|and|but|its|his|her|their|our|your|these|those|one|two|three|so|such)\b")
_FEELING = re.compile(r"(?i:(?:finally|now|really|so|honestly|actually|just|still)\s+)?(?:feeling|felt)\b")


_LEADING_ADVERB = re.compile(r"^(?i:(?:finally|now|really|so|honestly|actually|just|still)\s+)")
_STARTS_WITH_ING = re.compile(r"(?i:\w+ing)\b")
_STARTS_WITH_BEEN = re.compile(r"(?i:been)\b")


def _with_subject(part: str) -> str:
    """The subject a clause dropped: "looking for work" → I'm looking…, "been so busy" → I've been…, "grew up" → I…"""
    part = part[:1].lower() + part[1:]
    verb = _LEADING_ADVERB.sub("", part)
    if _STARTS_WITH_ING.match(verb):
        return "I'm " + part
    if _STARTS_WITH_BEEN.match(verb):
        return "I've " + part
    return "I " + part


_FIRST_WORD = re.compile(r"(?P<w>[A-Za-z]+)\s+\w")
_PAST_IN_ED = re.compile(r"\w{3,}ed")


def _subject_dropped(clause: str) -> str:
    """A message that starts without its subject: "Feeling much more relaxed now", "Hurt my knee", "Went vegetarian in
    January", "Bought another latte": the speaker's own news."""
    first = _FIRST_WORD.match(clause)
    if not first:
        return clause
    word = first.group("w").lower()
    if word in ("feeling", "been", "hurt", "quit") or word in PAST_IRREGULAR - {"read", "put", "let", "set"} or (
            _PAST_IN_ED.fullmatch(word) and word not in ("need", "used", "bed", "red", "seed", "shed", "speed")):
        return _with_subject(clause)
    return clause


_CHAT_STARTS = re.compile(
    r"^(?:I|I'm|I am)\s+(?:think|guess|mean|know|see|agree|hope|wonder|feel like|was wondering|just wanted|want to know|"
    r"need help|need (?:some )?advice|need (?:a |some )?(?:idea|recommendation|suggestion)s?|would like|'d like|can't wait|"
    r"sure|glad|appreciate|understand|forgot|don't know|not sure|fine|good|okay|ok|here|back|curious|wondering|kidding|"
    r"joking|sorry|thinking|remember|said|told you|asked|was just|have no idea|get it|got it|do|did|am|love that|"
    r"like that|love it|like it|love this|like this|love your|like your|loved that|'ll try|'ll think|'ll let you|"
    r"'ll check|'ll see|will try|need to go|have to go|gotta go|'m off|bet|suppose|doubt|believe|promise|heard|"
    r"read (?:that|somewhere)|saw (?:that|a)|just (?:saw|read|heard)|really appreciate|can't believe|cannot believe|"
    r"was thinking|'ve been thinking|keep forgetting|messed up|misspoke|meant|not so sure|still kind of|in shock|"
    r"had fun|had a (?:great|good|nice|lovely|fun|wonderful|blast|rough|long|bad)|made my (?:day|night|week)|"
    r"missed you|figured|guessed|thought)\b", _I)
_MY_CHAT = re.compile(r"^my\s+(?:bad|pleasure|god|gosh|goodness|question|point|apologies|fault)\b", _I)
_TRAILER = re.compile(r"\s+(?:lol|haha+|though|honestly|which|but|because|so that|,?\s*and\s+(?:honestly|it|it's|that|"
                      r"this|they|he|she|then))\b.*$|\s*,\s*(?:lol|haha+|honestly|so|which|but)\b.*$|"
                      r"\s*,\s*(?:it|that|this)(?:\s+(?:was|is)|'s)\b.*$", _I)


_STATEMENT_START = re.compile(r"(?i:I|I'm|I've|I'd|My)\b")
_WISH_START = re.compile(r"(?i:I'd|I would)\b")
_COMPOUND_ADJECTIVE = re.compile(r"(?i:I'm)\s+\w[\w-]*-\w+$")  # "I'm left-handed"
_MISHAP = re.compile(r"(?i:my)\s+(?!" + RELATIONS[3:-1] + r"\b)\w+\s+(?:got|was|were|is|has been|keeps getting)\s+\w+ed\b"
                     r"(?:\s+\w+){0,2}$")
_YOU = re.compile(r"\b(?:you|your)\b", _I)
_THANKS = re.compile(r"\bthank", _I)
_ENDS_VAGUE = re.compile(r"\b(?:that|one|it|this|them|so)(?:\s+any ?more)?$", _I)
_SOMEONES_THING = re.compile(r"(?i:my)\s+\w+'s\b")


def _generic(clause: str, about_relation: bool = False) -> Fact | None:
    """A first-person statement no specific rule knows, kept as said: "I teach high school chemistry in Ohio"."""
    if not _STATEMENT_START.match(clause) or _CHAT_STARTS.match(clause) or _MY_CHAT.match(clause):
        return None
    if _WISH_START.match(clause):
        return None  # wishes and conditionals
    clause = _TRAILER.sub("", clause).strip(" ,")
    words = clause.split()
    if not (3 if not _COMPOUND_ADJECTIVE.match(clause) else 2) <= len(words) <= 18:
        return None  # two words only for a compound like "I'm left-handed"
    if _MISHAP.match(clause):
        return None  # "my flight got delayed again": a mishap of the moment
    if _YOU.search(clause) and not _THANKS.search(clause):
        return None  # about the conversation with the assistant
    if _ENDS_VAGUE.search(clause) or (_SOMEONES_THING.match(clause) and not about_relation):
        return None  # "I'm not doing that anymore", "my friend's cat…": nothing definite about the user
    return _fact(to_third_person(clause), statement_kind(clause), 0.4)


_I_AND_VERB = re.compile(r"(?i:I)\s+(?:(?:just|also|really|finally|already|actually)\s+)?(\w+)")
_IN_ED = re.compile(r"\w+ed")


def statement_kind(clause: str) -> FactKind:
    """A plan (said with a future), an event (something that happened), or neither."""
    if _FUTURE.search(clause):
        return FactKind.PLAN
    verb = _I_AND_VERB.match(clause)
    if _PAST_TIME.search(clause) or (verb and (verb.group(1).lower() in PAST_IRREGULAR
                                               or _IN_ED.fullmatch(verb.group(1).lower()))):
        return FactKind.EVENT
    return FactKind.PLAN if _TIME.search(clause) else FactKind.OTHER


_ABOUT_SOMEONE_ELSE = re.compile(r"^(?:you|your|he|she|they|it|we're not|people|his|her|their|its)\b", _I)
_ABOUT_RELATION = re.compile(r"(?i:my)\s+(?:\w+\s+)?(?P<rel>" + RELATIONS[3:-1] + r")s?\b")


def extract_english(text: str, last_relation: str | None = None, context: Sequence[str] = ()) -> list[Fact]:
    """Facts about the user in one English message. `context` holds the user's earlier messages, so that "she", "his"
    and "it" (and a pet's name) resolve to the last person or thing the user named; `last_relation` is an older way of
    saying who "she" is."""
    mentions = [m for earlier in context for m in mentions_in(earlier)]
    fresh = mentions_in(context[-1]) if context else []  # "it" is a thing only if it was just named
    if last_relation and not any(m.noun == last_relation for m in mentions):
        mentions.append(Mention(f"my {last_relation}", last_relation, _gender(last_relation), True))
    facts: list[Fact] = []
    previous_sentence = -1
    cause: str | None = None
    for clause, asked, sentence in _clauses(text):
        starts_sentence = sentence != previous_sentence
        previous_sentence = sentence
        for _ in range(2):
            clause = _LEADING.sub("", clause)
        if not clause or asked or _QUESTION_START.match(clause) or _HYPOTHETICAL.search(clause):
            continue
        pronoun = _PRONOUN_NAME.match(clause)
        if pronoun:
            who = resolve(mentions, _PRONOUN_GENDER[pronoun.group("p").lower()])
            if who is not None:
                name = pronoun.group("name")
                if facts and facts[-1].topic == who.noun and facts[-1].text.startswith("User has") \
                        and "named" not in facts[-1].text:
                    facts[-1].text += f" named {name}"
                else:
                    facts.append(_fact(f"User's {who.noun}'s name is {name}", FactKind.RELATIONSHIP, 0.8,
                                       topic=who.noun))
                mentions.append(Mention(who.phrase, who.noun, who.gender, who.owned, name))
            continue
        clause = _LEADING_HEDGE.sub("", _TRAILING_HEDGE.sub("", clause))
        said = _resolved(clause, mentions, fresh)
        if said is None:
            continue
        if said is clause and starts_sentence:
            said = _subject_dropped(clause)
        if _ABOUT_SOMEONE_ELSE.match(said):
            continue
        said = _objects_resolved(said, mentions)
        if starts_sentence:
            cause = None
        if facts and facts[-1].sentence == sentence and _PRO_VERB.match(said):
            facts[-1].text += ", " + to_third_person(said)[len("User "):]  # I love running, I go every morning
            continue
        found = first_fact(RULES, said) or _generic(said, about_relation=said is not clause)
        mentions.extend(_mentions(said))
        fresh.extend(_mentions(said))
        if found is None:
            # "The project finally shipped, feeling much more relaxed now": what happened, kept with the mood
            cause = clause if _CAUSE.match(clause) else None
            continue
        if found.slot == MOOD_SLOT and cause:
            found.text = f"{cause}, {found.text}"
        cause = None
        about = _ABOUT_RELATION.match(said)
        if about and found.kind in (FactKind.OTHER, FactKind.PLAN, FactKind.EVENT) and found.text.startswith("User's"):
            found.kind, found.topic = FactKind.RELATIONSHIP, about.group("rel").lower()
        if about and found.kind is FactKind.RELATIONSHIP and _GONE.search(said):
            found.negated = True  # "my cat Luna passed away": no longer "has a cat named Luna"
        if _ONLY_A_PRONOUN_SAID.match(found.text):
            continue
        found.sentence = sentence
        facts.append(found)
    return unique_facts(facts, fold_case=True)


# How sure the user is, said around a clause ("I like him I think", "I think I'm in love"): not part of what is said
# ("User likes him User think").
_HEDGES = r"I think|I guess|I suppose|I reckon|I believe|I feel like|I bet"
_TRAILING_HEDGE = re.compile(r"[,\s]+(?:" + _HEDGES + r")\s*$", _I)
_LEADING_HEDGE = re.compile(r"^(?:" + _HEDGES + r")\s+(?:that\s+)?(?=(?:I|I'm|I've|I'll|my|we)\b)", _I)
# A fact whose whole object is a pronoun no earlier message resolved ("User likes him", "User's daughter is fond of
# her") says nothing a search could find or a reply could use; the message itself is kept as evidence.
_ONLY_A_PRONOUN_SAID = re.compile(r"^User(?:'s [\w-]+)? (?:[\w']+ ){1,3}(?:him|her|them|it|this|that)$", _I)


_GONE = re.compile(r"\b(?:passed away|died|was put down|was put to sleep|passed on|is gone|ran away)\b", _I)
_CAUSE = re.compile(r"^(?!(?:I|I'm|I've|you|your|it|that|this)\b)(?:the|my|our)\s+[\w' -]{2,40}?\b(?:\w+ed|"
                    + "|".join(sorted(PAST_IRREGULAR)) + r")\b[\w' -]{0,30}$", _I)
# "I go every morning", "I do it twice a week": said of the activity just named.
_PRO_VERB = re.compile(r"^I\s+(?:(?:usually|always|still|also|now)\s+)?(?:go|do it|do that|do)\s+" + FREQUENCY, _I)
