"""The findings of a matrix: one per failing cell (column x check, FAIL at MUST or SHOULD).

A finding's values come from the column's ``runs/<column>/results.json`` (the cell in
``matrix.json`` keeps only the first characters of a reproducer); what the public docs say from
the check's citation (:class:`simulator.sources.Source`) and its ``basis`` (the English sentence).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["LEVELS", "Finding", "collect"]

LEVELS = ("MUST", "SHOULD")


@dataclass
class Finding:
    check_id: str
    column: str
    level: str
    package: str | None
    version: str | None
    check_fingerprint: str
    statement: str
    #: the English sentence of the docs the check stands on, and the public page
    sentence: str
    url: str
    section: str
    cite: str
    why_level: str
    message: str
    received: str
    documented: str
    reproducer: list[dict[str, Any]]
    setup: list[dict[str, Any]]
    rerun: str
    implementation: dict[str, Any]
    timeout: float
    #: filled in while writing: the docs' source lines, the reproducer or why there is none
    source_lines: str | None = None
    repro: str | None = None
    repro_reason: str = ""
    exit_codes: list[dict[str, Any]] = field(default_factory=list)

    @property
    def folder(self) -> str:
        return f"{self.column}/{self.check_id}"

    @property
    def family(self) -> str:
        return self.check_id.split(".", 1)[0]

    @property
    def fingerprint(self) -> str:
        """This finding: the column, its version, the check (as it asserts) and the counterexample."""
        doc = [self.column, self.version, self.check_id, self.check_fingerprint, self.reproducer,
               self.setup]
        return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:16]


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False)


def _why(level: str, basis: dict[str, Any]) -> str:
    rule = str(basis.get("rule") or "").strip()
    for prefix in (f"{level}: ", f"{level} ", f"{level.lower()} "):
        rule = rule.removeprefix(prefix)
    if rule:
        return rule
    if level == "MUST":
        return "the docs state it (the sentence above): a MUST of the suite, blocking"
    return "a recommendation of the docs, or a convention they leave open: a SHOULD, not blocking"


def _npm_of(config: Path) -> dict[str, list[str]]:
    """The config's npm columns (``npm = [...]``), when the config is where it says."""
    import tomllib

    try:
        raw = tomllib.loads(config.read_text())
    except (OSError, tomllib.TOMLDecodeError):
        return {}
    return {str(s.get("name")): [str(x) for x in s.get("npm") or []]
            for s in raw.get("subject", []) if s.get("npm")}


def _timeout(run: dict[str, Any]) -> float:
    """The command timeout the column ran with (its ``tooluse run --timeout``)."""
    argv = [str(a) for a in run.get("argv") or []]
    if "--timeout" in argv[:-1]:
        return float(argv[argv.index("--timeout") + 1])
    return 30.0  # tooluse run's default


def collect(matrix_dir: Path) -> list[Finding]:
    """Every failing MUST / SHOULD cell of ``matrix_dir/matrix.json``, in the matrix's order."""
    from conformance.matrix.model import catalog
    from simulator.sources import cite_json_text

    doc = json.loads((matrix_dir / "matrix.json").read_text())
    impls = {i["name"]: dict(i) for i in doc["implementations"]}
    for name, npm in _npm_of(Path(str(doc.get("config") or ""))).items():
        impl = impls.get(name)
        if impl is not None and not impl.get("version") and npm:
            # an npm column: its package is the last one named (the provider), pinned there
            impl["npm"] = npm
            package, _, version = npm[-1].rpartition("@")
            impl["version_of"], impl["version"] = package, version
    results: dict[str, dict[str, dict[str, Any]]] = {}
    out: list[Finding] = []
    for row in doc["checks"]:
        if row["severity"] not in LEVELS:
            continue
        for column, cell in row["cells"].items():
            if cell["outcome"] != "fail" or cell.get("start_failure"):
                continue
            impl = impls[column]
            if column not in results:
                path = matrix_dir / str(impl.get("runs_dir") or f"runs/{column}") / "results.json"
                data = json.loads(path.read_text()) if path.exists() else {"results": []}
                results[column] = {r["check_id"]: r for r in data.get("results", [])}
                results[column]["__run__"] = data.get("run") or {}
            r = results[column].get(row["id"]) or {}
            # today's wording of the check (its citation and basis), else the run's
            chk = catalog().get(row["id"])
            basis = (chk.basis_json() if chk is not None else {}) or r.get("basis") or {}
            src = chk.source.cite_json() if chk is not None else (r.get("source")
                                                                 or row["source"])
            statement = chk.statement if chk is not None else row["statement"]
            timeout = _timeout(results[column]["__run__"])
            out.append(Finding(
                check_id=row["id"], column=column, level=row["severity"],
                package=impl.get("version_of"), version=impl.get("version"),
                check_fingerprint=row["fingerprint"], statement=statement,
                sentence=str(basis.get("english") or basis.get("original") or statement),
                url=str(src.get("url") or ""), section=str(src.get("section_en")
                                                           or src.get("title") or ""),
                cite=cite_json_text(src), why_level=_why(row["severity"], basis),
                message=str(r.get("message") or cell.get("message") or ""),
                received=_text(r.get("received", cell.get("received"))),
                documented=_text(r.get("documented", cell.get("documented"))),
                reproducer=list(r.get("reproducer") or []), setup=list(r.get("setup") or []),
                rerun=str(cell.get("rerun") or ""), implementation=impl, timeout=timeout))
    return out
