"""The conformance suite as pytest items (used by :mod:`conformance.pytest.plugin`).

``pytest --tooluse-bash SPEC`` adds one item per (subject, applicable check), named
``<check id>[<subject>]`` under a ``tooluse`` collector, so ``-k``, ``-x``, ``-n`` and JUnit work
as usual. Each item runs :func:`conformance.runner.run_case`: a MUST failure (or any harness
error) fails the item, SHOULD/INFO failures are xfail unless ``--tooluse-strict``, skips skip.
A flaky result (an intermittent failure) passes with a warning that gives both observations,
and fails the item like a failure under ``--tooluse-fail-on-flaky``. An item whose subject did
not start is an error (``ERROR at setup of ...``), not a failure: its case never ran.
"""

from __future__ import annotations

from typing import Any

import pytest

from conformance import runner
from conformance.basis import basis_lines
from conformance.catalog import Check, Severity
from conformance.errors import UsageError
from conformance.pytest import RUN
from conformance.reports.rerun import rerun_line
from conformance.reports.summary import indented, readable
from conformance.results import CheckResult, Outcome
from conformance.run import Run, build_subjects
from conformance.runner import run_case
from conformance.subjects.spec import preflight

# The options (--tooluse-bash, ...) are declared in conformance.pytest.plugin, which imports this
# module only when one of them names a subject: a pytest run that does not use them pays nothing.


def settings_of(config: pytest.Config) -> Run:
    """The run's settings, built once by the plugin from the --tooluse-* options."""
    settings: Run = config.stash[RUN]
    return settings


def subjects_from_config(config: pytest.Config) -> list[Any]:
    try:
        return build_subjects(settings_of(config))
    except UsageError as e:
        raise pytest.UsageError(f"tooluse: {e}") from None


class ConformanceFailure(Exception):
    def __init__(self, result: CheckResult) -> None:
        super().__init__(result.message)
        self.result = result


class ConformanceCollector(pytest.Collector):
    def collect(self) -> list[Any]:  # items are added by add_items
        return []


class ConformanceItem(pytest.Item):
    def __init__(self, *, subject: Any, check: Check, settings: Run, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.subject, self.check, self.settings = subject, check, settings
        self.strict, self.fail_on_flaky = settings.strict, settings.fail_on_flaky
        self.add_marker(pytest.mark.tooluse)
        self.user_properties.append(("severity", check.severity.value))

    def runtest(self) -> None:
        result = run_case(self.subject, self.check, self.settings.case)
        self.tooluse_result = result  # for --tooluse-out (conformance.pytest.report)
        # The subject did not start: an error of the item, not a failure (plugin.py's report).
        self.tooluse_not_started = runner.is_start_failure(result)
        self.user_properties.append(("outcome", result.outcome.value))
        if result.rejudged:  # a failure run again at once: both observations, never silent
            from conformance.results import rejudged_note

            self.user_properties.append(("rejudged", rejudged_note(result.rejudged)))
            if result.outcome is Outcome.PASS:
                import warnings

                warnings.warn(f"tooluse: {self.check.id} on {self.subject.name}: "
                              f"{rejudged_note(result.rejudged)}", stacklevel=1)
        if result.outcome is Outcome.SKIP:
            pytest.skip(result.message)
        if result.outcome is Outcome.INCOMPLETE:  # neither a pass nor a failure
            pytest.skip(f"incomplete: {result.message}")
        if result.outcome is Outcome.PASS:
            return
        gating = (self.check.severity is Severity.MUST
                  or (self.strict and self.check.severity is Severity.SHOULD))
        if result.outcome is Outcome.FLAKY and not (self.fail_on_flaky and gating):
            import warnings

            warnings.warn(f"tooluse: {self.check.id} on {self.subject.name} is flaky (an "
                          f"intermittent failure; --tooluse-fail-on-flaky fails it): "
                          f"{result.message}", stacklevel=1)
            return
        blocking = result.outcome is Outcome.ERROR or gating
        if not blocking:
            pytest.xfail(f"{self.check.severity} check failed: {result.message}")
        raise ConformanceFailure(result)

    def repr_failure(self, excinfo: Any, style: Any = None) -> Any:
        if isinstance(excinfo.value, ConformanceFailure):
            return describe(self.check, excinfo.value.result, self.rerun_command())
        return super().repr_failure(excinfo)

    def rerun_command(self) -> str:
        """``tooluse run <this subject> --check ID``: the same case outside pytest."""
        return rerun_line(self.settings, self.subject.info.to_json(), self.check.id)

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, None, f"{self.check.id} on {self.subject.name}"


def describe(check: Check, r: CheckResult, rerun: str = "") -> str:
    kind = ("harness error" if r.outcome is Outcome.ERROR
            else f"{check.severity} check flaky (--tooluse-fail-on-flaky)"
            if r.outcome is Outcome.FLAKY else f"{check.severity} check failed")
    lines = [f"{kind}: {check.id} on {r.subject} ({r.tool_type})",
             f"  requirement: {check.statement}", f"  source: {check.source.cite()}",
             *[f"  {line}" for line in basis_lines(check.basis_json())],
             indented(r.message, "  ")]
    if r.rejudged:
        from conformance.results import rejudged_note

        lines.append(f"  {rejudged_note(r.rejudged)}")
    if r.received is not None:
        lines.append(f"  received:   {readable(r.received, 2000)}")
    if r.documented is not None:
        lines.append(f"  documented: {readable(r.documented, 2000)}")
    if r.reproducer:
        from conformance.reports.render_common import reproducer_setup, reproducer_verification

        lines += [f"  {x}" for x in reproducer_setup(r.to_json())]
        lines.append("  reproducer (tool inputs, in order):")
        lines += [f"    {readable(i, 500)}" for i in r.reproducer[:20]]
        lines += [f"  {x}" for x in reproducer_verification(r.to_json())]
    if rerun:
        lines.append(f"  rerun: {rerun}")
    return "\n".join(lines)


def add_items(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """Append one item per (subject, applicable check) named on the command line."""
    subjects = subjects_from_config(config)
    if not subjects:
        return

    settings = settings_of(config)
    try:  # a mistyped command: one usage error, not a failure per item
        preflight(subjects, settings.case)
    except UsageError as e:
        raise pytest.UsageError(f"tooluse: {e}") from None

    patterns = list(settings.checks) or None
    if patterns and runner.unmatched_patterns(patterns):
        raise pytest.UsageError(f"tooluse: --tooluse-check {' '.join(patterns)} matches no "
                                "check; see `tooluse checks`")
    parent = ConformanceCollector.from_parent(session, name="tooluse", nodeid="tooluse")
    for subject in subjects:
        for chk in runner.select_checks(subject, patterns):
            items.append(ConformanceItem.from_parent(
                parent, name=f"{chk.id}[{subject.name}]", subject=subject, check=chk,
                settings=settings))
