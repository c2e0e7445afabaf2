"""The floors of ``conformance/`` hold (docs/architecture.md): nothing imports upward, no file
imports another in a circle, nothing below the CLI imports it, the package's ``__init__`` imports
nothing of it, and the docs table says what the code says. ``simulator/`` has no circles either.
Measured by scripts/layers.py from the source, function-level imports and imports spelled as
strings included; each kind of violation is planted in a copy of the real tree to watch the
measure fail."""

from __future__ import annotations

import shutil
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from scripts import layers  # noqa: E402


@pytest.fixture(scope="module")
def floors() -> layers.Floors:
    """Measured once, by the worker that runs these tests (not at collection: every pytest-xdist
    worker collects this module, and the measure is ~1.3 CPU-s; issue 21)."""
    return layers.measure(ROOT / "conformance")


def _where(imports: object) -> str:
    return "; ".join(f"{i.path.relative_to(ROOT)}:{i.line} imports {i.target}"
                     for i in imports)  # type: ignore[attr-defined]


def test_every_unit_stands_on_a_floor(floors: layers.Floors) -> None:
    assert floors.unplaced == (), (
        f"{floors.unplaced}: give each a floor in scripts/layers.py FLOORS and docs/architecture.md")


def test_no_import_runs_upward(floors: layers.Floors) -> None:
    assert len(floors.upward) == 0, f"upward imports: {_where(floors.upward)}"


def test_no_import_cycles(floors: layers.Floors) -> None:
    assert floors.cycles == (), f"files importing each other in a circle: {floors.cycles}"
    assert floors.knots == (), f"units importing each other in a circle: {floors.knots}"


def test_only_the_cli_imports_the_cli(floors: layers.Floors) -> None:
    bad = [i for i in floors.imports if layers.unit_of(i.target) == "cli"
           and layers.unit_of(i.source) != "cli"]
    assert not bad, _where(bad)


@pytest.mark.parametrize("unit", ["errors", "catalog", "results", "session", "subjects",
                                  "properties"])
def test_the_lower_floors_import_nothing_above_them(unit: str, floors: layers.Floors) -> None:
    floor = layers.FLOOR_OF[unit]
    bad = [i for i in floors.imports if layers.unit_of(i.source) == unit
           and (t := layers.unit_of(i.target)) and t != unit and layers.FLOOR_OF[t] > floor]
    assert not bad, _where(bad)


def test_every_floor_is_in_the_architecture_page() -> None:
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    missing = [u for units in layers.FLOORS for u in units if f"`{u}" not in page]
    assert not missing, f"docs/architecture.md does not name {missing}"


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "conformance"
    for name, text in {"__init__.py": "", **files}.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root


def test_the_measure_finds_an_upward_import_even_inside_a_function(tmp_path: Path) -> None:
    root = _package(tmp_path, {
        "results.py": "",
        "cli/__init__.py": "from conformance import results\n",
        "subjects/__init__.py": "def late():\n    from conformance.cli import main\n",
    })
    found = layers.measure(root)
    assert [(i.source, i.target, i.in_function) for i in found.upward] == [
        ("conformance.subjects", "conformance.cli", True)]
    assert found.cycles == () and found.unplaced == ()


def test_the_measure_finds_a_cycle_and_an_unplaced_unit(tmp_path: Path) -> None:
    root = _package(tmp_path, {
        "reports/__init__.py": "from conformance.reports import html\n",
        "reports/html.py": "from . import rerun\n",
        "reports/rerun.py": "from conformance.reports import html\n",
        "gadgets.py": "",
    })
    found = layers.measure(root)
    assert found.cycles == (("conformance.reports.html", "conformance.reports.rerun"),)
    assert found.unplaced == ("gadgets",)


def test_the_package_inits_import_nothing_of_their_package(floors: layers.Floors) -> None:
    assert floors.from_root == (), _where(floors.from_root)


def test_the_docs_table_says_the_floors_the_code_has() -> None:
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert layers.floors_disagreeing(page) == []


def test_the_simulator_has_no_circles() -> None:
    found = layers.measure(ROOT / "simulator")
    assert found.cycles == (), f"files importing each other in a circle: {found.cycles}"
    assert found.knots == (), f"units importing each other in a circle: {found.knots}"
    assert found.from_root == (), _where(found.from_root)
    assert not any(i.target.startswith("conformance") for i in found.imports)


def test_a_string_import_is_an_import(tmp_path: Path) -> None:
    root = _package(tmp_path, {
        "results.py": "",
        "cli/__init__.py": "",
        "subjects/__init__.py": (
            "import importlib\n"
            "def late():\n"
            "    return importlib.import_module('conformance.cli')\n"
            "def later():\n"
            "    return __import__('conformance.cli')\n"
            "def relative():\n"
            "    return importlib.import_module('..cli', package=__name__)\n"),
    })
    found = layers.measure(root)
    assert [(i.target, i.by_string) for i in found.upward] == [("conformance.cli", True)] * 3


# Each kind of violation, planted in a copy of the real tree: the floor test must fail on it.
PLANTS = {
    "an import in the package's __init__": (
        "conformance", "conformance/__init__.py", "\nfrom conformance import cli  # planted\n",
        "from its __init__"),
    "an import_module string running upward": (
        "conformance", "conformance/results.py",
        "\nimport importlib\n\ndef _planted():\n    return importlib.import_module('conformance.reports')\n",
        "upward: conformance/results.py"),
    "an __import__ string running upward": (
        "conformance", "conformance/catalog.py",
        "\ndef _planted():\n    return __import__('conformance.runner')\n",
        "upward: conformance/catalog.py"),
    "a wrong floor in the docs table": (
        "conformance", "docs/architecture.md", None, "docs/architecture.md: `runner`"),
    "a circle in the simulator": (
        "simulator", "simulator/clock.py", "\nfrom simulator import engine  # planted\n",
        "file cycle"),
    "an import in the simulator's __init__": (
        "simulator", "simulator/__init__.py", "\nfrom simulator import registry  # planted\n",
        "from its __init__"),
}


@pytest.fixture(scope="module")
def real_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The packages' sources and the architecture page, copied once."""
    copy = tmp_path_factory.mktemp("floors")
    for package in layers.PACKAGES:
        shutil.copytree(ROOT / package, copy / package,
                        ignore=shutil.ignore_patterns("__pycache__", "*.json"))
    (copy / "docs").mkdir()
    shutil.copy(ROOT / "docs" / "architecture.md", copy / "docs" / "architecture.md")
    return copy


@pytest.mark.parametrize("plant", sorted(PLANTS))
def test_a_planted_violation_fails_the_floor_test(real_copy: Path, tmp_path: Path,
                                                  plant: str) -> None:
    package, rel, text, expected = PLANTS[plant]
    project = tmp_path / "project"
    shutil.copytree(real_copy, project)
    assert layers.problems(project, (package,), verbose=False) == [], "the copy starts clean"
    target = project / rel
    if text is None:  # the docs table: move `runner` to another floor in its row's number
        page = target.read_text(encoding="utf-8")
        row = next(line for line in page.splitlines() if line.startswith("|") and "`runner`" in line)
        number = row.split("|")[1].strip()
        target.write_text(page.replace(row, row.replace(f"| {number} |", f"| {int(number) + 1} |", 1)),
                          encoding="utf-8")
    else:
        target.write_text(target.read_text(encoding="utf-8") + text, encoding="utf-8")
    found = layers.problems(project, (package,), verbose=False)
    assert any(expected in line for line in found), found
