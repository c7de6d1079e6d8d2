"""Validate the labelled entity/relation conversation sets and print their counts.

    python bench/check_entity_eval.py [bench/data/entity_eval.json bench/data/entity_eval_holdout.json]

Checks: the file loads as JSON; every user has 8-20 turns with consecutive indices and a date,
3-8 entities with unique ids, a mention list per turn; every id referenced by a relation or a mention
is "user" or a listed entity; relation turns and invalid turns are in range and invalid_turn >= turn;
3-6 questions, each with evidence turns in range; the counts stored in the file match the data.
Exits non-zero on the first file with a problem.
"""
import collections
import json
import re
import sys

KINDS = {"person", "pet", "place", "organisation", "thing", "event"}
QUESTION_KINDS = {"single_hop", "alias", "two_hop", "time"}
DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def check_user(u):
    errs = []
    uid = u.get("id", "?")
    turns = u["turns"]
    n = len(turns)
    if not 8 <= n <= 20:
        errs.append(f"{uid}: {n} turns")
    for i, t in enumerate(turns):
        if t["index"] != i:
            errs.append(f"{uid}: turn {i} has index {t['index']}")
        if not DATE.match(t["date"]):
            errs.append(f"{uid}: turn {i} date {t['date']!r}")
        if not t["user"].strip() or not t["assistant"].strip():
            errs.append(f"{uid}: turn {i} empty text")
    dates = [t["date"] for t in turns]
    if dates != sorted(dates):
        errs.append(f"{uid}: dates not in order")
    ids = [e["id"] for e in u["entities"]]
    if len(set(ids)) != len(ids) or "user" in ids:
        errs.append(f"{uid}: duplicate entity ids or 'user' listed")
    if not 3 <= len(ids) <= 8:
        errs.append(f"{uid}: {len(ids)} entities")
    known = set(ids) | {"user"}
    for e in u["entities"]:
        if e["kind"] not in KINDS:
            errs.append(f"{uid}: entity {e['id']} kind {e['kind']!r}")
        if not e["name"] or not isinstance(e["aliases"], list):
            errs.append(f"{uid}: entity {e['id']} name/aliases")
    for r in u["relations"]:
        for end in (r["source"], r["target"]):
            if end not in known:
                errs.append(f"{uid}: relation refers to unknown {end!r}")
        if not re.match(r"^[a-z][a-z_]*$", r["relation"]):
            errs.append(f"{uid}: relation name {r['relation']!r}")
        if not 0 <= r["turn"] < n:
            errs.append(f"{uid}: relation turn {r['turn']} out of range")
        it = r["invalid_turn"]
        if it is not None and not (0 <= it < n and it >= r["turn"]):
            errs.append(f"{uid}: relation invalid_turn {it} bad")
    if [m["turn"] for m in u["mentions"]] != list(range(n)):
        errs.append(f"{uid}: mentions do not cover each turn once")
    for m in u["mentions"]:
        for x in m["entities"] + m["implicit"]:
            if x not in known:
                errs.append(f"{uid}: mention of unknown {x!r} in turn {m['turn']}")
        if not set(m["implicit"]) <= set(m["entities"]):
            errs.append(f"{uid}: implicit not a subset of entities in turn {m['turn']}")
    qs = u["questions"]
    if not 3 <= len(qs) <= 6:
        errs.append(f"{uid}: {len(qs)} questions")
    for q in qs:
        if q["kind"] not in QUESTION_KINDS:
            errs.append(f"{uid}: question kind {q['kind']!r}")
        if not q["question"] or not q["answer"] or not q["evidence_turns"]:
            errs.append(f"{uid}: empty question/answer/evidence")
        for t in q["evidence_turns"]:
            if not 0 <= t < n:
                errs.append(f"{uid}: evidence turn {t} out of range")
    return errs


def counts(users):
    c = {"users": len(users), "by_language": dict(collections.Counter(u["language"] for u in users))}
    c["turns"] = sum(len(u["turns"]) for u in users)
    c["entities"] = sum(len(u["entities"]) for u in users)
    c["entities_by_kind"] = dict(sorted(collections.Counter(e["kind"] for u in users for e in u["entities"]).items()))
    c["aliases"] = sum(len(e["aliases"]) for u in users for e in u["entities"])
    c["relations"] = sum(len(u["relations"]) for u in users)
    c["relations_closed"] = sum(1 for u in users for r in u["relations"] if r["invalid_turn"] is not None)
    c["relation_names"] = len({r["relation"] for u in users for r in u["relations"]})
    c["mentions"] = sum(len(m["entities"]) for u in users for m in u["mentions"])
    c["implicit_mentions"] = sum(len(m["implicit"]) for u in users for m in u["mentions"])
    c["questions"] = sum(len(u["questions"]) for u in users)
    c["questions_by_kind"] = dict(sorted(collections.Counter(q["kind"] for u in users for q in u["questions"]).items()))
    return c


def check_file(path):
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    errs = []
    if not isinstance(data.get("description"), str):
        errs.append("no description")
    users = data["users"]
    if len({u["id"] for u in users}) != len(users):
        errs.append("duplicate user ids")
    for u in users:
        errs.extend(check_user(u))
    got = counts(users)
    if data.get("counts") != got:
        errs.append(f"stored counts differ from the data: {got}")
    return errs, got


def main(paths):
    bad = False
    for p in paths:
        errs, got = check_file(p)
        print(p, "OK" if not errs else f"{len(errs)} problem(s)")
        for e in errs:
            print("  ", e)
        print("  ", json.dumps(got, ensure_ascii=False))
        bad = bad or bool(errs)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["bench/data/entity_eval.json", "bench/data/entity_eval_holdout.json"]))
