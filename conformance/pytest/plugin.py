"""pytest plugin (entry point ``pytest11``): the suite inside a team's own test run.

Kept thin: options and fixtures only; the work lives in the runner and the simulator.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable, Generator, Iterator
from contextlib import ExitStack
from typing import Any

import pytest

from conformance.pytest import CONFINEMENT

# Nothing else of the suite is imported until a --tooluse-* option asks for it: the plugin loads
# in every pytest run of an environment it is installed in.


class _Deferred(argparse.Action):
    """An option whose action lives in the suite (``module:Class``), imported when it is used."""

    target = ""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        module, _, name = self.target.partition(":")
        action = getattr(importlib.import_module(module), name)
        action(self.option_strings, self.dest)(parser, namespace, values, option_string)


class _SubjectOption(_Deferred):
    target = "conformance.options:SubjectOption"


class _NameOption(_Deferred):
    target = "conformance.options:NameOption"


#: The options naming subjects: without one, no conformance item is collected.
SUBJECT_OPTIONS = ("--tooluse-bash", "--tooluse-bash-cmd", "--tooluse-editor",
                   "--tooluse-editor-cmd")

OPTIONS: list[tuple[str, dict[str, Any]]] = [
    ("--tooluse-bash", dict(action=_SubjectOption, default=[], metavar="SPEC",
                            help="a bash tool implementation to check (module:attr factory, "
                                 "path/file.py:attr or a reference subject's name)")),
    ("--tooluse-bash-cmd", dict(action=_SubjectOption, default=[], metavar="CMD",
                                help="an out-of-process bash tool (JSON lines), any language")),
    ("--tooluse-bash-type", dict(default=None, metavar="T",
                                 help="bash tool type of those subjects (default bash_20250124)")),
    ("--tooluse-editor", dict(action=_SubjectOption, default=[], metavar="SPEC",
                              help="a text editor tool implementation to check")),
    ("--tooluse-editor-cmd", dict(action=_SubjectOption, default=[], metavar="CMD",
                                  help="an out-of-process text editor tool (JSON lines)")),
    ("--tooluse-editor-type", dict(default=None, metavar="T",
                                   help="text editor tool type (default text_editor_20250728)")),
    ("--tooluse-name", dict(action=_NameOption, default=None, metavar="NAME",
                            help="the label of the --tooluse-bash/-bash-cmd/-editor/-editor-cmd "
                                 "subject given just before it (its items are ID[NAME])")),
    ("--tooluse-editor-max-characters", dict(type=int, default=None, metavar="N",
                                             help="max_characters the editors are configured with")),
    ("--tooluse-check", dict(action="append", default=[], metavar="ID",
                             help="only these check ids (globs allowed)")),
    ("--tooluse-timeout", dict(type=float, default=None, metavar="S",
                               help="command timeout given to subjects (default 3 s)")),
    ("--tooluse-startup-timeout", dict(type=float, default=None, metavar="S",
                                       help="how long a subject may take to start and answer a "
                                            "first, harmless call (not tool time)")),
    ("--tooluse-strict", dict(action="store_true", default=False,
                              help="SHOULD checks fail the test run like MUST ones")),
    ("--tooluse-fail-on-flaky", dict(action="store_true", default=False,
                                     help="flaky results (an intermittent failure) fail their "
                                          "item like failures (default: a pass with a warning)")),
    ("--tooluse-sandbox", dict(choices=("auto", "required", "off"), default=None,
                               help="run subjects under bubblewrap (default auto: where it works; "
                                    "required: a usage error without it); see tooluse run "
                                    "--sandbox")),
    ("--tooluse-pass-env", dict(action="append", default=[], metavar="NAME",
                                help="also give subjects this environment variable (never a "
                                     "credential)")),
]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("tooluse", "tool-use protocol conformance")
    group.addoption("--tooluse-fixtures", default=None,
                    help="cassette directory for the tooluse_simulator fixture")
    group.addoption("--tooluse-out", default=None, metavar="DIR",
                    help="write results.json and the reports of the conformance items into DIR "
                         "(one report for the run, pytest-xdist workers' results merged)")
    for name, kwargs in OPTIONS:  # --tooluse-bash SPEC, --tooluse-editor SPEC, ... (docs/subjects.md)
        group.addoption(name, **kwargs)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "tooluse: a conformance check run against a subject")
    sandbox, pass_env = (config.getoption("--tooluse-sandbox", None),
                         config.getoption("--tooluse-pass-env", None))
    if sandbox or pass_env:  # the run's confinement, as `tooluse run` makes it
        from conformance.errors import UsageError
        from conformance.options import confinement_of

        try:
            config.stash[CONFINEMENT] = confinement_of(
                argparse.Namespace(sandbox=sandbox, pass_env=pass_env))
        except UsageError as e:
            raise pytest.UsageError(f"tooluse: {e}") from None
    if config.getoption("--tooluse-out", None):
        from conformance.pytest.report import register

        register(config)  # --tooluse-out DIR


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item,
                              call: pytest.CallInfo[Any]) -> Generator[None, Any, None]:
    """A conformance item whose subject did not start is an error, not a failure: the case
    never ran (issue 36), as a test whose setup broke (``ERROR at setup of ...``)."""
    outcome = yield
    if call.when == "call" and getattr(item, "tooluse_not_started", False):
        report = outcome.get_result()
        if report.failed:
            report.when = "setup"


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config,
                                  items: list[pytest.Item]) -> None:
    """One item per (subject, check) named by --tooluse-bash / --tooluse-editor / ..."""
    if not any(config.getoption(name, None) for name in SUBJECT_OPTIONS) \
            and not getattr(config.option, "_name_error", None):
        return
    from conformance.pytest.items import add_items

    add_items(session, config, items)


@pytest.fixture
def tooluse_simulator(request: pytest.FixtureRequest) -> Iterator[Callable[..., Any]]:
    """Start the simulator in-process: ``api = tooluse_simulator(cassette_or_dir, **engine_opts)``
    (default source: ``--tooluse-fixtures``); an unmodified ``anthropic.Anthropic()`` then talks
    to it until the test ends. Returns :class:`simulator.transports.MockedAPI`."""
    from simulator.transports import mock

    with ExitStack() as stack:
        def start(source: Any = None, **engine_opts: Any) -> Any:
            source = source if source is not None else request.config.getoption("--tooluse-fixtures")
            if source is None:
                pytest.fail("tooluse_simulator: pass a cassette or directory, or --tooluse-fixtures")
            return stack.enter_context(mock(source, **engine_opts))

        yield start
