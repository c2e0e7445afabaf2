"""The ``tooluse`` command: one module per subcommand.

Each module ``conformance.cli.<name>`` exposes ``add_parser(subparsers)`` and ``run(args) -> int``.
Exit codes: 0 all MUST checks pass / everything valid, 1 failures, 2 usage errors.
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
import warnings
from collections.abc import Sequence

from conformance.errors import UsageError

#: subcommand -> module; each module registers its own parser.
COMMANDS = {
    "run": "conformance.cli.run",
    "checks": "conformance.cli.checks",
    "validate": "conformance.cli.validate",
    "serve": "conformance.cli.serve",
    "record": "conformance.cli.record",
    "replay": "conformance.cli.replay",
    "diff": "conformance.cli.diff",
    "probe": "conformance.cli.probe",
    "fixtures": "conformance.cli.fixtures",
    "lint-fixtures": "conformance.cli.lint_fixtures",
    "lint-tools": "conformance.cli.lint_tools",
    "matrix": "conformance.cli.matrix",
    "findings": "conformance.cli.findings",
    "fidelity": "conformance.cli.fidelity",
    "init": "conformance.cli.init",
    "run-merge": "conformance.cli.run_merge",
    "matrix-merge": "conformance.cli.matrix_merge",
}
#: ``tooluse run merge ...`` / ``tooluse matrix merge ...``: the commands above whose second word
#: ``merge`` names their shards' merge (``run-merge``, ``matrix-merge``).
MERGING = ("run", "matrix")

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


#: What ``tooluse --help`` says the command is (the module docstring is for developers).
DESCRIPTION = ("tooluse: the conformance suite and protocol simulator for Claude's tool-use "
               "protocol (bash and text editor tools, code execution, programmatic tool "
               "calling, Managed Agents custom tools). 'tooluse COMMAND --help' for each.")

_ROLE = re.compile(r":[a-z]+:`~?([^`]+)`")


def plain(text: str | None) -> str | None:
    """Help text without reStructuredText markup: ``x`` and :role:`x` become x, `x` 'x'."""
    if not text:
        return text
    text = _ROLE.sub(r"\1", text).replace("``", "")
    return re.sub(r"`([^`]+)`", r"'\1'", text)


def _plain_help(parser: argparse.ArgumentParser) -> None:
    """Strip markup from a parser's description and its options' help (they come from
    docstrings and help strings written for the docs)."""
    parser.description = plain(parser.description)
    for action in parser._actions:
        action.help = plain(action.help)
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:
                choice.help = plain(choice.help)


def build_parser() -> argparse.ArgumentParser:
    from conformance.shipped import docs_dir
    from simulator import version

    parser = argparse.ArgumentParser(
        prog="tooluse", description=DESCRIPTION,
        epilog=f"The docs pages this help and the reports name are installed with the "
               f"package: {docs_dir()}")
    parser.add_argument("--version", action="version", version=f"%(prog)s {version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name, modname in COMMANDS.items():
        mod = importlib.import_module(modname)
        p = mod.add_parser(sub, name)
        p.set_defaults(_run=mod.run)
        _plain_help(p)
    _plain_help(parser)
    return parser


#: A false alarm hypothesis raises when checks run at once in threads: another thread (the
#: SDK's retry jitter in a loop check, say) moved the global ``random`` state while a strategy
#: drew, and hypothesis' own thread race guard (``hypothesis.control``) does not know that state.
#: No strategy of the suite uses ``random``; shown as a FutureWarning, it alarmed users' CI logs.
RANDOM_IN_STRATEGY = "Do not use the `random` module inside strategies"


def main(argv: Sequence[str] | None = None) -> int:
    warnings.filterwarnings("ignore", message=re.escape(RANDOM_IN_STRATEGY),
                            category=FutureWarning)
    parser = build_parser()
    typed = list(sys.argv[1:] if argv is None else argv)
    words = typed
    if len(typed) >= 2 and typed[0] in MERGING and typed[1] == "merge":
        words = [f"{typed[0]}-merge", *typed[2:]]
    args = parser.parse_args(words)
    args._argv = typed  # as typed (the rerun commands)
    try:
        return int(args._run(args))
    except UsageError as e:
        from simulator.secrets import SecretScanner  # a bad option may hold a credential

        print(f"tooluse {args.command.replace('-merge', ' merge')}: error: "
              f"{SecretScanner().redact_text(str(e))}",
              file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
