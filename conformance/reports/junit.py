"""JUnit XML for CI systems (Jenkins, GitLab, GitHub test reporters).

One ``<testsuite>`` per subject, one ``<testcase>`` per check (``classname`` = subject.family,
``name`` = check id). A red test case means what the exit code means:

- ``<failure>``: a MUST check failed (a SHOULD one too under ``--strict``), not in the baseline;
- ``<error>``: the harness broke on such a check;
- ``<skipped>``: skipped checks, failures and harness errors of checks that do not gate the run
  (SHOULD/INFO without ``--strict``) and expected failures listed in the baseline; the message
  says which, and the full text is in ``<system-out>``;
- a case that never ran (``not-run``: its subject started in no case) is an ``<error
  type="not-run">`` with ``status="not-run"``, never a ``<failure>``: no verdict on the check, as
  pytest reports a test whose setup broke. (The run exits 2 then.)
- a flaky result (an intermittent failure) is a testcase that did not fail, with
  ``status="flaky"`` and both observations (the failing one with its reproducer, the passing
  re-run) in ``<system-out>``: a CI gate does not flip on it, and a reader of the test report
  still sees it. Under ``--fail-on-flaky`` it is a ``<failure type="flaky">`` (the gate then
  blocks on it). The attribute is the one place the Jenkins/Surefire schema leaves for a
  testcase's own status (Surefire's ``<flakyFailure>`` element is not in that schema).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Any

from conformance.basis import basis_lines
from conformance.results import rejudged_note

from .baseline import BaselineVerdict
from .coverage import coverage_rows
from .render_common import (
    format_value,
    is_known,
    per_subject,
    reproducer_setup,
    reproducer_text,
    reproducer_verification,
)
from .rerun import rerun_for
from .results_file import gating

_DATETIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?([+-]\d\d:\d\d)?")
_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _x(text: str) -> str:
    """Drop characters XML 1.0 cannot carry (subjects echo arbitrary bytes)."""
    return _INVALID_XML.sub("\ufffd", text)


def _details(r: dict[str, Any], rerun: str = "") -> str:
    lines = [r.get("message") or "", rejudged_note(r.get("rejudged"))]
    if r.get("statement"):
        lines.append(f"Requirement: {r['statement']}")
        if r.get("source"):
            from simulator.sources import cite_json_text

            lines.append(f"Source: {cite_json_text(r['source'])}")
        lines += [line[:1].upper() + line[1:] for line in basis_lines(r.get("basis"))]
    if r.get("received") is not None or r.get("documented") is not None:
        lines.append(f"Received: {format_value(r.get('received'))}")
        lines.append(f"Documented: {format_value(r.get('documented'))}")
    if rerun:
        lines.append(f"Rerun: {rerun}")
    lines += reproducer_setup(r)
    if r.get("reproducer"):
        text = reproducer_text(r["reproducer"])
        where = " ($TOOLUSE_WORKDIR: the case's directory)" if "$TOOLUSE_WORKDIR" in text else ""
        lines.append(f"Reproducer{where}:\n" + text)
    lines += reproducer_verification(r)
    return _x("\n".join(x for x in lines if x))


def _case(r: dict[str, Any], strict: bool, verdict: BaselineVerdict | None,
          rerun: str = "", *, fail_on_flaky: bool = False) -> tuple[ET.Element, str]:
    case = ET.Element("testcase", {
        "classname": _x(f"{r['subject']}.{r['family']}"), "name": _x(r["check_id"]),
        "time": f"{float(r.get('duration') or 0):.3f}"})
    outcome = r["outcome"]
    summary = _x((r.get("message") or "").strip().splitlines()[0][:500]) if r.get("message") else ""
    said = [f"observed: {r['observed']}" if r.get("observed") else "",
            rejudged_note(r.get("rejudged"))]  # a failure that did not repeat: both timings
    if outcome == "pass":
        if any(said):  # the convention the subject follows, where the docs leave a choice
            ET.SubElement(case, "system-out").text = _x("\n".join(x for x in said if x))
        return case, "pass"
    if outcome == "skip":
        ET.SubElement(case, "skipped", {"message": summary or "skipped"})
        if said[1]:
            ET.SubElement(case, "system-out").text = _x(said[1])
        return case, "skip"
    if outcome == "incomplete":  # neither a pass nor a failure: JUnit's nearest is skipped
        ET.SubElement(case, "skipped", {"message": f"incomplete: {summary or 'not finished'}"})
        return case, "skip"
    if outcome == "not-run":  # no verdict: an error, as pytest says of a setup that broke
        case.set("status", "not-run")
        el = ET.SubElement(case, "error", {"message": f"not run: {summary or 'did not start'}",
                                           "type": "not-run"})
        el.text = _x(r.get("message") or "")
        return case, "error"
    if outcome == "flaky":
        case.set("status", "flaky")
        if fail_on_flaky and gating(r["severity"], strict=strict) and not is_known(
                r, verdict):
            el = ET.SubElement(case, "failure", {"message": f"flaky: {summary}",
                                                 "type": "flaky"})
            el.text = _details(r, rerun)
            return case, "failure"
        ET.SubElement(case, "system-out").text = _x(
            "flaky (an intermittent failure; "
            + ("an expected failure (baseline)" if is_known(r, verdict)
               else "it fails the run only with --fail-on-flaky") + ")\n" + _details(r, rerun))
        return case, "pass"
    what = "harness error" if outcome == "error" else "not met"
    if is_known(r, verdict):
        note = f"expected failure (baseline): {summary}"
    elif not gating(r["severity"], strict=strict):
        unless = "" if r["severity"] == "INFO" else " without --strict"
        note = f"{r['severity']} {what} (does not fail the run{unless}): {summary}"
    else:
        tag = "error" if outcome == "error" else "failure"
        el = ET.SubElement(case, tag, {"message": summary or what,
                                       "type": "harness" if outcome == "error" else r["severity"]})
        el.text = _details(r, rerun)
        return case, tag
    ET.SubElement(case, "skipped", {"message": note})
    ET.SubElement(case, "system-out").text = _details(r, rerun)
    return case, "skip"


def render_junit(doc: dict[str, Any], verdict: BaselineVerdict | None = None) -> str:
    strict = bool(doc["run"].get("strict"))
    root = ET.Element("testsuites", {"name": "tooluse-conformance"})
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    total_time = 0.0
    for subject, _counts in per_subject(doc):
        results = [r for r in doc["results"] if r["subject"] == subject["name"]]
        suite = ET.SubElement(root, "testsuite", {"name": _x(subject["name"])})
        props = ET.SubElement(suite, "properties")
        for name, value in (("tool_type", subject["tool_type"]), ("family", subject["family"]),
                            ("spec", subject.get("spec", "")),
                            ("anthropic_sdk_version", doc["suite"]["anthropic_sdk_version"] or ""),
                            ("suite_version", doc["suite"]["version"]),
                            ("seed", "" if doc["run"]["seed"] is None else str(doc["run"]["seed"]))):
            ET.SubElement(props, "property", {"name": name, "value": _x(str(value))})
        counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        time = 0.0
        for r in sorted(results, key=lambda r: r["check_id"]):
            again = rerun_for(doc, r) if r["outcome"] in ("fail", "error", "flaky") else ""
            case, kind = _case(r, strict, verdict, again,
                               fail_on_flaky=bool(doc["run"].get("fail_on_flaky")))
            suite.append(case)
            counts["tests"] += 1
            if kind != "pass":
                counts[{"failure": "failures", "error": "errors", "skip": "skipped"}[kind]] += 1
            time += float(r.get("duration") or 0)
        suite.set("tests", str(counts["tests"]))
        for k in ("failures", "errors", "skipped"):
            suite.set(k, str(counts[k]))
            totals[k] += counts[k]
        totals["tests"] += counts["tests"]
        suite.set("time", f"{time:.3f}")
        stamp = str(doc["run"]["started_at"]).removesuffix("Z")
        if _DATETIME.fullmatch(stamp):  # xs:dateTime; normalised documents carry a placeholder
            suite.set("timestamp", stamp)
        total_time += time
    rows = coverage_rows(doc.get("coverage") or {})
    if rows:  # protocol coverage, so a gap shows in CI too: properties of an empty suite
        cov = ET.SubElement(root, "testsuite", {"name": "protocol-coverage", "tests": "0"})
        props = ET.SubElement(cov, "properties")
        for row in rows:
            rest = (row.missing_text() if row.declared is not None
                    else f"missing: {', '.join(row.missing) or 'none'}")
            ET.SubElement(props, "property", {
                "name": f"coverage.{row.dimension.replace(' ', '_')}",
                "value": _x(f"{row.fraction} exercised; {rest}")})
    for k, v in totals.items():
        root.set(k, str(v))
    root.set("time", f"{total_time:.3f}")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
