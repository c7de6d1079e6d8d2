"""Every measured figure of the README and docs/ is the one in the bench/results file it comes from, held-out figures
beside the tuned ones: each is written here as the sentence it stands in, with the JSON keys it is read from, so a
figure that drifts from its file (or a file re-run without its page) fails. The pages' links resolve, and `make bench`
runs what docs/benchmarks.md says it runs."""

from __future__ import annotations

import json
import re
import statistics
import string
from functools import cache
from typing import Any

import pytest

from tests.markdown import ROOT, page

RESULTS = ROOT / "bench" / "results"


@cache
def results(name: str) -> Any:
    return json.loads((RESULTS / name).read_text(encoding="utf-8"))


class _Figures(string.Formatter):
    """'{all/precision:.3f}' is results[...]["all"]["precision"]; a spec ending in 'p' is a share written as a
    percentage ('{x:.1p}' of 0.825 is '82.5')."""

    def __init__(self, data: Any) -> None:
        self.data = data

    def get_field(self, field_name: str, args: Any, kwargs: Any) -> tuple[Any, str]:
        value = self.data
        for key in field_name.split("/"):  # a "/" inside a key is written "~"
            key = key.replace("~", "/")
            value = value[int(key)] if isinstance(value, list) else value[key]
        return value, field_name

    def format_field(self, value: Any, format_spec: str) -> str:
        if format_spec.endswith("p"):
            return format(value * 100, format_spec[:-1] + "f")
        return format(value, format_spec)


def _throughput(name: str, server: str, memories: int, clients: int) -> float:
    return statistics.median(r["req_per_s"] for r in results(name)["rounds"]
                             if r["server"] == server and r["memories"] == memories and r["clients"] == clients)


def _quiet_throughput() -> dict[str, float]:
    name = "throughput-quiet-2k.json"
    head = {c: _throughput(name, "head", 2000, c) for c in (8, 64)}
    base = {c: _throughput(name, "baseline", 2000, c) for c in (8, 64)}
    return {"8": head[8], "64": head[64], "ratio8": head[8] / base[8], "ratio64": head[64] / base[64]}


EXTRACTION_ROW = ("| {all/precision:.3f} | {all/recall:.3f} | {zh/precision:.3f} / {zh/recall:.3f} "
                  "| {en/precision:.3f} / {en/recall:.3f} | {add_ms_p50:.1f} ms |")
E5, USE = "embedders/e5/hybrid/quality", "embedders/use/hybrid/quality"

# (page, results file, the text as the page writes it)
FIGURES: list[tuple[str, str, str]] = [
    ("docs/benchmarks.md", "context-locomo.json",
     "/context injects the evidence for {results/locomo/evidence_injected:.1p} % of the questions, and for "
     "{results/locomo/injected_where_search_top5_holds_it:.1p} % of those whose evidence /search's top 5 holds."),
    ("docs/benchmarks.md", "mem0-side-by-side.json",
     "jiyi {summary/0/jiyi/req_per_s:.1f} searches/s against mem0's {summary/0/mem0/req_per_s:.1f} with 8 clients "
     "({summary/0/ratio:.2f}×), {summary/1/jiyi/req_per_s:.1f} against {summary/1/mem0/req_per_s:.1f} with 64 "
     "({summary/1/ratio:.2f}×); server CPU per search {summary/0/jiyi/cpu_ms_per_request:.1f} against "
     "{summary/0/mem0/cpu_ms_per_request:.1f} ms ({summary/0/mem0/cpu_ms_per_request_with_embedder:.1f} ms with "
     "mem0's embeddings)"),
    ("README.md", "extraction.json", "(tuned set: precision {all/precision:.3f}, recall {all/recall:.3f};"),
    ("README.md", "extraction-extraction_eval_holdout.json",
     "held-out set: {all/precision:.3f} / {all/recall:.3f})"),
    ("README.md", "locomo.json", "LoCoMo dev, any@10: {modes/infer=false/retrieval/1-4/any@10:.1p} %"),
    ("docs/write-path.md", "extraction.json",
     "precision {all/precision:.3f}, recall {all/recall:.3f} there"),
    ("docs/write-path.md", "extraction-extraction_eval_holdout.json",
     "precision {all/precision:.3f}, recall {all/recall:.3f} (Chinese {zh/precision:.3f} / {zh/recall:.3f}, "
     "English {en/precision:.3f} / {en/recall:.3f}). add() p50"),
    ("docs/write-path.md", "extraction.json", "add() p50 {add_ms_p50:.1f} ms"),
    ("docs/write-path.md", "extraction-extraction_eval_holdout.json", "(held-out {add_ms_p50:.1f} ms)"),
    ("docs/read-path.md", "lexicon-dev.json",
     "related pairs met {results/en/related/share:.3f} in English and {results/zh/related/share:.3f} in Chinese"),
    ("docs/read-path.md", "lexicon-holdout.json",
     "{results/en/related/share:.3f} and {results/zh/related/share:.3f} on the held-out half"),
    ("docs/read-path.md", "lexicon-dev.json",
     "hard negatives wrongly met {results/en/hard_negative/share:.3f} / {results/zh/hard_negative/share:.3f}"),
    ("docs/read-path.md", "lexicon-holdout.json",
     "held-out {results/en/hard_negative/share:.3f} / {results/zh/hard_negative/share:.3f})"),
    ("docs/rest-and-sdks.md", "categories.json", "{results/both/ms_per_fact:.2f} ms of CPU a fact"),
    ("docs/rest-and-sdks.md", "categories.json",
     "right for {results/both/all/main:.1p} % of memories and one of theirs for {results/both/all/any:.1p} %"),
    ("docs/benchmarks.md", "extraction.json", "| tuned (`extraction_eval.json`, {turns} turns) " + EXTRACTION_ROW),
    ("docs/benchmarks.md", "extraction-extraction_eval_holdout.json",
     "| held-out (`extraction_eval_holdout.json`, {turns} turns) " + EXTRACTION_ROW),
    ("docs/benchmarks.md", "categories.json",
     "the main category right for {results/both/all/main:.3f} (Chinese {results/both/zh/main:.3f}, English "
     "{results/both/en/main:.3f}), one of the memory's for {results/both/all/any:.3f}, "
     "{results/both/ms_per_fact:.3f} ms of CPU a fact"),
    ("docs/benchmarks.md", "categories.json", "the dev half of `category_eval.json` ({items} memories)"),
    ("docs/benchmarks.md", "categories-holdout.json",
     "(`category_eval_holdout.json`, {items} memories, run once, `categories-holdout.json`): the main category "
     "right for {results/both/all/main:.3f} (Chinese {results/both/zh/main:.3f}, English "
     "{results/both/en/main:.3f}), one of the memory's for {results/both/all/any:.3f}."),
    ("docs/benchmarks.md", "scale.json",
     "| search in process, query embedding included | {results/1/search_inproc_ms/p50:.1f} / "
     "{results/1/search_inproc_ms/p99:.1f} | {results/4/search_inproc_ms/p50:.1f} / "
     "{results/4/search_inproc_ms/p99:.1f} |"),
    ("docs/benchmarks.md", "scale.json",
     "| search over HTTP (`POST /search`) | {results/1/search_http_ms/p50:.1f} / {results/1/search_http_ms/p99:.1f} "
     "| {results/4/search_http_ms/p50:.1f} / {results/4/search_http_ms/p99:.1f} |"),
    ("docs/benchmarks.md", "scale.json",
     "| add, `infer=false`, 100 messages per call | {results/1/add_inproc/memories_per_s:.1f} memories/s "
     "| {results/4/add_inproc/memories_per_s:.1f} memories/s |"),
    ("docs/benchmarks.md", "embedders.json",
     "| MRR@10, Chinese / English / cross-lingual | "
     + " | ".join(f"{{{q}/zh/mrr@10:.2f}} / {{{q}/en/mrr@10:.2f}} / {{{q}/cross/mrr@10:.2f}}" for q in (E5, USE))
     + " |"),
    ("docs/benchmarks.md", "locomo.json",
     "| SQLite | {modes/infer=false/retrieval/1-4/any@10:.1p} % (search p50 / p99 "
     "{modes/infer=false/latency_ms/per_call/p50:.1f} / {modes/infer=false/latency_ms/per_call/p99:.1f} ms) "
     "| {modes/infer=true/retrieval/1-4/any@10:.1p} % ({modes/infer=true/latency_ms/per_call/p50:.1f} / "
     "{modes/infer=true/latency_ms/per_call/p99:.1f} ms) |"),
    ("docs/benchmarks.md", "locomo-plain-infer-false.json",
     "(`--ingest plain`) | {modes/infer=false/retrieval/1-4/any@10:.1p} % |"),
    ("docs/benchmarks.md", "locomo-plain-infer-true.json",
     "(`--ingest plain`) | 82.8 % | {modes/infer=true/retrieval/1-4/any@10:.1p} % |"),
    ("docs/benchmarks.md", "locomo-postgresql-infer-false.json",
     "| PostgreSQL | {modes/infer=false/retrieval/1-4/any@10:.1p} % |"),
    ("docs/benchmarks.md", "locomo-postgresql-infer-true.json",
     "| PostgreSQL | 82.5 % | {modes/infer=true/retrieval/1-4/any@10:.1p} % |"),
    ("docs/benchmarks.md", "context-dev.json",
     "| dev (`context-dev.json`) | {results/zh/answer_injected:.1p} % ({results/zh/answer_at_rank_1:.1p} %) "
     "| {results/en/answer_injected:.1p} % ({results/en/answer_at_rank_1:.1p} %) |"),
    *(("docs/benchmarks.md", f"entities-{name}.json",
       f"| {label} (`entities-{name}.json`) | "
       "{offline/zh/relation_precision:.3f} / {offline/zh/relation_recall:.3f} "
       "| {offline/en/relation_precision:.3f} / {offline/en/relation_recall:.3f} |")
      for name, label in (("dev", "dev"), ("dev2", "second dev set"),
                          ("dev3", "third dev set, written blind, its wrong relations since read"),
                          ("holdout", "held-out"))),
    ("docs/benchmarks.md", "context-dev2.json",
     "| second dev half, written blind, checked but not tuned on (`context-dev2.json`) | "
     "{results/zh/answer_injected:.1p} % ({results/zh/answer_at_rank_1:.1p} %) | {results/en/answer_injected:.1p} % "
     "({results/en/answer_at_rank_1:.1p} %) |"),
    ("docs/benchmarks.md", "context-dev3.json",
     "| third dev half, written blind, never tuned on (`context-dev3.json`) | {results/zh/answer_injected:.1p} % "
     "({results/zh/answer_at_rank_1:.1p} %) | {results/en/answer_injected:.1p} % "
     "({results/en/answer_at_rank_1:.1p} %) |"),
    ("docs/benchmarks.md", "context-holdout.json",
     "| held-out (`context-holdout.json`) | {results/zh/answer_injected:.1p} % ({results/zh/answer_at_rank_1:.1p} %) "
     "| {results/en/answer_injected:.1p} % ({results/en/answer_at_rank_1:.1p} %) |"),
    ("docs/benchmarks.md", "lifecycle.json",
     "{settings/users} simulated users chatting daily for {settings/days} days"),
    ("docs/benchmarks.md", "lifecycle.json",
     "Live memories grow at most {verdict/growth_pct_per_month_after_month_2/value:.1f} % a month after month 2, "
     "{verdict/compression_vs_no_lifecycle/value:.2f} times fewer"),
    ("docs/benchmarks.md", "lifecycle.json", "found in the top 5 (recall {verdict/recall_at_5/value:.1f})"),
    ("docs/benchmarks.md", "console-100k-sqlite-after.json",
     "{pages/overview (counts, retention now~7~30 days, queue)/wall_p50_ms:.1f} ms on SQLite"),
    ("docs/benchmarks.md", "console-100k-postgresql-after.json",
     "{pages/overview (counts, retention now~7~30 days, queue)/wall_p50_ms:.1f} ms on PostgreSQL"),
    ("docs/benchmarks.md", "throughput.json",
     "Last full run (`throughput.json`), {servers/head} against {servers/baseline}"),
    ("docs/benchmarks.md", "throughput.json",
     "the model alone served {summary/model_sequential_queries_per_s:.1f} queries/s one at a time, "
     "{summary/model_batch8_queries_per_s:.1f} in batches of 8"),
    ("docs/benchmarks.md", "throughput.json",
     "p50 {idle/head/p50_ms:.1f} ms, p99 {idle/head/p99_ms:.1f} ms ({servers/baseline}: {idle/baseline/p50_ms:.1f} / "
     "{idle/baseline/p99_ms:.1f}; the model alone: p99 {summary/model_single_p99_ms:.2f} ms)"),
    ("docs/benchmarks.md", "throughput-gate-2026-11-28d.json",  # rounds 8-11: 10k memories, 8 clients
     "took 8 clients on 10k memories from {rounds/9/req_per_s:.1f} / {rounds/10/req_per_s:.1f} to "
     "{rounds/8/req_per_s:.1f} / {rounds/11/req_per_s:.1f} searches/s (`throughput-gate-2026-11-28d.json`); under "
     "that load the model is busy {rounds/8/model_busy_share:.0p} % of the time"),
]

QUIET = ("docs/benchmarks.md", "(`throughput-quiet-2k.json`, {servers/head} against {servers/baseline}): "
         "{quiet/8:.1f} searches/s with 8 clients and {quiet/64:.1f} with 64, {quiet/ratio8:.2f}× and "
         "{quiet/ratio64:.2f}× the commit before")


def _flat(text: str) -> str:
    """The page with its line breaks and runs of spaces as one space: a figure may be wrapped anywhere."""
    return " ".join(text.split())


def _rendered(page_name: str) -> list[str]:
    out = [_Figures(results(name)).format(template) for p, name, template in FIGURES if p == page_name]
    if page_name == QUIET[0]:
        out.append(_Figures({**results("throughput-quiet-2k.json"), "quiet": _quiet_throughput()}).format(QUIET[1]))
    return out


@pytest.mark.parametrize(("page_name", "name", "template"), FIGURES,
                         ids=[f"{p}:{name}:{i}" for i, (p, name, _) in enumerate(FIGURES)])
def test_a_figure_is_the_one_in_its_results_file(page_name: str, name: str, template: str) -> None:
    expected = _Figures(results(name)).format(template)
    assert _flat(expected) in _flat(page(page_name)), f"{page_name} should say: {expected}"


def test_the_quiet_throughput_figures_are_the_results_file() -> None:
    [quiet] = [text for text in _rendered(QUIET[0]) if "throughput-quiet-2k.json" in text]
    assert _flat(quiet) in _flat(page(QUIET[0])), quiet


# A measured number: a decimal, or a number followed by a unit or %. The pages' other numbers are settings, sizes of
# data sets and versions; those listed here are allowed on the page as they are.
MEASURED = re.compile(r"(?<![\w.@/-])\d[\d,]*(?:\.\d+)?(?: ?(?:%|ms\b|×|memories/s|searches/s))|(?<![\w.@/-])\d+\.\d+")
NOT_MEASURED = {
    "README.md": {"3.11", "1.19"},  # Python 3.11, SillyTavern 1.19.0
    "docs/benchmarks.md": {"2.2", "10 %"},  # mem0 2.2.1; the gate's 10 %
}


@pytest.mark.parametrize("page_name", ["README.md", "docs/benchmarks.md"])
def test_every_measured_number_of_the_page_is_checked(page_name: str) -> None:
    """README and the benchmarks page hold no figure this module does not check (besides the throughput table, which
    tests/bench/test_docs_throughput.py checks row by row)."""
    text = _flat(page(page_name))
    spans = [(m.start(), m.end()) for expected in _rendered(page_name)
             for m in re.finditer(re.escape(_flat(expected)), text)]
    row = r"\| [\d,]+ \| \d+ \| [\d.]+ \| [\d.]+ \| [\d.]+× \|[^|]*\|[^|]*\|"  # the throughput table's
    table = [(m.start(), m.end()) for m in re.finditer(row, text)]
    unchecked = [m.group() for m in MEASURED.finditer(text)
                 if not any(a <= m.start() and m.end() <= b for a, b in spans + table)
                 and m.group() not in NOT_MEASURED.get(page_name, set())]
    assert unchecked == [], f"{page_name}: figures no test checks against bench/results: {unchecked}"


def test_make_bench_runs_what_the_benchmarks_page_lists() -> None:
    listed = _flat(page("docs/benchmarks.md")).split("## What `make bench` runs", 1)[1].split("## Run by hand")[0]
    scripts = set(re.findall(r"`(bench/\w+\.py)`", listed))
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    target = makefile.split("\nbench:", 1)[1].split("\n\n", 1)[0]
    run = set(re.findall(r"\$\(BIN\)/python (bench/\w+\.py)", target))
    assert scripts and scripts == run, (scripts ^ run)
    for result in re.findall(r"`([\w.-]+\.json)`", listed):
        assert (RESULTS / result).is_file(), result  # each result file the page names is there


LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


PAGES = ["README.md", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md"))]


@pytest.mark.parametrize("page_name", PAGES)
def test_the_pages_links_resolve(page_name: str) -> None:
    base = (ROOT / page_name).parent
    missing = [target for target in LINK.findall(page(page_name))
               if not target.startswith(("http://", "https://")) and not (base / target).exists()]
    assert missing == [], f"{page_name} links to {missing}"


def test_every_docs_page_is_linked_from_the_readme() -> None:
    readme = page("README.md")
    unlinked = [p.name for p in (ROOT / "docs").glob("*.md") if f"(docs/{p.name})" not in readme]
    assert unlinked == [], unlinked


def test_the_readme_is_short() -> None:
    assert len(page("README.md").splitlines()) <= 250
