"""The suite's mutation score on its own reference subjects (``nox -s mutation``).

``python -m scripts.mutation [--out reports/mutation] [--jobs 2] [--only KEY_SUBSTRING ...]``

The mutants are cosmic-ray's (its operators, enumerated and applied with its library:
:func:`cosmic_ray.mutating.mutate_code`) over :data:`TARGETS`: the reference bash tool and the
reference text editor (``editor.py`` and the byte helpers of ``editor_text.py``). The test
command of a mutant is the suite itself: ``tooluse run`` with only the family's checks, against a
copy of ``conformance/reference/`` (imported as the package ``tooluse_mutant``) in which that
one file is mutated. A mutant is *killed* when a MUST or SHOULD check fails on it (the reference
passes every one) or the subject cannot start; the run stops at the first such failure.

Not every mutant is run:

- a mutant that changes only annotations (every module here has ``from __future__ import
  annotations``: they are strings nobody evaluates) or nothing at all once the module is parsed is
  *equivalent by construction* and is not run;
- a mutant keyed in :data:`EQUIVALENTS` (``reports/mutation/equivalents.toml``: each with the
  reason the docs cannot tell it from the reference) is not run either and is left out of the
  score;
- of the binary and comparison operator replacements at one spot (cosmic-ray makes ten or eleven
  per operator: ``a + b`` to ``-``, ``*``, ``/``, ``//``, ``%``, ``**``, ``>>``, ``<<``, ``|``,
  ``&``, ``^``) a deterministic sample of :data:`PER_SITE` is run (the first ones in the order of
  the sha256 of their keys); the report lists how many were left out.

The report (``mutants.json``, ``report.md``) has the score per file and every surviving mutant
(its diff, the checks that ran on it).
"""

from __future__ import annotations

import argparse
import ast
import concurrent.futures
import difflib
import functools
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "conformance" / "reference"
DEFAULT_OUT = ROOT / "reports" / "mutation"
EQUIVALENTS = DEFAULT_OUT / "equivalents.toml"
#: The results of a run in progress, one JSON line per mutant (``--resume``).
PROGRESS = "progress.jsonl"
#: The copy's package name (its modules keep their relative imports).
PACKAGE = "tooluse_mutant"

#: Binary/comparison/unary operator replacements run per spot (the rest are sampled out).
PER_SITE = 2
#: Examples per property check (``TOOLUSE_MAX_EXAMPLES``; the suite's default is 25).
MAX_EXAMPLES = 10
#: Wall seconds one mutant's test command may take; past it the mutant counts as killed
#: (``timeout``: the suite did not finish on it, as cosmic-ray counts it).
MUTANT_TIMEOUT = 300.0

_BASH_RUN = ("--bash", f"{PACKAGE}.bash:factory", "--check", "bash.*")
_EDITOR_RUNS = (
    # undo_edit exists in 20241022/20250124 only; max_characters in 20250728 only
    ("--editor", f"{PACKAGE}.editor:text_editor_20250124", "--editor-type", "text_editor_20250124",
     "--check", "editor.*"),
    # the subclass-friendly factory (``path:MyEditor.factory``) builds this one
    ("--editor", f"{PACKAGE}.editor:TextEditor.factory", "--editor-type", "text_editor_20250728",
     "--editor-max-characters", "10000", "--check", "editor.*"),
)
#: File of conformance/reference -> the ``tooluse run`` argument lists that test it.
TARGETS: dict[str, tuple[tuple[str, ...], ...]] = {
    "bash.py": (_BASH_RUN,),
    "editor.py": _EDITOR_RUNS,
    "editor_text.py": _EDITOR_RUNS,
}
_SAMPLED_FAMILIES = ("ReplaceBinaryOperator_", "ReplaceComparisonOperator_",
                     "ReplaceUnaryOperator_")


@dataclass
class Mutant:
    """One cosmic-ray mutant of one reference file and what became of it."""

    key: str
    file: str
    line: int
    definition: str
    operator: str
    occurrence: int
    diff: str
    #: ``killed``, ``survived``, ``equivalent`` (listed or by construction), ``sampled_out``
    status: str = "pending"
    #: why it is equivalent, or why it was not run
    reason: str = ""
    #: the failing checks (``check_id [SEVERITY] tool_type``) or ``subject did not start`` etc.
    killed_by: list[str] = field(default_factory=list)
    #: the ``tooluse run`` argument lists run on it (the checks it met)
    commands: list[list[str]] = field(default_factory=list)
    seconds: float = 0.0


# -- enumeration ----------------------------------------------------------------------------------

def _operators() -> Iterator[tuple[str, Any]]:
    import cosmic_ray.plugins as plugins

    for name in plugins.operator_names():
        cls = plugins.get_operator(name)
        if cls.arguments():  # operators that need configuration: none configured
            continue
        yield name, cls()


def _definition(node: Any) -> str:
    from cosmic_ray.ast.ast_query import ASTQuery

    name = ASTQuery(node).get_definition_name()
    return str(name) if name else "<module>"


def _change(diff_lines: list[str]) -> tuple[str, str]:
    before = " / ".join(x[1:].strip() for x in diff_lines
                        if x.startswith("-") and not x.startswith("---") and x[1:].strip())
    after = " / ".join(x[1:].strip() for x in diff_lines
                       if x.startswith("+") and not x.startswith("+++") and x[1:].strip())
    return before, after


def enumerate_mutants(file: str, source: str) -> list[tuple[Mutant, str]]:
    """Every cosmic-ray mutant of ``source`` (``file``'s text) with its mutated code, keyed by a
    description that survives edits elsewhere in the file: ``file:definition:operator: before ->
    after`` (``#2``, ``#3`` for repeats)."""
    from cosmic_ray.ast import ast_nodes, get_ast
    from cosmic_ray.mutating import mutate_code

    tree = get_ast(source)
    out: list[tuple[Mutant, str]] = []
    seen: Counter[str] = Counter()
    for name, operator in _operators():
        positions = [(node, start) for node in ast_nodes(tree)
                     for start, _end in operator.mutation_positions(node)]
        for occurrence, (node, start) in enumerate(positions):
            mutated = mutate_code(source, operator, occurrence)
            if mutated is None:
                continue
            diff = list(difflib.unified_diff(source.split("\n"), mutated.split("\n"),
                                             f"a/{file}", f"b/{file}", lineterm="", n=1))
            before, after = _change(diff)
            short = name.rpartition("/")[2]
            key = f"{file}:{_definition(node)}:{short}: {before} -> {after}"
            seen[key] += 1
            if seen[key] > 1:
                key = f"{key} #{seen[key]}"
            out.append((Mutant(key=key, file=file, line=start[0], definition=_definition(node),
                               operator=short, occurrence=occurrence, diff="\n".join(diff)),
                        mutated))
    return out


def _strip_annotations(tree: ast.AST) -> str:
    for node in ast.walk(tree):
        if isinstance(node, ast.arg):
            node.annotation = None
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            node.returns = None
        elif isinstance(node, ast.AnnAssign):
            node.annotation = ast.Constant(None)
    return ast.dump(tree)


def equivalent_by_construction(source: str, mutated: str) -> str:
    """Why ``mutated`` cannot behave differently from ``source``, or ``""``."""
    try:
        tree = ast.parse(mutated)
    except SyntaxError:
        return ""
    original = ast.parse(source)
    if ast.dump(tree) == ast.dump(original):
        return "the parsed module is unchanged (formatting only)"
    has_future = any(isinstance(n, ast.ImportFrom) and n.module == "__future__"
                     and any(a.name == "annotations" for a in n.names) for n in original.body)
    if has_future and _strip_annotations(tree) == _strip_annotations(original):
        return ("annotations only: the module has `from __future__ import annotations`, so they "
                "are strings that nothing evaluates")
    return ""


def sample(mutants: list[Mutant], per_site: int = PER_SITE) -> None:
    """Mark all but ``per_site`` operator replacements per spot ``sampled_out`` (deterministic:
    the lowest sha256 of the key first)."""
    groups: dict[tuple[str, int, str, str], list[Mutant]] = {}
    for m in mutants:
        if m.status != "pending":
            continue
        family = next((f for f in _SAMPLED_FAMILIES if m.operator.startswith(f)), None)
        if family is None:
            continue
        # the replaced operator: ReplaceBinaryOperator_Add_Sub -> Add
        replaced = m.operator[len(family):].split("_", 1)[0]
        site = (m.file, m.line, m.definition, family + replaced)
        groups.setdefault(site, []).append(m)
    for group in groups.values():
        group.sort(key=lambda m: hashlib.sha256(m.key.encode()).hexdigest())
        for m in group[per_site:]:
            m.status = "sampled_out"
            m.reason = f"sample: {per_site} of the {len(group)} replacements of this operator here"


def load_equivalents(path: Path = EQUIVALENTS) -> dict[str, str]:
    """``key -> reason`` from the equivalents file (``[[equivalent]] key = ..., reason = ...``)."""
    if not path.exists():
        return {}
    doc = tomllib.loads(path.read_text(encoding="utf-8"))
    return {e["key"]: e["reason"] for e in doc.get("equivalent", [])}


# -- running --------------------------------------------------------------------------------------

def _tooluse() -> list[str]:
    return [sys.executable, "-c", "import sys; from conformance.cli import main; sys.exit(main())"]


@dataclass
class Outcome:
    failures: list[str]
    status: str  # killed | survived
    seconds: float
    commands: list[list[str]]


def _stop(proc: subprocess.Popen[str]) -> None:
    """SIGTERM (the run stops its subjects, exit 143), then SIGKILL to the group."""
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(15)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def run_suite(package_root: Path, runs: Sequence[Sequence[str]], *, stop_early: bool = True,
              timeout: float = MUTANT_TIMEOUT, max_examples: int = MAX_EXAMPLES) -> Outcome:
    """Run ``tooluse run`` once per argument list in ``runs`` (cwd ``package_root``, where the
    ``tooluse_mutant`` copy is); stop at the first failing MUST or SHOULD check."""
    env = {**os.environ, "TOOLUSE_MAX_EXAMPLES": str(max_examples), "PYTHONPATH": str(ROOT)}
    start = time.monotonic()
    failures: list[str] = []
    commands: list[list[str]] = []
    for args in runs:
        argv = ["run", *args, "--json", "-q", "--out", str(package_root / "out")]
        commands.append(["tooluse", *argv[:-2]])
        proc = subprocess.Popen([*_tooluse(), *argv], cwd=package_root, env=env, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)
        assert proc.stdout is not None and proc.stderr is not None
        stopped = False
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            err = pool.submit(proc.stderr.read)
            timer = _Timer(start + timeout - time.monotonic(), functools.partial(_stop, proc))
            for line in proc.stdout:
                if not line.startswith("{"):
                    continue
                try:
                    r = json.loads(line)
                except ValueError:
                    continue
                if r.get("severity") in ("MUST", "SHOULD") and r.get("outcome") not in (
                        "pass", "skip", "info", "observed"):
                    failures.append(f"{r['check_id']} [{r['severity']}] {r.get('tool_type', '')}"
                                    f" ({r.get('outcome')})")
                    if stop_early:
                        stopped = True
                        _stop(proc)
                        break
            timer.cancel()
            code = proc.wait()
            stderr = err.result()
        if timer.fired and not failures:
            failures.append(f"timeout: the suite did not finish within {timeout:g} s")
        elif code not in (0, 1, 143) or (code == 1 and not failures and not stopped):
            tail = " ".join(stderr.strip().splitlines()[-3:])[:300]
            failures.append(f"subject did not start or the run failed (exit {code}): {tail}")
        if failures and stop_early:
            break
    return Outcome(failures, "killed" if failures else "survived",
                   round(time.monotonic() - start, 2), commands)


class _Timer:
    def __init__(self, seconds: float, action: Any) -> None:
        import threading

        self.fired = False

        def fire() -> None:
            self.fired = True
            action()

        self._t = threading.Timer(max(seconds, 0.0), fire)
        self._t.daemon = True
        self._t.start()

    def cancel(self) -> None:
        self._t.cancel()


def _copy_reference(dest: Path) -> Path:
    pkg = dest / PACKAGE
    shutil.copytree(REFERENCE, pkg, ignore=shutil.ignore_patterns("__pycache__"))
    return pkg


def test_mutant(mutant: Mutant, mutated: str, **options: Any) -> Outcome:
    with tempfile.TemporaryDirectory(prefix="tooluse-mutant-") as tmp:
        pkg = _copy_reference(Path(tmp))
        (pkg / mutant.file).write_text(mutated, encoding="utf-8")
        return run_suite(Path(tmp), TARGETS[mutant.file], **options)


def test_unmutated(**options: Any) -> dict[str, Outcome]:
    """The suite on the unmutated copy: must pass (else no score can be given)."""
    out = {}
    with tempfile.TemporaryDirectory(prefix="tooluse-mutant-") as tmp:
        _copy_reference(Path(tmp))
        for file, runs in TARGETS.items():
            if runs not in [TARGETS[f] for f in out]:
                out[file] = run_suite(Path(tmp), runs, **{**options, "stop_early": False})
    return out


# -- report ---------------------------------------------------------------------------------------

def score(mutants: list[Mutant]) -> dict[str, dict[str, Any]]:
    per: dict[str, dict[str, Any]] = {}
    for file in [*TARGETS, "all"]:
        ms = [m for m in mutants if file in ("all", m.file)]
        c = Counter(m.status for m in ms)
        run = c["killed"] + c["survived"]
        per[file] = {"total": len(ms), "killed": c["killed"], "survived": c["survived"],
                     "equivalent": c["equivalent"], "sampled_out": c["sampled_out"],
                     "non_equivalent": run,
                     "score": round(100 * c["killed"] / run, 1) if run else None}
    return per


def render_markdown(doc: dict[str, Any]) -> str:
    lines = ["# Mutation score of the suite on its reference subjects", "",
             f"Generated by `nox -s mutation` (`python -m scripts.mutation`); tool: cosmic-ray "
             f"{doc['tool']['cosmic_ray']} ({doc['tool']['why']}).", "",
             doc["method"], "",
             "| file | killed | non-equivalent (run) | score | equivalent | sampled out | total |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for file, s in doc["score"].items():
        pct = "n/a" if s["score"] is None else f"{s['score']} %"
        lines.append(f"| {file} | {s['killed']} | {s['non_equivalent']} | {pct} | "
                     f"{s['equivalent']} | {s['sampled_out']} | {s['total']} |")
    if doc.get("history"):
        lines += ["", "## History", ""]
        lines += [f"- {h}" for h in doc["history"]]
    mutants = doc["mutants"]
    survivors = [m for m in mutants if m["status"] == "survived"]
    lines += ["", f"## Surviving mutants ({len(survivors)})", ""]
    if not survivors:
        lines.append("None.")
    for m in survivors:
        ran = "; ".join(" ".join(c) for c in m["commands"])
        lines += [f"### `{m['key']}`", "", f"line {m['line']}; checks run: `{ran}`", "",
                  "```diff", m["diff"], "```", ""]
    killers: Counter[str] = Counter()
    for m in mutants:
        for k in m["killed_by"][:1]:
            killers[k.split(" (")[0].split(" [")[0] if not k.startswith(("timeout", "subject"))
                    else k.split(":")[0]] += 1
    lines += ["", "## What killed the mutants (the first failing check of each)", "",
              "| check | mutants |", "| --- | ---: |"]
    lines += [f"| `{k}` | {n} |" for k, n in sorted(killers.items(), key=lambda x: (-x[1], x[0]))]
    equivalents = [m for m in mutants if m["status"] == "equivalent"]
    listed = [m for m in equivalents if not m["reason"].startswith(("annotations only",
                                                                    "the parsed module"))]
    lines += ["", f"## Equivalent mutants ({len(equivalents)}; {len(equivalents) - len(listed)} by "
              "construction: annotations or formatting only)", ""]
    for m in listed:
        lines += [f"- `{m['key']}`: {m['reason']}"]
    lines += ["", "## Every mutant", "",
              "| key | status | killed by | s |", "| --- | --- | --- | ---: |"]
    for m in mutants:
        by = (m["killed_by"][0] if m["killed_by"] else "").replace("|", "\\|")
        key = m["key"].replace("|", "\\|")
        lines.append(f"| `{key}` | {m['status']} | {by} | {m['seconds']} |")
    return "\n".join(lines) + "\n"


WHY_COSMIC_RAY = (
    "its test command is any command, so the suite run against a copy of the reference is the "
    "test (mutmut 3 runs only pytest, forks inside it and mutates only code reached from its "
    "tests; poodle's command-line runner works too but is far less used); its operators are "
    "deterministic and its library applies one mutant to a source text, which lets the driver "
    "test a copy and stop at the first failing check; the earlier measurement used it too")


def build(out: Path, *, jobs: int, only: Sequence[str], stop_early: bool, per_site: int,
          max_examples: int, previous: dict[str, Any] | None, history: Sequence[str],
          resume: bool = False, equivalents_file: Path = EQUIVALENTS) -> int:
    from importlib.metadata import version

    import cosmic_ray  # noqa: F401 (fail early when the extra is missing)

    equivalents = load_equivalents(equivalents_file)
    all_mutants: list[tuple[Mutant, str]] = []
    for file in TARGETS:
        source = (REFERENCE / file).read_text(encoding="utf-8")
        for m, mutated in enumerate_mutants(file, source):
            why = equivalent_by_construction(source, mutated)
            if why:
                m.status, m.reason = "equivalent", why
            all_mutants.append((m, mutated))
    # the sample does not depend on the list of equivalents (listed ones are judged in it)
    sample([m for m, _ in all_mutants], per_site)
    for m, _ in all_mutants:
        if m.status == "pending" and m.key in equivalents:
            m.status, m.reason = "equivalent", equivalents[m.key]
    stale = sorted(set(equivalents) - {m.key for m, _ in all_mutants})
    if stale:
        print(f"equivalents.toml names {len(stale)} mutants that no longer exist:", *stale,
              sep="\n  ", file=sys.stderr)
    options = {"stop_early": stop_early, "max_examples": max_examples}
    t0 = time.monotonic()
    base = test_unmutated(**options)
    for file, o in base.items():
        if o.failures:
            print(f"the suite fails the unmutated reference ({file}): {o.failures}",
                  file=sys.stderr)
            return 2
    # Each result is appended to a progress file as it comes; --resume takes them from there
    # (an interrupted run goes on where it stopped). Removed once the report is written.
    progress = out / PROGRESS
    done_before = {}
    if resume and progress.exists():
        for line in progress.read_text(encoding="utf-8").splitlines():
            r = json.loads(line)
            done_before[r["key"]] = r
    for m, _ in all_mutants:
        r = done_before.get(m.key)
        if m.status == "pending" and r is not None:
            m.status, m.killed_by, m.seconds, m.commands = (
                r["status"], r["killed_by"], r["seconds"], r["commands"])
    todo = [(m, src) for m, src in all_mutants if m.status == "pending"
            and (not only or any(s in m.key for s in only))]
    print(f"{len(all_mutants)} mutants; running {len(todo)} with {jobs} at a time",
          file=sys.stderr)
    done = 0
    out.mkdir(parents=True, exist_ok=True)
    with (concurrent.futures.ThreadPoolExecutor(jobs) as pool,
          progress.open("a", encoding="utf-8") as log):
        futures = {pool.submit(test_mutant, m, src, **options): m for m, src in todo}
        for fut in concurrent.futures.as_completed(futures):
            m = futures[fut]
            o = fut.result()
            m.status, m.killed_by, m.seconds, m.commands = (o.status, o.failures, o.seconds,
                                                            o.commands)
            log.write(json.dumps({"key": m.key, "status": m.status, "killed_by": m.killed_by,
                                  "seconds": m.seconds, "commands": m.commands}) + "\n")
            log.flush()
            done += 1
            print(f"[{done}/{len(todo)}] {m.status:8} {o.seconds:6.1f}s {m.key}"
                  + (f"  <- {o.failures[0]}" if o.failures else ""), file=sys.stderr, flush=True)
    mutants = [m for m, _ in all_mutants]
    if only and previous:  # a partial run: keep the other mutants' earlier results
        earlier = {m["key"]: m for m in previous.get("mutants", [])}
        for m in mutants:
            if m.status == "pending" and m.key in earlier:
                old = earlier[m.key]
                if old["status"] in ("killed", "survived"):
                    m.status, m.killed_by, m.seconds, m.commands = (
                        old["status"], old["killed_by"], old["seconds"], old["commands"])
    mutants = [m for m in mutants if m.status != "pending"]
    doc = {
        "tool": {"cosmic_ray": version("cosmic-ray"), "why": WHY_COSMIC_RAY},
        "method": (
            f"Each mutant is one cosmic-ray mutation of one file of `conformance/reference/`, "
            f"tested by `tooluse run` with the family's checks only (`bash.*`; `editor.*` on "
            f"text_editor_20250124 and on text_editor_20250728 with max_characters) on a copy of "
            f"the reference, TOOLUSE_MAX_EXAMPLES={max_examples}"
            + (", stopping at the first failing MUST or SHOULD check" if stop_early else "")
            + f". Killed: a MUST or SHOULD check failed, the subject did not start, or the suite "
            f"did not finish within {MUTANT_TIMEOUT:g} s. Equivalent: changes only annotations "
            f"or formatting, or listed with its reason in `equivalents.toml`. Sampled out: of "
            f"the 10-11 binary/comparison/unary operator replacements cosmic-ray makes at one "
            f"spot, {per_site} are run (the lowest sha256 of their keys). The score is killed / "
            f"non-equivalent run mutants."),
        "score": score(mutants),
        "history": list(history),
        "seconds": round(time.monotonic() - t0, 1),
        "mutants": [asdict(m) for m in mutants],
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / "mutants.json").write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n",
                                      encoding="utf-8")
    (out / "report.md").write_text(render_markdown(doc), encoding="utf-8")
    progress.unlink(missing_ok=True)
    print(json.dumps(doc["score"], indent=1), f"\n{doc['seconds']} s", file=sys.stderr)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m scripts.mutation", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", type=Path, default=DEFAULT_OUT)
    p.add_argument("--jobs", type=int, default=2, help="mutants tested at once (default 2)")
    p.add_argument("--only", nargs="*", default=[],
                   help="run only mutants whose key contains one of these (others keep their "
                        "results from the previous report)")
    p.add_argument("--all-failures", action="store_true",
                   help="do not stop at the first failing check (lists every failing check)")
    p.add_argument("--resume", action="store_true",
                   help=f"take the results of an interrupted run from OUT/{PROGRESS}")
    p.add_argument("--note", action="append", default=[],
                   help="a line for the report's history (what this run is)")
    p.add_argument("--per-site", type=int, default=PER_SITE)
    p.add_argument("--max-examples", type=int, default=MAX_EXAMPLES)
    args = p.parse_args(argv)
    previous_path = args.out / "mutants.json"
    previous = (json.loads(previous_path.read_text(encoding="utf-8"))
                if previous_path.exists() else None)
    history = [*(previous.get("history", []) if previous else []), *args.note]
    return build(args.out, jobs=args.jobs, only=args.only, stop_early=not args.all_failures,
                 per_site=args.per_site, max_examples=args.max_examples, previous=previous,
                 history=history, resume=args.resume)


if __name__ == "__main__":
    raise SystemExit(main())
