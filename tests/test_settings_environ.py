"""Below the entry points nothing reads the environment for settings (issue 38): the run's
settings are one value (``conformance.run.Run``), built once where ``tooluse``, the pytest
plugin, the matrix or the probe start, and carried whole to every case.

The scan reads every module of ``conformance/`` (its AST) for ``os.environ``, ``os.getenv`` and
``from_environ``; each place that may read one is listed below with why (an entry point, a
child process reading what its parent wrote, an environment copied to a child rather than read
as a setting). A new read fails this test, naming the file and line."""

from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest

from conformance.run import Run
from conformance.subjects.launch import Confinement

PACKAGE = Path(__file__).resolve().parent.parent / "conformance"

#: Where the environment may be read: a module (``path``), a package (``path/``) or a function
#: (``path:qualname``) of ``conformance/``, and why.
ALLOWED: dict[str, str] = {
    # the entry points: they build the run's value from the options over the environment
    "cli/": "the `tooluse` commands: each entry point builds its Run (Run.from_args(args, "
            "os.environ)) and reads the API key and base URL of `tooluse probe`",
    "pytest/plugin.py": "the pytest plugin's entry point builds the run's Run from --tooluse-*",
    "run.py:Run.from_args": "builds the Run from the environment its entry point passes "
                                "(the TOOLUSE_* defaults under the options)",
    # child processes: their own entry points, reading what their parent wrote for them
    "subjects/host.py": "the subject host, its own process: reads the TOOLUSE_SPEC, workdir and "
                        "options launch() wrote into its environment",
    "subjects/forkserver.py:serve": "the fork server's child, its own process: "
                                                   "takes the case's environment it was sent",
    "subjects/sandbox.py:_limit": "the subject host applying to itself the limits launch() "
                                  "wrote into its environment (apply_limits)",
    "subjects/sandbox.py:apply_limits": "the subject host: TOOLUSE_SANDBOXED, written by launch()",
    "subjects/isolation.py:memory_limit": "the subject host applying to itself the memory limit "
                                          "launch() wrote into its environment",
    "reference/worker.py": "the bundled worker, a subject program in its own process: its "
                           "contract is its environment (docs/workers.md)",
    "adapters/": "tool and loop adapters run as the subject, in its process: their contract is "
                 "their environment (ANTHROPIC_BASE_URL, TOOLUSE_LOOP_PARAMS)",
    "properties/conventions.py:_pre_history": "a convention variant runs as the subject: it "
                                              "appends to its own (throwaway) HOME",
    # environments copied to a child, not read as settings
    "subjects/launch.py:Confinement.environment": "a child's environment: the allow-listed names "
                                                  "(PATH, LANG, HOME, locale) copied, never a "
                                                  "credential",
    "subjects/sandbox.py:private_tmp_options": "the PATH's folders a sandboxed child must reach",
    "probe/tools.py:_ProbeBashSession.start": "the probe bash's environment: the allow-list "
                                              "less anything that looks like a secret",
    "matrix/execute.py:_environ": "a column's `tooluse run` environment (its own entry point "
                                  "reads it)",
    "matrix/envs.py:_build": "the environment of a column's installer (pip, npm)",
    "findings/verify.py:verify": "a finding's reproducer runs in its own process with this "
                                 "environment and its column's entries",
    # facts of the machine, not settings of a run
    "subjects/sandbox.py:_user_home": "the user's real home, whose credential files get decoys",
    "subjects/sandbox.py:find_bwrap": "which bubblewrap binary this machine has (TOOLUSE_BWRAP "
                                      "points at one), probed once per process",
    "cache.py": "XDG_CACHE_HOME: where the suite keeps what it reuses between runs",
    "matrix/envs.py:find_python": "where pyenv keeps interpreters on this machine",
    "properties/exploration.py:private_storage": "whether the user set hypothesis' own database "
                                               "directory (theirs then, not ours)",
    # not yet carried by the Run (a later change): said here so that it is not forgotten
    "properties/exploration.py:max_examples": "TOOLUSE_MAX_EXAMPLES, the property checks' "
                                              "example budget: the checks get a session, not "
                                              "the run; not yet a Run field",
    "matrix/envs.py:installer": "TOOLUSE_INSTALLER, `tooluse matrix`'s choice of installer (uv "
                                "or pip): read where environments are built",
}


class _Reads(ast.NodeVisitor):
    """Every ``os.environ``, ``os.getenv`` and ``.from_environ`` with its enclosing qualname."""

    def __init__(self) -> None:
        self.stack: list[str] = []
        self.found: list[tuple[int, str, str]] = []

    def _scope(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        self.stack.append(node.name)
        if not isinstance(node, ast.ClassDef):
            self.stack.append("<locals>")
        self.generic_visit(node)
        del self.stack[-1 if isinstance(node, ast.ClassDef) else -2:]

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _scope

    def visit_Attribute(self, node: ast.Attribute) -> None:
        what = None
        if node.attr in ("environ", "getenv") and isinstance(node.value, ast.Name) \
                and node.value.id == "os":
            what = f"os.{node.attr}"
        elif node.attr == "from_environ":
            what = "from_environ"
        if what is not None:
            names = [n for n in self.stack if n != "<locals>"]
            qual = ".".join(self.stack).removesuffix(".<locals>") if names else ""
            self.found.append((node.lineno, what, qual))
        self.generic_visit(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        for alias in node.names:  # from os import environ: a read wherever it is used
            if node.module == "os" and alias.name in ("environ", "getenv"):
                self.found.append((node.lineno, f"os.{alias.name}", ".".join(self.stack)))


def environment_reads() -> list[tuple[str, int, str, str]]:
    """(path under conformance/, line, what, enclosing qualname) of every read."""
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        reads = _Reads()
        reads.visit(ast.parse(path.read_text(encoding="utf-8"), str(path)))
        rel = path.relative_to(PACKAGE).as_posix()
        out += [(rel, line, what, qual) for line, what, qual in reads.found]
    return out


def allowed(rel: str, qual: str) -> bool:
    return any(rel == key or (key.endswith("/") and rel.startswith(key))
               or key == f"{rel}:{qual}" or (qual and key == f"{rel}:{qual.split('.<locals>')[0]}")
               for key in ALLOWED)


def test_nothing_below_the_entry_points_reads_the_environment_for_settings() -> None:
    unlisted = [f"conformance/{rel}:{line}: {what} in {qual or 'the module'}"
                for rel, line, what, qual in environment_reads() if not allowed(rel, qual)]
    assert not unlisted, ("read the setting at the entry point into the run's value "
                          "(conformance.run.Run) and carry it, or list the place in "
                          "ALLOWED with why:\n" + "\n".join(unlisted))


def test_every_listed_place_still_reads_the_environment() -> None:
    """The list stays true: a place that no longer reads it is taken off."""
    reads = environment_reads()
    for key in ALLOWED:
        rel, _, qual = key.partition(":")
        assert any((r == rel or (rel.endswith("/") and r.startswith(rel)))
                   and (not qual or q == qual or q.startswith(qual + ".<locals>"))
                   for r, _, _, q in reads), f"{key} reads no environment any more"


def test_the_scan_finds_a_planted_read(tmp_path: Path) -> None:
    tree = ast.parse("import os\nclass C:\n    def m(self):\n        return os.environ['X']\n"
                     "def f():\n    return os.getenv('Y') or Confinement.from_environ({})\n"
                     "def g():\n    from os import environ\n    return environ\n")
    reads = _Reads()
    reads.visit(tree)
    assert [(line, what, qual) for line, what, qual in reads.found] == [
        (4, "os.environ", "C.m"), (6, "os.getenv", "f"), (6, "from_environ", "f"),
        (8, "os.environ", "g.<locals>")]


def test_a_run_built_without_an_environment_has_the_documented_defaults(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Below the entry point the environment changes nothing: the value carries the settings."""
    monkeypatch.setenv("TOOLUSE_SANDBOX", "off")
    monkeypatch.setenv("TOOLUSE_MEMORY_LIMIT", "0")
    run = Run.from_argv(["--bash", "reference-bash"])
    assert run.confinement == Confinement() and run.case.confinement == Confinement()
    from_env = Run.from_argv(["--bash", "reference-bash"], os.environ)
    assert (from_env.confinement.mode, from_env.confinement.memory) == ("off", None)
    assert Run.from_argv(["--sandbox", "auto"], os.environ).confinement.mode == "auto"
