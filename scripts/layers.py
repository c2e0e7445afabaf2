"""The floors of ``conformance/``, the circles of ``simulator/``, and the imports that break them
(docs/architecture.md).

usage: python -m scripts.layers [--verbose]   (from the project root; exit 1 when an import runs
upward, two files import each other in a circle, a unit has no floor, a package's ``__init__``
imports its own package, or the floors table of docs/architecture.md disagrees with FLOORS)

Every unit of ``conformance/`` (a top-level module or sub-package) stands on one floor; an import
may go down or sideways, never up. Module-level and function-level imports both count: an import
moved into a function to dodge a cycle is still the cycle. So does an import spelled as a string
(``importlib.import_module("conformance.cli")``, ``__import__(...)``): the string hides the edge
from a reader, not from the interpreter. A package's own ``__init__`` is run before any of its
modules, so it stands below all of them: it imports nothing of its package (``ROOT_EXPORTS``
lists the lazy public forwarders that may, with their reason). ``simulator/`` has no floors, but
the same measure keeps it free of file circles and unit knots. ``tests/test_layers.py`` runs this.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

PACKAGE = "conformance"

# Top down; a unit imports only units on its own floor or below (and `simulator`, below all).
FLOORS: tuple[tuple[str, ...], ...] = (
    ("cli",),
    ("matrix", "findings", "probe", "pytest", "plugin"),
    ("reports", "checks_doc"),
    ("runner", "rejudge", "options", "run", "shards"),
    ("checks", "reference", "lint_tools"),
    ("loops", "workers"),
    ("properties", "subjects", "reproducers", "rechecks", "adapters"),
    ("errors", "catalog", "basis", "results", "session", "cache", "starters",
     "wording", "shipped"),
)
FLOOR_OF: dict[str, int] = {
    unit: len(FLOORS) - i for i, units in enumerate(FLOORS) for unit in units}

#: The packages measured, with their floors (``None``: circles and the root rule only).
PACKAGES: dict[str, tuple[tuple[str, ...], ...] | None] = {"conformance": FLOORS, "simulator": None}

#: Imports a package's root ``__init__`` may make of its own package: lazy forwarders of its public
#: surface, called by users only, never at import time (each with its reason).
ROOT_EXPORTS: dict[str, frozenset[str]] = {
    # `simulator.mock(...)`, the README's entry point for an unmodified SDK in-process: a function
    # that imports the transports when called, so `import simulator` stays light
    "simulator": frozenset({"simulator.transports.mock"}),
    "conformance": frozenset(),
}

#: Calls whose first argument, a string, names a module they import.
_STRING_IMPORTS = frozenset({"import_module", "__import__"})


@dataclass(frozen=True)
class Import:
    source: str  # the importing module, dotted
    target: str  # the imported module, dotted
    path: Path
    line: int
    in_function: bool
    by_string: bool = False  # importlib.import_module("...") / __import__("...")


@dataclass(frozen=True)
class Floors:
    imports: tuple[Import, ...]
    upward: tuple[Import, ...]
    cycles: tuple[tuple[str, ...], ...]  # files importing each other in a circle
    knots: tuple[tuple[str, ...], ...]  # units importing each other in a circle
    unplaced: tuple[str, ...]  # units on no floor
    from_root: tuple[Import, ...] = ()  # the package's own __init__ importing its package

    @property
    def broken(self) -> bool:
        return bool(self.upward or self.cycles or self.knots or self.unplaced or self.from_root)


def module_name(root: Path, path: Path) -> str:
    rel = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(rel[:-1] if rel[-1] == "__init__" else rel)


def unit_of(module: str, package: str = PACKAGE) -> str | None:
    parts = module.split(".")
    return parts[1] if parts[0] == package and len(parts) > 1 else None


def _string_import(node: ast.AST, package: str) -> str | None:
    """The module a call like ``importlib.import_module("x.y")`` or ``__import__("x.y")`` names,
    when its first argument is a string constant (a relative name is resolved against the
    ``package=`` argument when that is ``__name__``/``__package__`` or a string)."""
    if not (isinstance(node, ast.Call) and node.args):
        return None
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    first = node.args[0]
    if name not in _STRING_IMPORTS or not (isinstance(first, ast.Constant)
                                           and isinstance(first.value, str)):
        return None
    target = first.value
    if target.startswith("."):
        level = len(target) - len(target.lstrip("."))
        base = package.split(".")[: max(len(package.split(".")) - level + 1, 0)]
        target = ".".join(base + ([target.lstrip(".")] if target.lstrip(".") else []))
    return target


def _walk(tree: ast.AST, in_function: bool = False) -> Iterator[tuple[ast.AST, bool]]:
    for child in ast.iter_child_nodes(tree):
        yield child, in_function
        inner = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        yield from _walk(child, inner)


def _imports(root: Path, path: Path, modules: set[str]) -> Iterator[Import]:
    here = module_name(root, path)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]

    def resolve(name: str) -> str | None:
        # the longest prefix of `name` that is a module of the package
        parts = name.split(".")
        for n in range(len(parts), 1, -1):
            candidate = ".".join(parts[:n])
            if candidate in modules:
                return candidate
        return None

    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    for node, in_function in _walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            # `from pkg import module` imports the module; `from module import name` the module
            names = [f"{mod}.{a.name}" if f"{mod}.{a.name}" in modules else mod for a in node.names]
        elif (named := _string_import(node, package)) is not None:
            if (target := resolve(named)) and target != here:
                yield Import(here, target, path, getattr(node, "lineno", 0), in_function, True)
            continue
        for name in dict.fromkeys(names):
            target = resolve(name)
            if target and target != here:
                yield Import(here, target, path, getattr(node, "lineno", 0), in_function)


def _components(graph: dict[str, set[str]]) -> list[tuple[str, ...]]:
    """Strongly connected components of more than one node (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[tuple[str, ...]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        found.append(tuple(sorted(comp)))
    return sorted(found)


def measure(root: Path = Path(PACKAGE),
            floors: tuple[tuple[str, ...], ...] | None | bool = True) -> Floors:
    """Measure the package at ``root`` (its name is the package's). ``floors``: the floors to
    judge it by (``True``: ``PACKAGES[root.name]``; ``None``: none, circles and the root only)."""
    package = root.name
    table = PACKAGES.get(package) if floors is True else floors or None
    floor_of = {u: len(table) - i for i, units in enumerate(table) for u in units} if table else {}
    files = sorted(root.rglob("*.py"))
    modules = {module_name(root, f) for f in files}
    imports = tuple(i for f in files for i in _imports(root, f, modules))
    units = {u for m in modules if (u := unit_of(m, package))}
    upward = tuple(
        i for i in imports
        if table and (s := unit_of(i.source, package)) and (t := unit_of(i.target, package))
        and s != t and floor_of.get(t, 0) > floor_of.get(s, len(table) + 1))
    files_graph: dict[str, set[str]] = defaultdict(set)
    units_graph: dict[str, set[str]] = defaultdict(set)
    for i in imports:
        files_graph[i.source].add(i.target)
        s, t = unit_of(i.source, package), unit_of(i.target, package)
        if s and t and s != t:
            units_graph[s].add(t)
    allowed = ROOT_EXPORTS.get(package, frozenset())
    from_root = tuple(i for i in imports if i.source == package and i.target not in allowed)
    return Floors(imports, upward, tuple(_components(files_graph)),
                  tuple(_components(units_graph)),
                  tuple(sorted(units - set(floor_of))) if table else (), from_root)


_ROW = re.compile(r"^\|\s*(\d+)\s*\|([^|]*)\|")


def documented_floors(page: str) -> dict[str, int]:
    """The floor of every unit the floors table of docs/architecture.md names (``| 8 | `cli` |``;
    floor 0 is ``simulator``, below the package)."""
    found: dict[str, int] = {}
    for line in page.splitlines():
        if m := _ROW.match(line):
            for unit in re.findall(r"`([A-Za-z_][\w.]*)`", m.group(2)):
                found[unit] = int(m.group(1))
    return found


def floors_disagreeing(page: str) -> list[str]:
    """Where the docs table and FLOORS disagree, one line each (empty: they agree)."""
    docs = documented_floors(page)
    code = {**FLOOR_OF, "simulator": 0}
    out = [f"`{u}`: floor {docs[u]} in the docs, {f} in scripts/layers.py" for u, f in code.items()
           if u in docs and docs[u] != f]
    out += [f"`{u}`: floor {f} in scripts/layers.py, not in the docs table" for u, f in code.items()
            if u not in docs]
    out += [f"`{u}`: floor {docs[u]} in the docs table, no such unit in scripts/layers.py"
            for u in docs if u not in code]
    return out


def problems(project: Path = Path("."), packages: tuple[str, ...] = tuple(PACKAGES),
             verbose: bool = True) -> list[str]:
    """Every way the floors break in the checkout at ``project``, one line each (empty: they
    hold): the packages' imports and the floors table of its docs/architecture.md. Printed with
    a summary line per package when ``verbose``."""
    out: list[str] = []
    for package in packages:
        floors = measure(project / package)
        if verbose:
            in_function = sum(1 for i in floors.imports if i.in_function)
            by_string = sum(1 for i in floors.imports if i.by_string)
            print(f"{package}/: {len(floors.imports)} imports inside the package ({in_function} in "
                  f"functions, {by_string} as strings), {len(floors.upward)} upward, "
                  f"{len(floors.cycles)} file cycle(s), {len(floors.knots)} unit knot(s), "
                  f"{len(floors.unplaced)} unit(s) on no floor, "
                  f"{len(floors.from_root)} from its __init__")
        out += [f"no floor: {package}.{u}" for u in floors.unplaced]
        out += [f"upward: {_at(project, i)} {i.source} -> {i.target}" for i in floors.upward]
        out += [f"from its __init__: {_at(project, i)} -> {i.target}" for i in floors.from_root]
        out += [f"file cycle: {' '.join(c)}" for c in floors.cycles]
        out += [f"unit knot: {' '.join(k)}" for k in floors.knots]
    page = project / "docs" / "architecture.md"
    if "conformance" in packages and page.exists():
        out += [f"docs/architecture.md: {line}"
                for line in floors_disagreeing(page.read_text(encoding="utf-8"))]
    return out


def _at(project: Path, i: Import) -> str:
    try:
        where = i.path.relative_to(project)
    except ValueError:
        where = i.path
    how = " (a string)" if i.by_string else " (in a function)" if i.in_function else ""
    return f"{where}:{i.line}{how}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.layers", description=__doc__.split("\n")[0])
    parser.add_argument("--verbose", "-v", action="store_true", help="list every offending import")
    args = parser.parse_args(argv)
    found = problems()
    for line in found if args.verbose else found[:20]:
        print(f"  {line}")
    if len(found) > 20 and not args.verbose:
        print(f"  ... and {len(found) - 20} more (--verbose lists them all)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
