"""Fit /context's relevance bar (core/relevance_bar.py BARS) on bench/context.py's development half.

    .venv/bin/python bench/context.py --stores /tmp/ctx-dev                  # once: the development half's stores
    .venv/bin/python bench/context_bar.py --stores /tmp/ctx-dev              # collect the candidates, fit, print BARS
    .venv/bin/python bench/context_bar.py                                    # refit on the rows collected last time
    .venv/bin/python bench/context_bar.py --replay                           # what the shipped BARS decide on them

Each probe is asked through ReadPath.recall with min_relevance 0, so every candidate /context could inject comes
back (the top 5, less echoes, the assistant's replies and superseded memories), with what the bar reads
(relevance_bar.measures) and whether each holds the answer or a stale value (bench/context.py's judge). The bar
decides for questions that speak to the user's life (ReadPath.addressed); the others get nothing, as before. Fitted
on those: a probe whose answer is among its candidates (1) against small talk and unanswerable questions (0); an
answerable probe whose answer is not among the candidates is left out (no bar can bring it). A logistic regression
per language on (best relevance, best scaled cosine), its threshold set so that at most --target-false of all the
small talk / unanswerable questions get something (none passes below relevance_bar.MIN_RELEVANCE), folded into the
intercept. Only the languages in relevance_bar.BARS use theirs (see there why English does not).
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from context import SimulatedClock, judge, load
from jiyi import build_embedder, build_store
from jiyi.core.intent import asks_to_be_reminded
from jiyi.core.messages import ChatMessage
from jiyi.core.relevance_bar import BARS, MIN_RELEVANCE, Bar, cosine, language, measures, scaled
from jiyi.memory import AsyncMemory
from jiyi.read_path import ReadSettings, RecallRequest
from jiyi.records import Scope

ROWS = Path("/tmp/context-bar-rows.json")


async def collect_user(memory: AsyncMemory, clock: SimulatedClock, user: dict[str, Any]) -> list[dict[str, Any]]:
    clock.now = datetime.fromisoformat(user["probes_at"]).astimezone(UTC)
    read = memory.read_path
    asked = [(p["question"], p) for p in user["probes"]] + [(n["text"], None) for n in user["nothing"]]
    rows = []
    for question, probe in asked:
        request = RecallRequest([ChatMessage(role="user", content=question)], Scope(user_id=user["user_id"]),
                                min_relevance=0.0)
        hits = (await read.recall(request)).hits
        verdicts = [judge(await memory.get(h.record.id), probe) if probe else (False, False) for h in hits]
        best_relevance, best_cosine = measures(question, hits, read.embedder.calibration)
        own = read.embedder.calibration.for_query(question)
        # The bar decides for these (persona questions keep the usual bar).
        addressed = await read.addressed(question, hits) in ("user", "named")
        rows.append({"language": language(question), "question": question, "answerable": probe is not None,
                     "kind": probe["kind"] if probe else "nothing", "addressed": addressed,
                     "best_relevance": best_relevance, "best_cosine": best_cosine,
                     "reminder": asks_to_be_reminded(question),
                     "relevances": [h.relevance for h in hits],
                     "cosines": [None if (c := cosine(h)) is None else scaled(c, own) for h in hits],
                     "answers": [answer for answer, _ in verdicts], "stale": [stale for _, stale in verdicts],
                     "after_change": bool(probe) and probe["kind"] == "after_change"})
    return rows


PerUser = Callable[[AsyncMemory, SimulatedClock, dict[str, Any]], Awaitable[list[dict[str, Any]]]]


async def each_user(split: str, stores: Path, languages: list[str], per_user: PerUser) -> list[dict[str, Any]]:
    """`per_user`'s rows for each user of the split, read from the stores bench/context.py built."""
    embedder = build_embedder("e5")
    rows: list[dict[str, Any]] = []
    for lang in languages:
        for user in load(lang, split):
            path = stores / f"{user['user_id']}.db"
            if not path.exists():
                raise SystemExit(f"{path} is missing: run bench/context.py --stores {stores} first")
            clock = SimulatedClock()
            memory = AsyncMemory(build_store(f"sqlite:///{path}"), embedder, clock=clock,
                                 read_settings=ReadSettings(refresh_access=False))
            try:
                rows += await per_user(memory, clock, user)
            finally:
                await memory.close()
    return rows


async def collect(split: str, stores: Path, languages: list[str]) -> list[dict[str, Any]]:
    return await each_user(split, stores, languages, collect_user)


def auc(positive: np.ndarray, negative: np.ndarray) -> float:
    if not len(positive) or not len(negative):
        return float("nan")
    return float((positive[:, None] > negative[None, :]).mean() + (positive[:, None] == negative[None, :]).mean() / 2)


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = 1.0, steps: int = 100) -> np.ndarray:
    """Weights, the intercept last, of an L2-regularised logistic regression (standardised x), by Newton's method."""
    design = np.hstack([x, np.ones((len(x), 1))])
    weights = np.zeros(design.shape[1])
    penalty = np.eye(design.shape[1]) * l2
    penalty[-1, -1] = 0.0
    for _ in range(steps):
        p = 1 / (1 + np.exp(-design @ weights))
        step = np.linalg.solve(design.T @ (design * (p * (1 - p))[:, None]) + penalty,
                               design.T @ (p - y) + penalty @ weights)
        weights -= step
        if np.abs(step).max() < 1e-10:
            break
    return weights


def fit(rows: list[dict[str, Any]], lang: str, target_false: float) -> Bar:
    mine = [r for r in rows if r["language"] == lang and r["addressed"] and r["answers"]
            and (not r["answerable"] or any(r["answers"]))]
    x = np.array([[r["best_relevance"], r["best_cosine"]] for r in mine])
    y = np.array([1.0 if r["answerable"] else 0.0 for r in mine])
    mean, scale = x.mean(axis=0), x.std(axis=0) + 1e-9
    weights = fit_logistic((x - mean) / scale, y)
    slopes = weights[:-1] / scale
    intercept = weights[-1] - float((slopes * mean).sum())
    score = x @ slopes + intercept
    print(f"{lang}: {int(y.sum())} answerable (answer among the candidates), {int((1 - y).sum())} nothing-answers; "
          f"AUC relevance {auc(x[y == 1, 0], x[y == 0, 0]):.3f}, cosine {auc(x[y == 1, 1], x[y == 0, 1]):.3f}, "
          f"both {auc(score[y == 1], score[y == 0]):.3f}")
    # The threshold: the k-th highest score of the nothing-answers, k = the share allowed of all of them (the ones
    # not addressed get nothing anyway), halfway to the next.
    nothing = sum(1 for r in rows if r["language"] == lang and not r["answerable"])
    negatives = np.sort(score[(y == 0) & (x[:, 0] >= MIN_RELEVANCE)])[::-1]
    allowed = int(target_false * nothing)
    threshold = (negatives[allowed - 1] + negatives[allowed]) / 2 if 0 < allowed < len(negatives) else \
        negatives[0] + 1e-6 if allowed == 0 else negatives[-1] - 1e-6
    return Bar(round(float(slopes[0]), 3), round(float(slopes[1]), 3), round(float(intercept - threshold), 3))


USUAL_BAR = Bar(1.0, 0.0, -0.5)  # ReadSettings.min_relevance (0.5), where no bar is fitted


def replay(rows: list[dict[str, Any]], bars: dict[str, Bar]) -> None:
    """What the question stage would inject with `bars` (every candidate once the bar is cleared; no reminder's lower
    bar), the usual bar where `bars` has none."""
    for lang in sorted({r["language"] for r in rows}):
        mine = [r for r in rows if r["language"] == lang]
        answerable = [r for r in mine if r["answerable"]]
        nothing = [r for r in mine if not r["answerable"]]
        bar = bars.get(lang, USUAL_BAR)

        def injects(row: dict[str, Any], bar: Bar = bar) -> bool:
            return bool(row["addressed"] and row["answers"]) and row["best_relevance"] >= MIN_RELEVANCE and \
                bar.score(row["best_relevance"], row["best_cosine"]) >= 0

        print(f"  {lang} ({'fitted' if lang in bars else 'usual'} bar): answer injected "
              f"{np.mean([injects(r) and any(r['answers']) for r in answerable]):.1%} "
              f"(among the candidates {np.mean([any(r['answers']) for r in answerable]):.1%}) of {len(answerable)}; "
              f"stale {sum(injects(r) and any(r['stale']) for r in answerable if r['after_change'])}; "
              f"something injected {np.mean([injects(r) for r in nothing]):.1%} of {len(nothing)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", default="dev", choices=["dev", "dev2", "dev3"], help="never the held-out half")
    parser.add_argument("--stores", type=Path, help="bench/context.py's stores for the split: collect the rows")
    parser.add_argument("--rows", type=Path, default=ROWS)
    parser.add_argument("--languages", nargs="*", default=["zh", "en"])
    parser.add_argument("--target-false", type=float, default=0.13,
                        help="the share of small talk / unanswerable questions allowed to get something")
    parser.add_argument("--replay", action="store_true", help="only replay the shipped BARS on the rows")
    args = parser.parse_args()
    if args.stores:
        rows = asyncio.run(collect(args.split, args.stores, args.languages))
        args.rows.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
    rows = json.loads(args.rows.read_text(encoding="utf-8"))
    print("shipped BARS:")
    replay(rows, BARS)
    if args.replay:
        return
    fitted = {lang: fit(rows, lang, args.target_false) for lang in args.languages}
    print("fitted:")
    replay(rows, fitted)
    for lang, bar in fitted.items():
        print(f'    "{lang}": {bar!r},')
    print("the usual bar (relevance >= 0.5):")
    replay(rows, {})


if __name__ == "__main__":
    main()
