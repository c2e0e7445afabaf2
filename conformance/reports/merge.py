"""``tooluse run merge DIR... --out DIR``: the shards of one ``tooluse run --shard K/N`` joined into
the ``results.json`` (and so the JUnit, Markdown and HTML) a single run writes.

Each shard's ``results.json`` records its place (``run.shard``: K, N and every shard's cases,
hashed as ``plan_digest``). The merge refuses, naming the directories: a shard given twice or
missing, shards of different plans (other subjects, checks or history) or suite versions, a case
that two shards ran, and a case of the plan that no shard ran.

What the merge recomputes rather than copies: the summary, the coverage, and ``not-run``: a
subject that started in one shard but in no case of another was not "never started", so that
other shard's ``not-run`` cases are the start failures a single run would have reported
(``fail``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.errors import UsageError
from conformance.shards import coverage, first_few, shard_set_problem

from .bundle import RESULTS
from .coverage import coverage_for
from .results_file import ResultsFileError, load_results, summarise


class MergeRefused(UsageError):
    """The shards cannot be joined into one run: which, and why."""


@dataclass(frozen=True)
class ShardResults:
    where: str  # the directory (or file) as given
    doc: dict[str, Any]

    @property
    def shard(self) -> dict[str, Any]:
        return dict(self.doc["run"].get("shard") or {})

    @property
    def label(self) -> str:
        s = self.shard
        return f"{self.where} (shard {s.get('index')}/{s.get('count')})"


def load_shard(where: str | Path) -> ShardResults:
    p = Path(where)
    path = p / RESULTS if p.is_dir() else p
    try:
        doc = load_results(path).doc
    except ResultsFileError as e:
        raise MergeRefused(f"{where}: {e.message}") from None
    if not doc["run"].get("shard"):
        raise MergeRefused(f"{where}: not a shard (its results.json has no run.shard: it was not "
                           "run with --shard K/N)")
    return ShardResults(str(where), doc)


def _start_failure(r: dict[str, Any]) -> bool:
    from conformance.rejudge import START_FAILURES

    return r["outcome"] == "fail" and str(r.get("message", "")).startswith(START_FAILURES)


def check_shards(shards: Sequence[ShardResults]) -> list[tuple[str, str]]:
    """Raise :class:`MergeRefused` unless ``shards`` are every shard of one plan, each once,
    covering every case once; returns the plan (every (subject, check id), in order)."""
    if not shards:
        raise MergeRefused("give the shards' directories")
    first = shards[0]
    for s in shards[1:]:
        if s.shard["plan_digest"] != first.shard["plan_digest"]:
            raise MergeRefused(f"{s.label} and {first.label} are shards of different runs: "
                               "their plans differ (other subjects, checks, or a different "
                               "--history balanced them); run every shard with the same options "
                               "and history")
        if s.doc["suite"]["version"] != first.doc["suite"]["version"]:
            raise MergeRefused(f"{s.label} was run by tooluse-conformance "
                               f"{s.doc['suite']['version']}, {first.label} by "
                               f"{first.doc['suite']['version']}; run every shard with one "
                               "version of the suite")
        for key in ("strict", "fail_on_flaky"):
            if bool(s.doc["run"].get(key)) != bool(first.doc["run"].get(key)):
                raise MergeRefused(f"{s.label} and {first.label} differ in --"
                                   f"{key.replace('_', '-')}; run every shard with the same "
                                   "options")
    n = first.shard["count"]
    for s in shards:
        if s.shard["count"] != n:
            raise MergeRefused(f"{s.label} is one of {s.shard['count']} shards, {first.label} "
                               f"one of {n}")
    problem = shard_set_problem([(s.shard["index"], s.label, s.where) for s in shards], n)
    if problem:
        raise MergeRefused(problem)
    plan = [(str(a), str(b)) for a, b in first.shard["plan"]]
    got = coverage([(s.label, [(str(r["subject"]), str(r["check_id"])) for r in s.doc["results"]])
                    for s in shards], plan)
    if got.overlap:
        (a, b), one, other = got.overlap
        raise MergeRefused(f"overlapping shards: {a}:{b} is in {one} and in {other}")
    if got.missing:
        raise MergeRefused("missing cases: no shard ran "
                           + first_few([f"{a}:{b}" for a, b in got.missing])
                           + " (a shard that did not complete? its results.json says "
                           "\"complete\": false)")
    if got.extra:
        (a, b), label = got.extra[0]
        raise MergeRefused(f"{label} ran {a}:{b}, which is not in the plan")
    return plan


def unsharded_argv(argv: Sequence[str]) -> list[str]:
    """A shard's argv without ``--shard K/N`` / ``--history PATH``: its run's value
    (:class:`~conformance.run.Run`, read by ``tooluse run``'s parser) unsharded, as words."""
    from dataclasses import replace

    from conformance.run import Run

    words = list(argv)
    if words[:1] != ["run"]:
        return words
    run = Run.from_argv(words)
    return ["run", *replace(run, shard=None, history=None).words()]


def merge_documents(shards: Sequence[ShardResults]) -> dict[str, Any]:
    """The results document of one run made of ``shards`` (checked by :func:`check_shards`)."""
    plan = check_shards(shards)
    shards = sorted(shards, key=lambda s: s.shard["index"])
    first = shards[0].doc
    return join_documents([s.doc for s in shards], plan,
                          unsharded_argv(first["run"].get("argv") or []))


def join_documents(docs: Sequence[dict[str, Any]], plan: Sequence[tuple[str, str]],
                   argv: Sequence[str]) -> dict[str, Any]:
    """One results document of the results of ``docs`` (parts of one run, each case in one of
    them, none missing), in ``plan`` order, with ``argv`` as the run's command line."""
    first = json.loads(json.dumps(docs[0]))
    order = {k: i for i, k in enumerate(plan)}
    results = [r for d in docs for r in d["results"]]
    started = {r["subject"] for r in results
               if r["outcome"] != "not-run" and not _start_failure(r)}
    results = [({**r, "outcome": "fail"} if r["outcome"] == "not-run" and r["subject"] in started
                else r) for r in results]
    results.sort(key=lambda r: order.get((r["subject"], r["check_id"]), len(order)))
    runs = [d["run"] for d in docs]
    complete = all(r["complete"] for r in runs)
    finished = [r.get("finished_at") for r in runs]
    run = {k: v for k, v in first["run"].items() if k != "shard"}
    run.update({"started_at": min(r["started_at"] for r in runs),
                "finished_at": None if None in finished else max(str(f) for f in finished),
                "complete": complete, "interrupted": any(r["interrupted"] for r in runs),
                "argv": list(argv), "planned": len(plan)})
    startups = [r["startup"] for r in runs if isinstance(r.get("startup"), dict)]
    if startups:  # what starting the subjects cost, over every part
        run["startup"] = {k: round(sum(s.get(k, 0) for s in startups), 3)
                          if isinstance(startups[0][k], float) else sum(s.get(k, 0)
                                                                        for s in startups)
                          for k in startups[0]}
    doc = {**first, "run": run, "results": results}
    doc["summary"] = summarise(results, strict=bool(run.get("strict")), complete=complete,
                               fail_on_flaky=bool(run.get("fail_on_flaky")))
    if any("coverage" in d for d in docs):
        corpus = Path(run["fixtures"]) if run.get("fixtures") else None
        doc["coverage"] = coverage_for(doc, corpus=corpus if corpus and corpus.exists() else None)
    return doc
