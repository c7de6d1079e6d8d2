"""English entity rules: kinship and role terms, pets, work, study, places, possessions and naming, as Claims.

Patterns are built once here over vocabularies (KIN, PETS, ...); a new term is a new entry, not a new pattern.
"""

from __future__ import annotations

import re

from jiyi.core import entity_family_words_en, entity_homes_en, entity_lowercase_en, entity_names_en, entity_titles_en
from jiyi.core.entity_claims import ME, Claim, Ref, kin_of, named, pronoun
from jiyi.core.not_names import not_a_name_en

_I = re.IGNORECASE

# term -> (relation: the person IS the <relation> OF the one whose term it is, gender or None)
KIN: dict[str, tuple[str, str | None]] = {
    "mom": ("mother_of", "f"), "mother": ("mother_of", "f"), "mum": ("mother_of", "f"), "mama": ("mother_of", "f"),
    "dad": ("father_of", "m"), "father": ("father_of", "m"), "papa": ("father_of", "m"),
    "brother": ("brother_of", "m"), "sister": ("sister_of", "f"), "cousin": ("cousin_of", None),
    "son": ("son_of", "m"), "daughter": ("daughter_of", "f"), "kid": ("child_of", None), "child": ("child_of", None),
    "grandson": ("grandson_of", "m"), "granddaughter": ("granddaughter_of", "f"),
    "grandma": ("grandmother_of", "f"), "grandmother": ("grandmother_of", "f"), "nan": ("grandmother_of", "f"),
    "grandpa": ("grandfather_of", "m"), "grandfather": ("grandfather_of", "m"),
    "aunt": ("aunt_of", "f"), "auntie": ("aunt_of", "f"), "uncle": ("uncle_of", "m"),
    "niece": ("niece_of", "f"), "nephew": ("nephew_of", "m"),
    "mother-in-law": ("mother_in_law_of", "f"), "father-in-law": ("father_in_law_of", "m"),
    "wife": ("wife_of", "f"), "husband": ("husband_of", "m"), "partner": ("partner_of", None),
    "girlfriend": ("girlfriend_of", "f"), "gf": ("girlfriend_of", "f"), "boyfriend": ("boyfriend_of", "m"),
    "bf": ("boyfriend_of", "m"), "fiance": ("fiance_of", "m"), "fiancé": ("fiance_of", "m"),
    "fiancee": ("fiancee_of", "f"), "fiancée": ("fiancee_of", "f"), "ex": ("ex_partner_of", None),
    "roommate": ("roommate_of", None), "flatmate": ("flatmate_of", None), "housemate": ("housemate_of", None),
    "friend": ("friend_of", None), "best friend": ("friend_of", None), "mate": ("friend_of", None),
    "best mate": ("friend_of", None), "bestie": ("friend_of", None),
    "neighbour": ("neighbour_of", None), "neighbor": ("neighbour_of", None),
    "boss": ("boss_of", None), "manager": ("boss_of", None), "supervisor": ("supervisor_of", None),
    "team lead": ("boss_of", None), "advisor": ("advisor_of", None), "mentor": ("advisor_of", None),
    "teacher": ("teacher_of", None), "landlord": ("landlord_of", None), "landlady": ("landlord_of", "f"),
    "coworker": ("coworker_of", None), "colleague": ("coworker_of", None),
    "bro": ("brother_of", "m"), "sis": ("sister_of", "f"), "pal": ("friend_of", None), "buddy": ("friend_of", None),
    "principal": ("boss_of", None), "line manager": ("boss_of", None), "head of department": ("boss_of", None),
    "grandkid": ("grandchild_of", None), "stepdaughter": ("stepdaughter_of", "f"), "stepson": ("stepson_of", "m"),
    "ex-wife": ("ex_partner_of", "f"), "ex-husband": ("ex_partner_of", "m"), "hubby": ("husband_of", "m"),
    "missus": ("wife_of", "f"), "gran": ("grandmother_of", "f"), "granny": ("grandmother_of", "f"),
    "nana": ("grandmother_of", "f"), "grandad": ("grandfather_of", "m"), "caregiver": ("caregiver_of", None),
    "carer": ("caregiver_of", None), "tutor": ("teacher_of", None), "coach": ("coach_of", None),
}
PETS = ("dog", "cat", "puppy", "pup", "kitten", "kitty", "beagle", "kelpie", "labrador", "lab", "poodle", "corgi",
        "husky", "retriever", "golden", "terrier", "pug", "dachshund", "collie", "spaniel", "shepherd", "greyhound",
        "chihuahua", "bulldog", "parrot", "african grey", "cockatiel", "budgie", "bird", "hamster", "rabbit", "bunny",
        "guinea pig", "turtle", "tortoise", "snake", "lizard", "gecko", "goldfish", "fish", "horse", "ferret",
        "mutt", "mongrel", "ridgeback", "staffy", "heeler", "schnauzer", "shih tzu", "maltese", "cavoodle",
        "labradoodle", "goldendoodle", "doodle", "boxer", "rottweiler", "doberman", "dalmatian", "akita", "shiba",
        "samoyed", "whippet", "lurcher", "jack russell", "yorkie", "westie", "sheepdog", "heading dog", "pointer",
        "basset", "bichon", "pomeranian", "mastiff", "great dane", "pit bull", "pitbull", "tabby", "siamese",
        "ragdoll", "maine coon", "sphynx", "moggy", "cockatoo", "canary", "hen", "pony", "axolotl", "hedgehog",
        "chinchilla", "iguana", "cactus")
# Terms one person holds in a user's life at a time: "my mom called" names her by the term (a name said later joins).
UNIQUE = frozenset(("mom", "mum", "mother", "dad", "father", "wife", "husband", "partner", "boyfriend", "girlfriend",
                    "boss", "manager", "mother-in-law", "father-in-law", "landlord", "landlady"))
# Parent words used as a name at the start of a sentence ("Amma called", "Mum says").
# Also the words of the families who chat in English with another home language: Ammi / Abbu (Urdu), Nanay / Tatay
# (Tagalog), Umma (Korean), Mam / Mammy (Ireland, the north of England), Mummy / Daddy.
PARENT_NAMES = {"mom": "mother_of", "mum": "mother_of", "mama": "mother_of", "amma": "mother_of", "ma": "mother_of",
                "dad": "father_of", "papa": "father_of", "appa": "father_of", "pa": "father_of",
                "mummy": "mother_of", "mommy": "mother_of", "mam": "mother_of", "mammy": "mother_of",
                "ammi": "mother_of", "nanay": "mother_of", "umma": "mother_of", "daddy": "father_of",
                "abbu": "father_of", "tatay": "father_of"}
THINGS = ("car", "truck", "ute", "van", "bike", "motorbike", "scooter", "boat")
# Words that follow a kinship term without being a name ("my brother just called", "my mom and I").
NOT_NAMES = frozenset("""a an the and or but so is was are were has had have just also still now then who that which
when where what why how i me my we our you your he she his her they them their it its this these those here there
always never really finally already again today tonight yesterday tomorrow said says says told tells called calls
texted texts came comes went goes got gets made makes thinks thought wants wanted keeps kept is's did does doing
to of in on at for with from by about up down out off over into just lol haha too very much more less been being
will would can could should might must may not no yes if as than like ever even only back home here gonna wanna
literally actually honestly basically""".split())

_NAME = r"[A-Z][a-zA-Z'-]+|[a-z][a-z'-]+"
_KIN_TERMS = "|".join(sorted((re.escape(k) for k in KIN), key=len, reverse=True))
_PET_TERMS = "|".join(sorted((re.escape(k) for k in PETS), key=len, reverse=True))
_THING_TERMS = "|".join(re.escape(k) for k in THINGS)
# "kid" before a sibling is an adjective: "my kid sis Chioma" is a younger sister, not a child called sis
_ADJECTIVES = r"(?:(?:older|younger|little|big|baby|twin|old|new|late|dear|elder|eldest|youngest|lovely|" \
              r"step|half|african grey|rescue|first|second|current|lil|young|" \
              r"kid(?=\s+(?:sis|sister|bro|brother)\b))\s+)*"
# not after an abbreviation that a name follows ("from St. Boniface", "Dr. Okafor"): no sentence ends there
_SENTENCES = re.compile(r"(?<=[.!?;])(?<!\bSt\.)(?<!\bMt\.)(?<!\bDr\.)(?<!\bMr\.)(?<!\bMs\.)(?<!\bMrs\.)"
                        r"(?<!\bProf\.)\s+|\n+|\s+-\s+|,\s+(?=(?:and|but|so)\b)")

# Whose the term is: mine, a pronoun's ("her husband Tom"), or a chain through a term of mine ("my sister's
# husband Tom", "my older brother's girlfriend").
_OWNER = (r"(?P<owner>(?:my|our)\s+" + _ADJECTIVES + r"(?:" + _KIN_TERMS + r")['’]s|my|our|his|her|their)")
# "my older brother Arjun", "our cat pickles", "my wife Lena", "my cousin Sneha's marriage", "her husband Tom"
_MY_TERM_NAME = re.compile(
    r"\b" + _OWNER + r"\s+(?P<adj>" + _ADJECTIVES + r")(?P<term>" + _KIN_TERMS + "|" + _PET_TERMS + "|"
    + _THING_TERMS + r")\s*,?\s+(?P<name>" + _NAME + r")", _I)
# "Arjun's girlfriend Mei", "jordan's new gf ana"
_NAMES_TERM_NAME = re.compile(
    r"\b(?P<owner>[A-Z][a-zA-Z-]+|[a-z]+)'s\s+(?:new\s+)?(?P<term>" + _KIN_TERMS + "|" + _PET_TERMS + r")\s*,?\s+"
    r"(?P<name>" + _NAME + r")")
# The other way round: "Sam is my partner", "Tash, my housemate", "Tom (my brother)", "Tom - Priya's husband",
# "Mei is Arjun's girlfriend", "Tom, her husband"
_NAME_IS_MY_TERM = re.compile(
    r"\b(?P<name>[A-Z][a-zA-Z-]+)(?:\s+(?:is|was)\s+|,\s*|\s*\(\s*|\s+[-–—]\s+)(?P<owner>(?i:(?:my|our)\s+"
    + _ADJECTIVES + r"(?:" + _KIN_TERMS + r")['’]s|my|our|his|her|their)|[A-Z][a-zA-Z-]+['’]s)\s+(?P<adj>(?i:"
    + _ADJECTIVES + r"))(?P<term>(?i:" + _KIN_TERMS + "|" + _PET_TERMS + r"))\b")
# "my sister's name is Priya", "our dog is called Rex", "my new boss is Dana", "my cat, named Mochi"
_MY_TERM_IS_NAME = re.compile(
    r"\b" + _OWNER + r"\s+(?P<adj>" + _ADJECTIVES + r")(?P<term>" + _KIN_TERMS + "|" + _PET_TERMS + r")"
    r"(?:['’]s\s+name\s+is|\s+is\s+(?:called|named)|,?\s+(?:named|called)|\s+is)\s+(?P<name>(?-i:[A-Z][a-zA-Z-]+))\b(?!['’-])",
    _I)
# "I have a sister named Priya", "we just adopted a kitten called Miso", "I've got a new roommate, Jess"
# "seeing a guy named Marc", "this girl called Aoife": someone introduced by a name, whom a pronoun then means
# "this guy Kabir from my college": "this" or "that" introduce as well without "named"
_SOMEONE_NAMED = re.compile(r"\b(?:(?i:a|an|this|some|that)\s+(?:[a-z]+\s+)?(?i:guy|girl|man|woman|lady|bloke|dude|"
                            r"fella|chap|boy|lad|lass)\s+(?i:named|called)|(?i:this|that)\s+(?i:guy|girl|man|woman|"
                            r"lady|bloke|dude|fella|chap|boy|lad|lass))\s+(?P<name>[A-Z][a-zA-Z-]+)\b")
_HAVE_A_TERM_NAMED = re.compile(
    r"\b(?P<who>I|we|We|i)\s+(?:\w+\s+){0,2}?(?:have|had|got|adopted|rescued|brought\s+home|met|getting|'ve\s+got)\s+"
    r"(?:a|an|another)\s+(?P<adj>(?i:" + _ADJECTIVES + r"))(?P<term>(?i:" + _KIN_TERMS + "|" + _PET_TERMS + r"))"
    r"\s*,?\s+(?:(?i:named|called)\s+)?(?P<name>[A-Z][a-zA-Z-]+)\b")
# "My wife, Moira, passed in 2021": a spouse introduced as she dies is the user's late wife
_DIED = re.compile(r"\b(?:passed|passed\s+away|died)\b", _I)
_CLOSES_APPOSITION = re.compile(r"\s*(?:[,.)!?;]|$|(?:and|who|is|was|'s)\b)")
# Words before "X, my sister" that make X a place or a time rather than the person ("In Denver, my sister...")
_NOT_APPOSED = re.compile(r"\b(?:in|at|to|near|on|since|until)\s+$", _I)
# "housemate Tash reckons": a role term without "my" at the start of a sentence
_TERM_NAME_START = re.compile(
    r"^(?P<adj>" + _ADJECTIVES + r")(?P<term>" + _KIN_TERMS + "|" + _PET_TERMS + r")\s+(?:(?:named|called)\s+)?"
    r"(?P<name>[A-Z][a-zA-Z-]+|[a-z]+)\b", _I)

# Someone known by whose relative they are, as a subject: "my mum", "her husband", "Priya's brother" (not "my old
# boss": who that was is not who the graph holds now)
_KIN_SUBJECT = (r"(?i:(?:my|our|his|her|their)\s+(?:(?:older|younger|little|big|baby|twin|elder|eldest|youngest|"
                r"step|half|lil|young)\s+)*(?:" + _KIN_TERMS + r"))(?![\w-])|[A-Z][a-zA-Z-]+['’]s\s+(?i:"
                + _KIN_TERMS + r")(?![\w-])")
_PREPOSITION_AFTER = re.compile(r"\s+(?:at|in|to|for|with|as|from|on|into|about|by)\b", _I)
_KIN_PHRASE = re.compile(r"(?P<owner>(?i:my|our|his|her|their)|[A-Z][a-zA-Z-]+['’]s)\s+(?:[a-z]+\s+)*?"
                         r"(?P<term>(?i:" + _KIN_TERMS + r"))", _I)
# Who a relation is about: "I", a pronoun, a name or two ("Fiona and Graeme moved to ..."), or, where a sentence
# opens with its verb ("Moved to Amstelveen.", "Handed in notice at Yoco."), the user.
# A list of them ("Imran, Sana and the baby moved to …"), or, after "and", whoever the sentence was about before it
# ("she's a dentist and lives in Leicester").
_SUBJECT = (r"(?:(?:^|(?<=\s))(?P<subj>" + _KIN_SUBJECT + r"|I|i|we|We|he|He|she|She|they|They|[A-Z][a-zA-Z-]+)"
            r"(?P<subj2>(?:\s*,\s*[A-Z][a-zA-Z-]+)*\s+(?:and|&)\s+(?:" + _KIN_SUBJECT + r"|[A-Z][a-zA-Z-]+|"
            r"(?i:the|our|their)\s+[a-z]+))?"
            r"(?:'s|'re|'m|'ve|\s+is|\s+are|\s+am|\s+was|\s+has|\s+have|\s+had|\s+just|\s+also|\s+now|\s+finally|"
            r"\s+recently|\s+still|\s+currently|\s+already|\s+officially|\s+been)*\s+"
            r"|(?P<after_and>(?<=\band\s))"
            r"|^(?!(?i:my|our|his|her|their|your|its|the|a|an|this|that|these|those)\b)"
            r"(?:(?i:just|finally|officially|recently|now)\s+)?)")
# Who a clause of the sentence is about, where it starts (at the start or after a comma) with a verb after it
# ("My cousin Ravi is …": Ravi, introduced by whose relative he is)
_CLAUSE_SUBJECT = re.compile(r"(?:^|[,:]\s+)(?:(?P<pron>I|i|we|We|he|He|she|She|they|They)(?=['’]|\s)|"
                             r"(?:(?i:my|our|his|her|their)\s+(?:[a-z]+\s+){0,2}?(?i:" + _KIN_TERMS + r"),?\s+)?"
                             r"(?P<subj>" + _KIN_SUBJECT + r"|[A-Z][a-zA-Z-]+)(?=['’](?:s|m|re|ve)\b|\s+(?:is|was|are|"
                             r"am|were|has|had|have|just|also|still|now|[a-z]+ed|[a-z]+s)\b))")
_ONE_NAME = re.compile(r"[A-Z][a-zA-Z-]+")
_RELATIVE = re.compile(r"\b(?:who|which|that|whose|whom)\b", _I)
_LIST_ITEM = re.compile(r"\s*(?:,|\b(?:and|&)\b)\s*")
_ORG_NOUNS = (r"(?:company|startup|start-up|firm|fintech|agency|school|cafe|café|restaurant|shop|bakery|clinic|"
              r"hospital|church|club|gym|charity|nonprofit|bank|store|studio|practice|bar|pub|hotel|farm|centre|"
              r"center|lab|team|band|brand|business)")
_ORG = (r"(?:(?i:the)\s+|(?i:a|an)\s+(?:[\w-]+\s+){0,2}?" + _ORG_NOUNS + r"\s+(?:(?i:called|named)\s+)?)?"
        r"(?P<org>(?:[A-Z][\w&'.-]*|&)(?:\s+(?:[A-Z][\w&'.-]*|&|of))*)")
# "started at the Bangalore office": a name before one of these is where a branch is as often as whose it is
_NOT_BEFORE_A_BRANCH = r"\b(?!\s+(?i:office|branch|campus|site|location|outlet|plant|warehouse)\b)"
_PLACE = r"(?P<place>[A-Z][a-zA-Z.-]+(?:\s+[A-Z][a-zA-Z.-]+)*)"
_WORKS = re.compile(
    _SUBJECT + r"(?P<verb>(?i:(?:work|works|worked|working|temping|interning|volunteer|volunteers|volunteering|teach|"
    r"teaches|teaching|taught|(?:picked up\s+)?(?:extra\s+)?shifts?|(?:got\s+)?(?:a\s+)?(?:new\s+)?job|"
    r"(?:found|got|landed|started|starting|began)\s+(?:(?:a|an|his|her|my|their)\s+)?(?:new\s+)?(?:[\w-]+\s+)?"
    r"(?:work|apprenticeship|traineeship|gig|contract))\s+"
    r"(?:[\w-]+\s+){0,3}?"
    r"|(?:started|starting|hired)\s+(?:work(?:ing)?\s+)?))(?:at|for|with)\s+" + _ORG + _NOT_BEFORE_A_BRANCH)
_SHIFT_AT = re.compile(r"\b(?i:shift|shifts|rotation|placement)\s+at\s+" + _ORG + _NOT_BEFORE_A_BRANCH)
_ORG_CONTACT = re.compile(r"\b(?:offer|recruiter|interview|role|position|call|email)\s+(?:\w+\s+){0,2}?"
                          r"(?:from|at|with)\s+" + _ORG)
_EMPLOYER = re.compile(r"\b(?P<owner>(?i:my|his|her|their|our))\s+(?i:firm|company|employer|office|practice|agency|"
                       r"studio),?\s+" + _ORG)
_MY_HOME_IN = re.compile(r"(?:\b(?i:my|our)\s+|^(?i:(?:found|got|rented|renting|moved\s+into|moving\s+into)\s+)?"
                         r"(?i:(?:a|an|the|our)\s+)?)(?:\w+\s+){0,2}?(?i:apartment|flat|place|house|studio|2br|1br|"
                         r"3br|room|rental|apt|condo)\s+in\s+"
                         + _PLACE)
_WE_ARE_IN = re.compile(r"^(?i:we're|we are|i'm|i am)\s+(?i:still\s+|currently\s+|now\s+)?(?i:living\s+)?in\s+"
                        + _PLACE)
_TOGETHER = re.compile(r"\b(?P<name>[A-Za-z][a-z'-]+)\s+and\s+i\s+(?:have\s+been|'ve\s+been|are|were)\s+"
                       r"(?:together|dating|going\s+out)", _I)
_KIDS = re.compile(r"\b(?:my|our)\s+(?P<term>girls|boys|kids|daughters|sons|twins)\s+(?P<a>[A-Z][a-z]+)\s+and\s+"
                   r"(?P<b>[A-Z][a-z]+)")
_KID_RELATION = {"girls": "daughter_of", "daughters": "daughter_of", "boys": "son_of", "sons": "son_of"}
_PARENT_START = re.compile(r"^(?P<name>" + "|".join(PARENT_NAMES) + r")\s+(?:called|rang|says|said|texted|sent|is|was|"
                           r"has|had|just|keeps|still|wants|thinks|told|asked|came|came over|visited)\b", _I)
_MY_TERM_ALONE = re.compile(r"\b(?P<owner>my|our)\s+(?P<term>" + "|".join(sorted(map(re.escape, UNIQUE), key=len,
                                                                                    reverse=True)) + r")\b", _I)
# Also a lowercase word ("first day at amazon"): then only an organisation the graph already knows is meant.
_ORG_ANY_CASE = r"(?:(?i:the)\s+)?(?P<org>[A-Za-z][\w&'.-]*(?:\s+[A-Z][\w&'.-]*)*)" + _NOT_BEFORE_A_BRANCH
_FIRST_DAY = re.compile(r"\b(?i:first\s+(?:day|week)|started|starting)\s+(?i:at|with)\s+" + _ORG_ANY_CASE)
_LAST_DAY = re.compile(r"\b(?i:last\s+day\s+at|quit(?:ting)?|left|leaving|resigned\s+from|handed\s+in\s+(?:my\s+)?"
                       r"notice\s+at)\s+" + _ORG)
_JOB_AT = re.compile(r"\b(?i:got|have|landed|starting)\s+(?i:a\s+|the\s+)?(?i:new\s+)?(?i:job|position|role)\s+at\s+"
                     + _ORG_ANY_CASE)
_STUDIES = re.compile(
    _SUBJECT + r"(?:\w+\s+){0,3}?(?:studying|studies|study|student|school|law\s+school|med\s+school|college|degree|"
    r"PhD|phd|masters|major(?:ing)?)\s+(?:\w+\s+)?at\s+" + _ORG)
_LIVES = re.compile(
    _SUBJECT + r"(?i:(?:live|lives|living|lived|settled|staying)\s+(?:(?:on\s+my\s+own|alone|together|here|now)\s+)?in|"
    r"(?:moved|moving|relocated|relocating|shifted)\s+(?:back\s+)?to|in\s+a\s+(?:\w+\s+){0,3}?(?:studio|apartment|flat|"
    r"house|place|rental|room)\s+in)\s+" + _PLACE)
_RESIDENT = re.compile(r"\b(?:(?:a|an)\s+(?P<place>[A-Za-z][a-zA-Z.-]+(?:\s+[A-Z][a-zA-Z.-]+)*)\s+resident|"
                       r"we're\s+(?P<people>[A-Z][a-zA-Z.-]+(?:\s+[A-Z][a-zA-Z.-]+)*)\s+people)\b", _I)
_BASED = re.compile(r"\b" + _ORG + r"\s+(?:is|are)\s+(?:based|located|headquartered)\s+in\s+" + _PLACE)
_BROKE_UP = re.compile(r"\b(?:we|i)\s+(?:just\s+|finally\s+)?(?:broke\s+up|split\s+up|called\s+it\s+off)|"
                       r"\bbroke\s+up\s+with\b|\bdumped\s+me\b", _I)
_PET_GONE = re.compile(r"\b(?:said\s+goodbye\s+to|put\s+down|lost|buried)\s+(?P<name>[A-Z][a-zA-Z-]+)\b|"
                       r"\b(?P<name2>[A-Z][a-zA-Z-]+)\s+(?:died|passed\s+away|(?:was|got|had\s+to\s+be)\s+put\s+down|"
                       r"crossed\s+the\s+"
                       r"rainbow\s+bridge)")
_SOLD = re.compile(r"\b(?P<verb>sold|gave\s+away|sell|selling)\s+(?P<det>my\s+|our\s+|the\s+)(?P<old>old\s+)?"
                   r"(?P<thing>(?-i:[A-Z][a-zA-Z0-9-]+)|" + _THING_TERMS + r")\b", _I)
_GONE_THING = re.compile(r"\b(?P<thing>[A-Z][a-zA-Z0-9-]+)(?:'s|\s+is)\s+gone\b")
# Who is what where, said with a copula: "she's an ER nurse at St Vincent's", "I'm a junior dev at Canva", "he works
# as a paralegal for Baker & Co". The role noun picks the relation; a patient or a regular is nobody's employee.
_WHO = r"(?:^|(?<=\s))(?P<subj>" + _KIN_SUBJECT + r"|I|i|he|He|she|She|they|They|[A-Z][a-zA-Z-]+)"
_ROLE_AT = re.compile(
    _WHO + r"(?:'s|'m|'re|\s+is|\s+am|\s+are|\s+was|\s+works\s+as|\s+worked\s+as|\s+started\s+as)"
    r"(?:\s+(?:now|still|currently|also|just|finally))?\s+(?:a|an)\s+(?P<role>(?:[\w-]+\s+){0,2}?[\w-]+)\s+"
    r"(?:at|for|with)\s+" + _ORG)
_ROLE_RELATION: dict[str, str | None] = {
    "student": "studies_at", "undergrad": "studies_at", "sophomore": "studies_at", "freshman": "studies_at",
    "senior": "studies_at", "junior": "studies_at", "phd": "studies_at", "intern": "interns_at",
    "volunteer": "volunteers_at", "member": "member_of", "regular": None, "patient": None, "guest": None,
    "customer": None, "fan": None, "visitor": None, "client": None, "while": None, "bit": None, "lot": None}
# Chat written in lowercase names an organisation in lowercase too: up to three words before a comma or the end
_ROLE_AT_ANY_CASE = re.compile(_ROLE_AT.pattern.removesuffix(_ORG) + r"(?P<org>[a-z][\w&'-]*(?:\s+[a-z][\w&'-]*){0,2})"
                               r"(?=\s*(?:[,.!?;]|$))")
_IM = re.compile(r"\bim\b")
# "my job at Canva", "her new role with Atlassian", "my manager at tjs" (a manager there is a job there)
_MY_WORK_AT = re.compile(
    r"\b(?P<owner>(?i:my|our|his|her|their))\s+(?P<when>(?i:new|old|former|previous|first|current|part-time)\s+)?"
    r"(?P<what>(?i:job|work|shifts?|internship|role|position|manager|boss|supervisor|coworkers?|colleagues?|team|"
    r"office))\s+(?i:at|with)\s+" + _ORG)
# What ends a job without naming the employer: "I got laid off", "she quit her job", "he retired last year"
_JOB_ENDED = re.compile(
    _WHO + r"\s+(?:(?:just|finally|officially|got|was|were|been|have|has|had)\s+)*(?:laid\s+off|let\s+go|fired|"
    r"made\s+redundant|retired|resigned|quit|handed\s+in\s+(?:my|his|her|their)\s+notice)"
    r"(?=\s*(?:$|[.!,;]|(?:my|his|her|their)\s+job\b|today|yesterday|last\b|this\b|from\b|at\b|by\b))")
_GRADUATED = re.compile(_WHO + r"\s+(?:(?:just|finally|officially|has|have|had)\s+)*(?:graduated|dropped\s+out)"
                        r"(?:\s+(?:from|of)\s+" + _ORG + r")?")
_ADMITTED = re.compile(_WHO + r"\s+(?:(?:just|finally|officially|has|have|had|was|were|got)\s+)*"
                       r"(?:got\s+into|accepted\s+(?:to|into|at)|admitted\s+to|into)\s+" + _ORG)
# Where someone is, said with a copula: "my brother is in Sydney two years now", "mum and dad are still in Lagos",
# "he's back in Townsville". A stay is not a home ("she's in Paris for a conference", "in Rome on holiday"), nor a
# school year or a ward ("he's in Year 5", "in Ward 3").
# (a parent word is a subject in any case: "mummy and daddy are still in Lagos")
_PARENT_WORDS = r"(?i:" + "|".join(sorted(PARENT_NAMES, key=len, reverse=True)) + r")(?![\w'-])"
_WHO_LIST = (r"(?:^|(?<=\s))(?P<subj>" + _KIN_SUBJECT + r"|I|i|we|We|he|He|she|She|they|They|" + _PARENT_WORDS
             + r"|[A-Z][a-zA-Z-]+)(?P<subj2>(?:\s*,\s*[A-Z][a-zA-Z-]+)*\s+(?:and|&)\s+(?:" + _KIN_SUBJECT + r"|"
             + _PARENT_WORDS + r"|[A-Z][a-zA-Z-]+))?"
             r"(?P<after_and>(?!))?")
_IS_IN = re.compile(
    _WHO_LIST + r"(?:'s|'re|'m|\s+is|\s+are|\s+am)(?:\s+(?i:still|now|back|home|currently|also|both|all|living|"
    r"based|settled|out|over|up|down|there))*\s+in\s+" + _PLACE
    + r"(?![\w.-])(?!\s+(?i:for|on\s+(?:holiday|vacation|a\s+trip|business|tour)|visiting|till|until|this\s+week)\b)")
# "... in Karachi this month for a wedding", "in Rome until June": a stay, said within four words of the place and
# before another clause ("she's in Glasgow and she's training for the marathon" is a home)
# ("home in Cebu for a few months" is a home: a while is no event)
_STAY = re.compile(r"(?:\s+(?!and\b|but\b)[\w'-]+){0,4}?\s+(?:for\s+(?:(?:a|an|the|his|her|their|my|our)\s+"
                   r"(?!few\b|couple\b|while\b|years?\b|months?\b)|work\b|now\b)|on\s+(?:holiday|vacation|a\s+trip|"
                   r"business|tour)\b|visiting\b|this\s+(?:week|weekend|month)\b|till\b|until\b)", _I)
_NOT_WHERE = frozenset(("year", "grade", "form", "class", "ward", "room", "hospital", "icu", "court", "jail",
                        "prison", "rehab", "church", "school", "college", "uni", "university"))
# Where someone else works, said with a copula: "my flatmate Rohit, he's at Swiggy", "he's been at Emirates 6 years".
# Not the user ("I'm at Tesco" is where the user stands) and not where one is for a while ("she's at Heathrow for her
# flight", "he's at Disneyland this week", "at Christmas": not_names.json); "for ten years" is how long the job is.
_IS_AT = re.compile(
    r"(?:^|(?<=\s))(?P<subj>" + _KIN_SUBJECT + r"|he|He|she|She|they|They|[A-Z][a-zA-Z-]+)"
    r"(?:'s|'re|\s+is|\s+are|\s+has|\s+have)(?:\s+(?i:now|still|also|been|currently))*\s+at\s+" + _ORG
    + r"(?![\w&'.-])(?!\s+(?i:for(?!\s+(?:\w+\s+)?(?:years?|months|decades?|ages|a\s+while)\b)|with|tonight|"
    r"today|this|right|on|until|till|visiting)\b)")
# "daughter Kylie rang from Cairns", "bhaiya called from Dubai": where someone calls from is where they are, as a
# guess (inferred: a home said outright wins; "called from the airport" is no town, lowercase)
_CALLED_FROM = re.compile(
    r"(?:^|(?<=\s))(?P<subj>" + _KIN_SUBJECT + r"|he|He|she|She|they|They|[A-Z][a-zA-Z-]+)\s+(?:(?:just|also)\s+)?"
    r"(?i:called|call|calls|rang|rings|phoned|phones|texted|video\s+called|facetimed)\s+(?:(?i:me|us)\s+)?"
    r"(?i:from)\s+" + _PLACE + r"(?![\w.-])")
# "here in Tucson": where the user is
_HERE_IN = re.compile(r"\b(?i:here\s+in)\s+" + _PLACE)
# Where someone is from: "I'm originally from Cork", "she grew up in Leeds", "my hometown is Ipoh"
_FROM = re.compile(
    _WHO + r"(?:(?:'s|'m|'re|\s+is|\s+am|\s+are|\s+was|\s+were)\s+(?:originally\s+)?from|\s+(?:grew\s+up|was\s+born|"
    r"were\s+born|was\s+raised)\s+in)\s+" + _PLACE + r"|\b(?P<owner>(?i:my|his|her|their))\s+hometown\s+(?:is|was)\s+"
    + _PLACE.replace("place", "home"))
_MOVED_OUT = re.compile(_WHO + r"(?:'s|\s+is|\s+has|\s+just|\s+finally|\s+officially)*\s+(?:moved|moving|moves)\s+out"
                        r"\b")
# "Jake moved in with me", "I live with Priya", "Nana's living with us now": a shared home
_MOVED_IN_WITH = re.compile(_WHO + r"(?:'s|'m|\s+is|\s+am|\s+has|\s+just|\s+finally|\s+officially|\s+still|\s+now)*\s+"
                            r"(?:(?:moved|moving|moves)\s+in|live|lives|living)\s+with\s+"
                            r"(?P<with>[A-Z][a-zA-Z-]+|me|us|him|her|them)\b")
# Couples that become more: "Sneha and Karthik got married", "we got engaged!", "Tom proposed", "engaged to Dev"
_COUPLE_NOW = re.compile(
    r"\b(?:(?P<a>[A-Z][a-zA-Z-]+)\s+and\s+(?:(?P<me>I|i|me)|(?P<b>[A-Z][a-zA-Z-]+))|(?P<we>we|We))\s+"
    r"(?:(?:just|finally|officially|are|'re|got|have|'ve|now|getting|are\s+getting|been)\s+)*"
    r"(?P<what>engaged|married)\b|\b(?:got\s+|am\s+|'m\s+)?(?P<what2>engaged|married)\s+to\s+(?P<c>[A-Z][a-zA-Z-]+)|"
    r"\b(?P<d>[A-Z][a-zA-Z-]+)\s+(?:finally\s+|just\s+)?proposed\b(?!\s+to\s+(?!me\b))")
_DIVORCED = re.compile(r"\b(?:we|i|I|We)\s+(?:are\s+|'re\s+|got\s+|just\s+|finally\s+)*(?:divorced|separated|"
                       r"separating|getting\s+divorced)\b|\bdivorce\s+(?:is|was)\s+final\b")
# What passes from the user to someone: "gave Tommy the old Buick", "gave my bike to Sam"
_GAVE = re.compile(r"\b(?:give|gave|giving|handed|hand)\s+(?P<to>[A-Z][a-zA-Z-]+)\s+(?P<det>my\s+|our\s+|the\s+)"
                   r"(?P<old>old\s+)?(?P<thing>[A-Z][a-zA-Z0-9-]+|" + _THING_TERMS + r")\b|\b(?:gave|give|giving|"
                   r"handed)\s+(?P<det2>my\s+|our\s+|the\s+)(?P<old2>old\s+)?(?P<thing2>[A-Z][a-zA-Z0-9-]+|"
                   + _THING_TERMS + r")\s+to\s+(?P<to2>[A-Z][a-zA-Z-]+)\b")
_PRONOUNS = re.compile(r"\b(he|him|his|she|her|hers)\b", _I)
_PRONOUN_WORD = {"he": "he", "him": "he", "his": "he", "she": "she", "her": "she", "hers": "she"}


def gender_of_term(alias: str) -> str | None:
    words = alias.casefold().split()
    for size in (2, 1):
        for i in range(len(words) - size + 1):
            entry = KIN.get(" ".join(words[i:i + size]))
            if entry:
                return entry[1]
    return None


def pronouns(text: str) -> list[str]:
    return [_PRONOUN_WORD[m.group(1).casefold()] for m in _PRONOUNS.finditer(text)]


def _is_name(word: str) -> bool:
    # not_names.json too: "Thankfully, my mom..." is not someone called Thankfully who is the user's mother
    return word.casefold() not in NOT_NAMES and not not_a_name_en(word) and len(word) > 1


def _subject(word: str | None) -> Ref:
    if word is None or word.casefold() in ("i", "we"):
        return ME
    kin = _KIN_PHRASE.fullmatch(word)
    if kin is not None:
        owner = _owner(kin.group("owner"))[0] if kin.group("owner").casefold() in ("my", "our", "his", "her", "their") \
            else named(_POSSESSIVE_S.sub("", kin.group("owner")))
        term = kin.group("term").casefold()
        # "Priya's brother" is what the graph may call him until he is named
        said = f"my {term}" if owner is ME else f"{owner.name}'s {term}" if owner.name else term
        return kin_of(owner, KIN[term][0], said)
    if word.casefold() in ("he", "she", "they"):
        return pronoun(word.casefold())
    return named(word)


def _term_claim(owner: Ref, term: str, name: str, alias: str | None, *extra: str) -> Claim | None:
    term_key = term.casefold()
    if term_key in KIN:
        relation = KIN[term_key][0]
        return Claim(named(name, "person", alias, *extra), relation, owner)
    if term_key in PETS or term_key.endswith(PETS):
        return Claim(named(name, "pet", alias, *extra), "pet_of", owner)
    if term_key in THINGS:
        return Claim(owner, "owns", named(name, "thing", alias, *extra))
    return None


_CHAIN = re.compile(r"^(?:my|our)\s+(?P<adj>" + _ADJECTIVES + r")(?P<term>" + _KIN_TERMS + r")['’]s$", _I)
_PRONOUN_OWNER = {"his": "he", "her": "she", "their": "they"}


def _owner(words: str) -> tuple[Ref, list[Claim], str]:
    """Whose a term is: the Ref, the claims said on the way ("my mom's sister Jane": mom is my mother) and the
    words that make an alias with the term ("my", "my sister's", "Priya's", "her")."""
    folded = words.casefold()
    if folded in ("my", "our"):
        return ME, [], "my"
    if folded in _PRONOUN_OWNER:
        return pronoun(_PRONOUN_OWNER[folded]), [], folded
    chain = _CHAIN.match(words)
    if chain:
        term = chain.group("term").casefold()
        phrase = " ".join(["my", *chain.group("adj").casefold().split(), term])
        if term in UNIQUE:
            ref = named(term, "person", f"my {term}")
            return ref, [Claim(ref, KIN[term][0], ME)], f"{phrase}'s"
        return named(phrase), [], f"{phrase}'s"  # no kind: only a sister the graph already knows is meant
    name = _POSSESSIVE_S.sub("", words)
    return named(name, "person"), [], f"{name}'s"


def _introduce(owner_words: str, adjectives: str, term: str, name: str, died: bool = False) -> list[Claim]:
    """The claims of one introduction: `name` is the owner's `term` ("my older brother" + "Arjun")."""
    owner, said, prefix = _owner(owner_words)
    adjectives_said = adjectives.casefold().split()
    term_said = term.casefold()
    alias = " ".join([prefix, *adjectives_said, term_said])
    extra = [f"my {term_said}"] if adjectives_said and prefix == "my" else []  # asked later as "my brother"
    claim = _term_claim(owner, term, name, alias, *extra)
    if claim is None:
        return said
    if ("late" in adjectives_said or died) and claim.relation in ("wife_of", "husband_of"):
        claim = Claim(claim.subject, "late_" + claim.relation, owner)
    return [*said, claim]


def _naming(sentence: str, lowercase: bool) -> list[Claim]:
    found: list[Claim] = []
    named_at: set[int] = set()
    start = _TERM_NAME_START.match(sentence)
    if start and _is_name(start.group("name")) and (lowercase or start.group("name")[0].isupper()) and \
            not _is_verb_form(start.group("name")):
        # "wife Sue does the books", "young dog Rua is useless": terse chat drops the "my". First: whom a sentence
        # opens with is named before a pronoun later in it ("grandson Jayden … living with his mum") is resolved.
        term = start.group("term")
        if term[0].isupper() and KIN.get(term.casefold(), ("", None))[0] in _ROLES:
            # "Coach Williams is retiring", "Principal Okoye": a title said to anyone, not the user's coach
            found.append(Claim(named(start.group("name"), "person")))
        elif (claim := _term_claim(ME, term, start.group("name"), term.lower())) is not None:
            found.append(claim)
    for m in [*_NAME_IS_SAID.finditer(sentence), *_SOMEONE_NAMED.finditer(sentence)]:
        if _is_name(m.group("name")):
            found.append(Claim(named(m.group("name"), "person")))  # "her name is Priya, she's a CA …"
    for m in _MY_TERM_NAME.finditer(sentence):
        name = _POSSESSIVE_S.sub("", m.group("name"))
        if name.islower() and _is_verb_form(name):
            continue  # "our kid started basic": a verb, lowercase as a lowercase writer's names are
        if not _is_name(name) or (name.islower() and not lowercase):
            continue  # "my aunt believed in me", "my car broke": a writer who capitalises would write a name so
        if name.islower() and _PREPOSITION_AFTER.match(sentence, m.end()):
            continue  # "my mum works at the post office": a verb, which a preposition follows and a name seldom does
        if m.group("owner").casefold() not in ("my", "our") and (m.group("term")[0].isupper() or (
                "," in m.group() and not _CLOSES_APPOSITION.match(sentence, m.end()))):
            continue  # "Ruby cried leaving her best mate, Isla couldn't care less": Isla starts a clause; "called
            # her Aunt Linda": a title, not whose aunt she is
        found += _introduce(m.group("owner"), m.group("adj"), m.group("term"), name, bool(_DIED.search(sentence)))
        named_at.add(m.start())
    for m in _NAMES_TERM_NAME.finditer(sentence):
        owner, name = m.group("owner"), _POSSESSIVE_S.sub("", m.group("name"))
        if not (_is_name(owner) and _is_name(name)) or (not lowercase and (owner.islower() or name.islower())) \
                or owner.casefold() in KIN:
            continue  # "my sister's son Kabir" is the chain's (_MY_TERM_NAME), not someone called sister's
        found += _introduce(f"{owner}'s", "", m.group("term"), name)
    for m in _NAME_IS_MY_TERM.finditer(sentence):
        if _is_name(m.group("name")) and not _NOT_APPOSED.search(sentence[:m.start()]):
            found += [c for c in _introduce(m.group("owner"), m.group("adj"), m.group("term"), m.group("name"))
                      if c.relation != "owns"]
    for m in _MY_TERM_IS_NAME.finditer(sentence):
        name = _titled(sentence, m)
        if _is_name(name):
            found += _introduce(m.group("owner"), m.group("adj"), m.group("term"), name)
    for m in _HAVE_A_TERM_NAMED.finditer(sentence):
        if _is_name(m.group("name")):
            found += _introduce("my", m.group("adj"), m.group("term"), m.group("name"))
    for m in _KIDS.finditer(sentence):
        relation = _KID_RELATION.get(m.group("term").casefold(), "child_of")
        for name in (m.group("a"), m.group("b")):
            found.append(Claim(named(name, "person", f"my {m.group('term').lower()}"), relation, ME))
    for m in _TOGETHER.finditer(sentence):
        if _is_name(m.group("name")):
            found.append(Claim(named(m.group("name"), "person"), "partner_of", ME))
    parent = _PARENT_START.match(sentence)
    if parent:
        name = parent.group("name")
        found.append(Claim(named(name, "person", f"my {name.lower()}"), PARENT_NAMES[name.casefold()], ME))
    introduced = {c.subject.alias.casefold() for c in found if c.subject.alias}
    for m in _MY_TERM_ALONE.finditer(sentence):
        alias = f"{m.group('owner').lower()} {m.group('term').lower()}"
        rest = sentence[m.end():]
        if alias in introduced or rest.startswith("'s") or m.start() in named_at or \
                _PREPOSITION_AFTER.match(sentence, m.end()):
            continue  # named right here ("my wife Lena"), someone else's ("my boss's wife"), or a role somewhere
            # ("my partner on the green", "my manager at tjs"): not the one partner or boss of the user's life
        term = m.group("term").casefold()
        found.append(Claim(named(term, "person", alias), KIN[term][0], ME))
    return found


def _is_verb_form(word: str) -> bool:
    """A lowercase word of five letters or more ending as a past or a present participle does ("started",
    "visiting"): not a name, which in a lowercase writer's text looks no different."""
    return word.islower() and len(word) >= 5 and word.endswith(("ed", "ing"))


def _titled(sentence: str, m: re.Match[str]) -> str:
    """The name a pattern matched, with the names after it when it is a title ("my advisor is Professor Helen Cho":
    Professor Helen Cho, not Professor)."""
    name = m.group("name")
    if name.casefold().rstrip(".") not in _TITLES:
        return name
    more = _MORE_NAMES.match(sentence, m.end("name"))
    return name + more.group() if more else name


_ROLES = frozenset(("coach_of", "teacher_of", "boss_of", "advisor_of", "supervisor_of", "landlord_of", "caregiver_of"))
_TITLES = frozenset(("professor", "prof", "dr", "doctor", "mr", "mrs", "ms", "miss", "coach"))
_MORE_NAMES = re.compile(r"(?:\s+[A-Z][a-zA-Z'-]+){1,3}")
# "her name is Priya", "his name's Tomás": someone named, whom the pronoun then means
_NAME_IS_SAID = re.compile(r"\b(?i:his|her|their)\s+name(?:\s+is|['’]s)\s+(?P<name>[A-Z][a-zA-Z-]+)\b")
_CAPITAL_BEFORE = re.compile(r"(?:(?P<word>[A-Z][\w.'-]*)|&)\s+$")
_LIVES_AT_HOME = re.compile(r"\b(?:live|lives|living|lived|settled)\b", _I)


def _a_person(who: Ref, m: re.Match[str]) -> Ref:
    """The subject of working, studying or living somewhere is a person ("Priya works at Deloitte"), when the name
    said starts a name (not "Jie" of "Wei Jie", "Finch" of "Harrow & Finch") and is no kinship word ("Dad lives in
    Leeds": the dad the graph knows by that word)."""
    if who.name is None or who.kind is not None or who.owner is not None:
        return who
    before = _CAPITAL_BEFORE.search(m.string, 0, m.start("subj"))
    if before is not None and (before.group("word") is None or _is_name(before.group("word"))):
        return who  # a name's second word; not after "Yesterday"
    if who.name.casefold() in KIN or who.name.casefold() in PARENT_NAMES:
        return who
    return named(who.name, "person")


_NAME_THEN_COMMA = re.compile(r"(?:^|(?<=[\s:]))(?P<name>[A-Z][a-zA-Z-]+),\s*$")


def _named_just_before(sentence: str, start: int) -> Ref | None:
    """"Zainab, she's a dentist": the name a pronoun repeats, said just before it."""
    said = _NAME_THEN_COMMA.search(sentence, 0, start)
    return named(said.group("name"), "person") if said is not None and _is_name(said.group("name")) else None


def _subjects(m: re.Match[str]) -> list[Ref]:
    """Who a relation pattern's subject is: "I", a pronoun, a name, a list ("Fiona and Graeme moved to ...",
    "Imran, Sana and the baby moved to ..."), after "and" the subject of the clause it continues, or nobody said:
    the user ("Moved to Amstelveen.")."""
    if m.group("after_and") is not None:
        before = m.string[:m.start()]
        said = list(_CLAUSE_SUBJECT.finditer(before))
        if not said or _RELATIVE.search(before, said[-1].end()):
            return []  # "… Sarah, who works at Google and lives in Leeds": Sarah, whom nothing here resolves
        subject = said[-1].group("pron") or said[-1].group("subj")
        if not _is_subject(subject):
            return []
        return [_named_just_before(m.string, said[-1].start("pron")) or _subject(subject)] if said[-1].group("pron") \
            else [_subject(subject)]
    first = _subject(m.group("subj"))
    if first.pronoun is not None:
        first = _named_just_before(m.string, m.start("subj")) or first
    if m.group("subj") is not None and not _is_subject(m.group("subj")):
        return []
    if not m.group("subj2"):
        return [first]
    # several named together do something: they are people; an item that is no one ("the baby") is passed over
    others = [_subject(item) for item in _LIST_ITEM.split(m.group("subj2")) if item and _is_subject(item)
              and (_ONE_NAME.fullmatch(item) or _KIN_PHRASE.fullmatch(item))]
    if first.name is not None and first.kind is None and first.owner is None:
        first = named(first.name, "person")
    return [first, *(named(o.name, "person") if o.name is not None and o.kind is None else o for o in others)]


def _residents(m: re.Match[str]) -> list[Ref]:
    """The subjects of _IS_IN, where a parent word ("mummy and daddy", which not_names.json keeps from being a name)
    is the parent the graph knows by it."""
    words = [m.group("subj"), *(_LIST_ITEM.split(m.group("subj2")) if m.group("subj2") else [])]
    if not any(w.casefold() in PARENT_NAMES for w in words if w):
        return _subjects(m)
    return [named(w) if w.casefold() in PARENT_NAMES else _subject(w) for w in words if w and _is_subject_or_parent(w)]


def _is_subject_or_parent(word: str) -> bool:
    return word.casefold() in PARENT_NAMES or _is_subject(word)


_POSSESSIVE_S = re.compile(r"['’]s$")
_CAPITAL_I = re.compile(r"\bI\b")
_WE = re.compile(r"\bwe\b|\bwe're\b", _I)
_TRAILING = re.compile(r"(?:\s+(?:of|&))+$|[\s.,']+$")


def _org(text: str) -> str:
    return _TRAILING.sub("", text)


def _place(text: str) -> str:
    return _TRAILING.sub("", text)


def _places_and_work(sentence: str, lowercase: bool = False) -> list[Claim]:
    found: list[Claim] = []
    for m in _WORKS.finditer(sentence):
        org = named(_org(m.group("org")), "organisation")
        relation = "volunteers_at" if m.group("verb").casefold().startswith("volunteer") else "works_at"
        workers = [_a_person(who, m) for who in _subjects(m)]
        found += [Claim(who, relation, org) for who in workers] + _located(sentence, m, org, workers)
    for m in _SHIFT_AT.finditer(sentence):
        if not found and m.group("org")[0].isupper():
            shift = named(_org(m.group("org")), "organisation")
            found += [Claim(ME, "works_at", shift), *_located(sentence, m, shift)]
    for m in _EMPLOYER.finditer(sentence):
        owner = m.group("owner").casefold()
        subject = ME if owner in ("my", "our") else pronoun({"his": "he", "her": "she"}.get(owner, "they"))
        employer = named(_org(m.group("org")), "organisation")
        found += [Claim(subject, "works_at", employer), *_located(sentence, m, employer)]
    for m in _ORG_CONTACT.finditer(sentence):  # "a recruiter email from Amazon": someone the user may work for
        contact = named(_org(m.group("org")), "organisation")
        found += [Claim(contact), *_located(sentence, m, contact)]
    if not found:
        for m in list(_FIRST_DAY.finditer(sentence)) + list(_JOB_AT.finditer(sentence)):
            said = _org(m.group("org"))
            job = named(said, "organisation" if said[0].isupper() else None)
            found += [Claim(ME, "works_at", job), *(_located(sentence, m, job) if said[0].isupper() else [])]
    for m in _LAST_DAY.finditer(sentence):
        # "Last day at Infosys" says the user worked there as it ends: stated and closed at once
        left = named(_org(m.group("org")), "organisation")
        found += [Claim(ME, "works_at", left), Claim(ME, "works_at", left, ends=True), *_located(sentence, m, left)]
    for m in _STUDIES.finditer(sentence):
        school = named(_org(m.group("org")), "organisation")
        found += [Claim(_a_person(who, m), "studies_at", school) for who in _subjects(m)] + \
            _located(sentence, m, school)
    for m in _LIVES.finditer(sentence):
        place = named(_place(m.group("place")), "place")
        lives = _LIVES_AT_HOME.search(m.group()) is not None  # not "moved to": a firm moves too
        found += [Claim(_a_person(who, m) if lives else who, "lives_in", place) for who in _subjects(m)] + \
            _part_of(sentence, m, place)
    for m in _RESIDENT.finditer(sentence):
        resident = next(g for g in m.groups() if g)
        found.append(Claim(ME, "lives_in", named(_place(resident), "place")))
    for m in list(_MY_HOME_IN.finditer(sentence)) + list(_WE_ARE_IN.finditer(sentence)):
        home = named(_place(m.group("place")), "place")
        found += [Claim(ME, "lives_in", home), *_part_of(sentence, m, home)]
    for m in _BASED.finditer(sentence):
        found.append(Claim(named(_org(m.group("org"))), "located_in", named(_place(m.group("place")), "place")))
    households = entity_homes_en.household_claims(sentence, KIN, UNIQUE, _is_name)
    return found + _roles_and_homes(sentence, lowercase) + households


def _roles_and_homes(sentence: str, lowercase: bool = False) -> list[Claim]:
    found: list[Claim] = []
    roles = list(_ROLE_AT.finditer(sentence))
    if lowercase and not roles:
        roles = list(_ROLE_AT_ANY_CASE.finditer(sentence))  # "i'm an auditor at deloitte"
    for m in roles:
        role = m.group("role").casefold().split()[-1].removesuffix("s")
        relation = _ROLE_RELATION.get(role, "works_at")
        if relation is not None and _is_subject(m.group("subj")):
            org = named(_org(m.group("org")), "organisation")
            found += [Claim(_a_person(_subject(m.group("subj")), m), relation, org), *_located(sentence, m, org)]
    for m in _MY_WORK_AT.finditer(sentence):
        owner = _owner(m.group("owner"))[0]
        relation = "interns_at" if m.group("what").casefold() == "internship" else "works_at"
        org = named(_org(m.group("org")), "organisation")
        found += [Claim(owner, relation, org), *_located(sentence, m, org)]
        if (m.group("when") or "").strip().casefold() in ("old", "former", "previous"):
            found.append(Claim(owner, relation, org, ends=True))
    for m in _ADMITTED.finditer(sentence):
        if _is_subject(m.group("subj")):
            found.append(Claim(_subject(m.group("subj")), "admitted_to", named(_org(m.group("org")), "organisation")))
    for m in _CALLED_FROM.finditer(sentence):
        if _is_subject(m.group("subj")) and not not_a_name_en(m.group("place").split()[0]):
            found.append(Claim(_a_person(_subject(m.group("subj")), m), "lives_in",
                               named(_place(m.group("place")), "place"), inferred=True))
    for m in _IS_AT.finditer(sentence):
        said = _org(m.group("org"))
        if _is_subject(m.group("subj")) and said[0].isupper() and not not_a_name_en(said.split()[0]):
            org = named(said, "organisation")
            found += [Claim(_a_person(_subject(m.group("subj")), m), "works_at", org), *_located(sentence, m, org)]
    for m in _IS_IN.finditer(sentence):
        if _STAY.match(sentence, m.end()):
            continue
        where = _place(m.group("place"))
        words = where.split()
        if words[0].casefold() in _NOT_WHERE or words[-1].casefold() in _NOT_WHERE or (
                len(words) > 1 and words[0].isupper() and len(words[0]) > 1):
            continue  # "in UT Austin", "in UC Davis": an abbreviation before a name is a campus, not a town
        found += [Claim(_a_person(who, m), "lives_in", named(where, "place")) for who in _residents(m)
                  if who.pronoun is None or who.pronoun != "it"] + _part_of(sentence, m, named(where, "place"))
    for m in _HERE_IN.finditer(sentence):
        found.append(Claim(ME, "lives_in", named(_place(m.group("place")), "place")))
    for m in _FROM.finditer(sentence):
        if m.group("home"):
            found.append(Claim(_owner(m.group("owner"))[0], "from", named(_place(m.group("home")), "place")))
        elif _is_subject(m.group("subj")):
            found.append(Claim(_subject(m.group("subj")), "from", named(_place(m.group("place")), "place")))
    for m in _MOVED_IN_WITH.finditer(sentence):
        other = m.group("with")
        if _is_subject(m.group("subj")):
            found.append(Claim(_subject(m.group("subj")), "lives_with", _subject(_OBJECT_PRONOUN.get(other, other))))
    for m in _GAVE.finditer(sentence):
        thing = _thing(m.group("thing") or m.group("thing2"), m.group("det") or m.group("det2"),
                       m.group("old") or m.group("old2"))
        to = m.group("to") or m.group("to2")
        if _is_name(to):
            found += [Claim(ME, "owns", thing), Claim(ME, "owns", thing, ends=True),
                      Claim(named(to, "person"), "owns", thing)]
    return found


def _thing(word: str, determiner: str, old: str | None) -> Ref:
    """A thing as it was said: "the old Buick" is also "the Buick" and "Buick"; "my car" is the car."""
    det = determiner.strip().casefold()
    aliases = [f"{det} {word}", *([f"{det} old {word}"] if old else [])] if word[0].isupper() else [f"{det} {word}"]
    name = word if word[0].isupper() else f"{det} {word}"
    return named(name, "thing", *aliases)


# "Northside ISD in San Antonio", "Alamo Heights, San Antonio": where an organisation is, what a place is part of
# also "Lamar Middle School here in Austin", "Malik Pharmacy on Stratford Road in Sparkhill": a street on the way
_IN_PLACE = re.compile(r",?\s+(?:on\s+(?:[A-Z][\w.'-]*\s+)+)?(?:here\s+|(?P<away>out|over|up|down)\s+)?(?:in|near)\s+"
                       + _PLACE)
_COMMA_PLACE = re.compile(r",\s+" + _PLACE + r"(?=\s*(?:$|[.!;,]))")


def _located(sentence: str, m: re.Match[str], org: Ref, who: list[Ref] | None = None) -> list[Claim]:
    """Where the organisation is. "with Ergon up in Cairns", "for Glencore out at Mount Isa": up, out, over or down
    say where the one working is, far from the user — where the subjects (`who`) live, not where the firm is."""
    where = _IN_PLACE.match(sentence, m.end("org"))
    if where is None:
        return []
    place = named(_place(where.group("place")), "place")
    if where.group("away"):
        return [Claim(one, "lives_in", place) for one in who or []]
    return [Claim(org, "located_in", place)]


def _part_of(sentence: str, m: re.Match[str], place: Ref) -> list[Claim]:
    bigger = _COMMA_PLACE.match(sentence, m.end("place"))
    return [Claim(place, "part_of", named(_place(bigger.group("place")), "place"))] if bigger else []


_OBJECT_PRONOUN = {"me": "I", "us": "we", "him": "he", "her": "she", "them": "they"}


def _is_subject(word: str) -> bool:
    """A pronoun or a name: not "Yesterday" or "Honestly" opening a sentence."""
    return word.casefold() in ("i", "we", "he", "she", "they") or _is_name(word) or \
        _KIN_PHRASE.fullmatch(word) is not None


def _endings(sentence: str) -> list[Claim]:
    found: list[Claim] = []
    if _BROKE_UP.search(sentence) or _DIVORCED.search(sentence):
        found.append(Claim(ME, "couple", None, ends=True))
    for m in _PET_GONE.finditer(sentence):
        found.append(Claim(named(m.group("name") or m.group("name2")), "pet_of", None, ends=True))
    for m in _SOLD.finditer(sentence) if not _WE.search(sentence) else ():  # "we're selling": whose, and with whom?
        # "sold the Golf" says the user had it as it ends: stated and closed at once, as "last day at" is; "going to
        # sell the Golf" only that the user has it
        sold = _thing(m.group("thing"), m.group("det"), m.group("old"))
        found.append(Claim(ME, "owns", sold))
        if m.group("verb").casefold() in ("sold", "gave away"):
            found.append(Claim(ME, "owns", sold, ends=True))
    for m in _GONE_THING.finditer(sentence):
        found.append(Claim(ME, "owns", named(m.group("thing")), ends=True))
    for m in _JOB_ENDED.finditer(sentence):
        if _is_subject(m.group("subj")):
            for relation in ("works_at", "interns_at"):
                found.append(Claim(_subject(m.group("subj")), relation, None, ends=True))
    for m in _GRADUATED.finditer(sentence):
        if not _is_subject(m.group("subj")):
            continue
        who = _subject(m.group("subj"))
        if m.group("org"):
            school = named(_org(m.group("org")), "organisation")
            found += [Claim(who, "studies_at", school), Claim(who, "studies_at", school, ends=True)]
        else:
            found.append(Claim(who, "studies_at", None, ends=True))
    for m in _MOVED_OUT.finditer(sentence):
        if _is_subject(m.group("subj")):
            for relation in ("lives_with", "roommate_of", "flatmate_of", "housemate_of"):
                found.append(Claim(_subject(m.group("subj")), relation, None, ends=True))
    for m in _COUPLE_NOW.finditer(sentence):
        what = "engaged" if "engaged" in (m.group("what"), m.group("what2")) else "married"
        one = m.group("a") or m.group("c") or m.group("d")
        if m.group("we"):
            found.append(Claim(ME, what))
        elif one and _is_name(one):
            other = named(m.group("b"), "person") if m.group("b") and _is_name(m.group("b")) else ME
            found.append(Claim(named(one, "person"), what, other))
    return found


def writes_in_lowercase(sentences: list[str]) -> bool:
    """No sentence starts with a capital and "I" is written "i": then "my roommate jordan" names Jordan."""
    return not any(s[0].isupper() for s in sentences) and not _CAPITAL_I.search(" ".join(sentences))


def claims(text: str) -> list[Claim]:
    found: list[Claim] = []
    said_with_titles = [s for s in (piece.strip() for piece in _SENTENCES.split(text)) if s]
    # the people named with a title first ("Mrs. Linh Nguyen": Linh Nguyen), then every rule reads the name alone
    titled = entity_titles_en.claims(said_with_titles)
    titled += [c for s in said_with_titles for c in entity_family_words_en.claims(s)]
    sentences = [entity_family_words_en.as_names(entity_titles_en.without_titles(s)) for s in said_with_titles]
    lowercase = writes_in_lowercase(sentences)
    if lowercase:  # "moved to pilsen w jasmine": the names the grammar marks, capitalised as the rules read names
        sentences = [entity_lowercase_en.recase(s, _is_name) for s in sentences]
    for sentence in sentences:
        found += _naming(sentence, lowercase)
    # Names in passing after the named terms ("my dog Oliver ... Oliver's bone": a pet, not a person) and before the
    # relations, whose subject ("Melanie moved to Boston") must be known by then.
    found += titled + entity_names_en.claims(sentences)
    for sentence in sentences:
        said = _IM.sub("i'm", sentence) if lowercase else sentence  # "im a line cook at ..."
        found += _places_and_work(said, lowercase) + _endings(said)
    # "come up here in May": a month, a day or a holiday is when, not where (not_names.json lists them)
    return [c for c in found if not any(ref is not None and ref.kind == "place" and ref.name is not None
                                        and not_a_name_en(ref.name) for ref in (c.subject, c.object))]
