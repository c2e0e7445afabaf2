"""Writing the findings folder: ``<out>/<column>/<check id>/{repro.py, ISSUE.md, finding.json}``
and the index ``<out>/README.md`` (every finding, counts per column, what verification saw)."""

from __future__ import annotations

import importlib
import json
import shlex
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from conformance.adapters._repro import UpstreamCalls
from conformance.findings.contract import entry_calls
from conformance.findings.loops import render_loop_repro
from conformance.findings.loops_node import is_node, render_node_repro
from conformance.findings.model import Finding
from conformance.findings.oracles import oracle_for
from conformance.findings.repro import render_repro
from conformance.findings.sources import cause_of, source_lines

__all__ = ["INDEX", "calls_for", "finding_json", "render_index", "render_issue",
           "write_findings"]

INDEX = "README.md"
FINDING_FILE = "finding.json"
#: why a loop finding has no reproducer yet
LOOP_REASON = ("a loop's counterexample is the conversation a scripted API served (the requests "
               "shown are what the loop sent), not a call sequence of the framework's API; its "
               "standalone reproducer must drive the framework against `tooluse serve` with the "
               "check's one cassette, which `tooluse findings` does not render yet: replay it "
               "with the rerun command")


def calls_for(f: Finding) -> tuple[UpstreamCalls | None, str]:
    """How the column's implementation is called, or why it cannot be (the reason)."""
    impl = f.implementation
    if impl.get("tool_type") == "agent_loop":
        return None, LOOP_REASON
    own = entry_calls(impl, f.timeout)
    if own is not None:
        return own, ""
    modname, _, attr = str(impl["spec"]).partition(":")
    try:
        hook = getattr(importlib.import_module(modname), "repro_calls", None)
    except ImportError as e:  # pragma: no cover - every adapter imports without its package
        return None, f"the adapter {modname} does not import here: {e}"
    calls = hook(attr, f.timeout) if hook is not None else None
    if calls is None:
        return None, f"the adapter {modname}:{attr} has no repro_calls (no upstream call mapping)"
    return calls, ""


def install_line(f: Finding) -> str:
    if f.implementation.get("npm"):
        return "npm install " + " ".join(shlex.quote(str(p)) for p in f.implementation["npm"])
    reqs = [str(r) for r in f.implementation.get("requirements") or []]
    if not reqs and f.package and f.version:
        reqs = [f"{f.package}=={f.version}"]
    if not reqs:
        return "nothing to install beyond this suite (the subject is its own)"
    return "pip install " + " ".join(shlex.quote(r) for r in reqs)


def _title(f: Finding) -> str:
    first = f.message.splitlines()[0] if f.message else f.statement
    if len(first) > 110:
        first = first[:110].rsplit(" ", 1)[0] + " …"
    who = f"{f.package} {f.version}" if f.package and f.version else f.column
    return f"{who}: {first}"


def _header(f: Finding) -> str:
    needs = install_line(f)
    if f.family == "loop":
        needs += " and this suite's `tooluse serve` (the simulated API: $TOOLUSE or PATH)"
    return (f"{f.column} ({f.package} {f.version}), check {f.check_id} ({f.level}).\n"
            f"The docs ({f.url}): {f.sentence}\n"
            f"Needs: {needs} (this file installs nothing).\n"
            f"Run: {_run_line(f)}  (exit 1 while the defect is there, 0 once fixed, "
            "2 when it cannot run)")


def _run_line(f: Finding) -> str:
    """How the reproducer is run: ``node repro.mjs`` for a Node framework's loop."""
    node = f.family == "loop" and is_node(f.implementation)
    return "node repro.mjs" if node else "python repro.py"


def render_issue(f: Finding) -> str:
    """The issue draft a maintainer reads (title, version, the docs, expected vs actual, the
    source line, the reproducer's command, the level and why)."""
    ver = f"{f.package} {f.version}" if f.package else "this suite's own subject"
    how = (f"```sh\n{install_line(f)}\n{_run_line(f)}   # exit 1: still there; 0: fixed\n```"
           if f.repro else f"No standalone reproducer: {f.repro_reason}.\n\n"
           f"Replay with the suite:\n\n```sh\n{f.rerun}\n```")
    setup = ""
    if f.setup:
        setup = ("\n\nFiles planted before the inputs:\n\n```json\n"
                 + json.dumps(f.setup, indent=2, ensure_ascii=False) + "\n```")
    steps = json.dumps(f.reproducer, indent=2, ensure_ascii=False)
    lines = [
        f"# {_title(f)}",
        "",
        f"- **Implementation**: `{f.column}` ({ver})",
        f"- **Level**: {f.level}: {f.why_level}",
        f"- **Check**: `{f.check_id}` (tooluse-conformance; finding {f.fingerprint})",
        "",
        "## What the docs say",
        "",
        f"> {f.sentence}",
        "",
        f"{f.section}: {f.url}" if f.url else f.cite,
        "",
        f"The rule checked: {f.statement}",
        "",
        "## Expected",
        "",
        "```",
        f.documented.strip() or "(see the rule)",
        "```",
        "",
        "## Actual",
        "",
        f.message.strip(),
        "",
        "```",
        f.received.strip()[:3000] or "(nothing)",
        "```",
        "",
        ("## The requests the loop sent (to a scripted API; the check's scenario)"
         if f.family == "loop" else
         "## Steps (tool inputs, in order; `$TOOLUSE_WORKDIR` is an empty directory)"),
        "",
        "```json",
        steps,
        "```" + setup,
        "",
        "## Where in the source",
        "",
        f.source_lines or "Not traced to a line yet.",
        "",
        "## Reproduce",
        "",
        how,
        "",
    ]
    return "\n".join(lines)


def finding_json(f: Finding) -> dict[str, Any]:
    return {"check_id": f.check_id, "column": f.column, "package": f.package,
            "version": f.version, "level": f.level, "fingerprint": f.fingerprint,
            "check_fingerprint": f.check_fingerprint, "url": f.url,
            "repro": f.repro, "repro_reason": f.repro_reason or None,
            "source_lines": f.source_lines, "rerun": f.rerun,
            "exit_codes": f.exit_codes}


def status_of(record: dict[str, Any]) -> str:
    """What verification saw, as the index says it."""
    codes = record.get("exit_codes") or []
    if not record.get("repro"):
        return "no reproducer"
    if not codes:
        return "not verified"
    last = codes[-1]
    if last["exit_code"] == 1:
        return f"reproduces at {last.get('version') or record.get('version')}"
    if last["exit_code"] == 0:
        return f"no longer reproduces at {last.get('version') or record.get('version')}"
    return f"could not run ({last.get('note') or 'exit ' + str(last['exit_code'])})"


def render_index(records: Sequence[dict[str, Any]], title: str) -> str:
    cols: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        cols.setdefault(r["column"], []).append(r)
    out = [f"# Findings: {title}", "",
           "One folder per failing cell (FAIL at MUST or SHOULD): `repro.py`, or `repro.mjs` for "
           "an npm package (standalone: the implementation and the standard library; exit 1 "
           "while the defect is there, 0 once fixed), `ISSUE.md` (a draft for the implementation's maintainers), `finding.json`. "
           "Written by `tooluse findings`, verified by `tooluse findings --verify` "
           "(docs/matrix.md \"Findings a maintainer can run\").", "",
           "| column | version | findings | MUST | SHOULD | reproducers | exit 1 |",
           "| --- | --- | --- | --- | --- | --- | --- |"]
    for col, rs in cols.items():
        ver = rs[0].get("version") or "this suite"
        reproduces = sum(status_of(r).startswith("reproduces") for r in rs)
        out.append(f"| {col} | {ver} | {len(rs)} | {sum(r['level'] == 'MUST' for r in rs)} | "
                   f"{sum(r['level'] == 'SHOULD' for r in rs)} | "
                   f"{sum(bool(r.get('repro')) for r in rs)} | {reproduces} |")
    out += ["", "| finding | level | status |", "| --- | --- | --- |"]
    for r in records:
        out.append(f"| [{r['column']} / `{r['check_id']}`]({r['column']}/{r['check_id']}/ISSUE.md)"
                   f" | {r['level']} | {status_of(r)} |")
    return "\n".join(out) + "\n"


def write_findings(findings: Sequence[Finding], out: Path, *, root: Path,
                   title: str) -> list[dict[str, Any]]:
    """Write every finding's folder and the index; returns the finding records."""
    table = source_lines(root)
    # what verification saw is kept for a finding that did not change (same fingerprint)
    verified = {r["fingerprint"]: r.get("exit_codes") or [] for r in load_records(out)} \
        if out.exists() else {}
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    records = []
    for f in findings:
        f.source_lines = cause_of(table, f.column, f.check_id)
        calls, reason = calls_for(f)
        oracle = oracle_for(f.check_id, f.documented, f.message)
        if calls is not None and oracle is None:
            reason = (f"no standalone oracle for `{f.check_id}` on this counterexample yet (the "
                      "verdict needs the suite's own model of the tool)")
        if calls is not None and not f.reproducer:
            reason = "the cell carries no counterexample (no steps)"
        folder = out / f.folder
        folder.mkdir(parents=True)
        if f.implementation.get("tool_type") == "agent_loop":
            node = is_node(f.implementation)
            why = (render_node_repro if node else render_loop_repro)(
                folder, f.check_id, f.implementation, title=_title(f), header=_header(f),
                sentence=f.sentence, statement=f.statement, url=f.url)
            f.repro, f.repro_reason = (None, why) if why else (
                "repro.mjs" if node else "repro.py", "")
        elif calls is not None and oracle is not None and f.reproducer:
            (folder / "repro.py").write_text(render_repro(
                title=_title(f), header=_header(f), calls=calls, oracle=oracle,
                steps=f.reproducer, setup=f.setup, documented=f.documented,
                received=f.received, timeout=f.timeout, check_id=f.check_id,
                statement=f.statement, url=f.url, sentence=f.sentence))
            f.repro = "repro.py"
        else:
            f.repro, f.repro_reason = None, reason
        f.exit_codes = verified.get(f.fingerprint, []) if f.repro else []
        (folder / "ISSUE.md").write_text(render_issue(f))
        record = finding_json(f)
        (folder / FINDING_FILE).write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n")
        records.append(record)
    (out / INDEX).write_text(render_index(records, title))
    return records


def load_records(out: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted(out.glob(f"*/*/{FINDING_FILE}"))]
