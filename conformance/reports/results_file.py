"""``results.json``: build it, write it incrementally, load and validate it.

The document follows ``results.schema.json`` (``format_version`` 1). :class:`ResultsWriter` is a
:class:`~conformance.results.RunListener`: it rewrites the whole file atomically (temp file +
``os.replace``) after every result, so a run killed at any moment leaves a valid file with
``"complete": false``.
"""

from __future__ import annotations

import json
import os
import platform
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

from conformance.catalog import CATALOG
from conformance.errors import ToolUseError
from conformance.results import (
    CheckResult,
    Outcome,
    RunInfo,
    SubjectInfo,
    _now,
    blocks,
    run_verdict,
)
from simulator.secrets import SecretScanner

from .coverage import coverage_for

FORMAT_VERSION = 1
SCHEMA_PATH = Path(__file__).with_name("results.schema.json")
SUITE_NAME = "tooluse-conformance"


class ResultsFileError(ToolUseError, ValueError):
    """A results file that cannot be used: which file, where in it, what is wrong, the fix."""

    def __init__(self, path: str | Path, pointer: str, message: str) -> None:
        self.path = str(path)
        self.pointer = pointer or "/"
        self.message = message
        super().__init__(f"{self.path}:{self.pointer}: {message}")


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def suite_metadata() -> dict[str, Any]:
    return {
        "name": SUITE_NAME,
        "version": _version(SUITE_NAME) or "0+unknown",
        "anthropic_sdk_version": _version("anthropic"),
        "python_version": platform.python_version(),
    }


def gating(severity: str, *, strict: bool = False) -> bool:
    """Does a check of this severity decide the run? MUST always, SHOULD under ``--strict``."""
    return severity == "MUST" or (strict and severity == "SHOULD")


def is_blocking(result: dict[str, Any], *, strict: bool = False,
                fail_on_flaky: bool = False) -> bool:
    """Does this result fail the run? A gating check that failed or hit a harness error (or,
    with ``fail_on_flaky``, came out flaky).

    The same rule as the runner's ``RunSummary.blocking()``, so exit code and report agree.
    """
    return blocks(result["outcome"], result["severity"], strict=strict,
                  fail_on_flaky=fail_on_flaky)


def summarise(results: Iterable[dict[str, Any]], *, strict: bool, complete: bool,
              fail_on_flaky: bool = False) -> dict[str, Any]:
    counts = {o.value: 0 for o in Outcome}
    blocking = 0
    total = 0
    outcomes: list[str] = []
    for r in results:
        total += 1
        counts[r["outcome"]] += 1
        outcomes.append(r["outcome"])
        blocking += is_blocking(r, strict=strict, fail_on_flaky=fail_on_flaky)
    verdict = run_verdict(outcomes, blocking, complete=complete)
    return {"total": total, **counts, "blocking": blocking, "verdict": verdict}


def result_record(result: CheckResult) -> dict[str, Any]:
    """A result as stored: the record plus the check's statement, source and basis from the
    catalog."""
    d = result.to_json()
    d["received"] = _jsonable(d.get("received"))
    d["documented"] = _jsonable(d.get("documented"))
    d["reproducer"] = _jsonable(d.get("reproducer") or [])
    check = CATALOG.get(result.check_id)
    if check is not None:
        d["statement"] = check.statement
        d["source"] = check.source.cite_json()
        if check.basis:
            d["basis"] = check.basis_json()
    return d


def _jsonable(value: Any) -> Any:
    """Received/documented values may be bytes or other objects: keep them readable in JSON."""
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        pass
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            return {"bytes_hex": value.hex()}
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_jsonable(v) for v in value]
    return repr(value)


def new_document(run: RunInfo) -> dict[str, Any]:
    return {
        "format_version": FORMAT_VERSION,
        "suite": suite_metadata(),
        "run": {
            "started_at": run.started_at, "finished_at": None, "complete": False,
            "interrupted": False, "seed": run.seed, "strict": run.strict,
            "fixtures": run.fixtures, "argv": list(run.argv), "planned": run.planned,
            "fail_on_flaky": run.fail_on_flaky,
            **({"shard": run.shard} if run.shard is not None else {}),
        },
        "subjects": [s.to_json() for s in run.subjects],
        "results": [],
        "summary": summarise([], strict=run.strict, complete=False,
                             fail_on_flaky=run.fail_on_flaky),
    }


def _umask() -> int:
    """The process umask: from ``/proc`` where it can be read (no window in which another
    thread creates files under a different mask), else by setting it and putting it back."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o077)
    os.umask(mask)
    return mask


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so readers only ever see the old or the new whole file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        # mkstemp makes the file 0600; a report is an ordinary file: 0666 less the umask.
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def dumps(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


@dataclass
class ResultsWriter:
    """Listener that keeps ``path`` a valid ``results.json`` at every moment of the run.

    ``coverage_corpus``: when set (or when the run names its ``fixtures``), the finished file
    carries protocol coverage computed from that corpus.
    """

    path: Path
    coverage_corpus: Path | None = None
    doc: dict[str, Any] | None = None
    _fragments: list[str] = field(default_factory=list, repr=False)
    _scanner: SecretScanner = field(default_factory=SecretScanner, repr=False)

    def __post_init__(self) -> None:
        self.path = Path(self.path)

    def on_run_started(self, run: RunInfo) -> None:
        # Credentials (API keys, tokens, the environment's secrets) that a subject printed or a
        # command line held never reach results.json, nor the reports rendered from it.
        self._scanner = SecretScanner()
        self.doc = self._scanner.redact(new_document(run))
        self._fragments = []
        self._flush()

    def on_check_started(self, check_id: str, subject: str) -> None:
        pass

    def on_check_finished(self, result: CheckResult) -> None:
        if self.doc is None:  # the runner skipped on_run_started: still write something valid
            self.on_run_started(RunInfo())
        assert self.doc is not None
        self.doc["results"].append(self._scanner.redact(result_record(result)))
        self._flush()

    def on_run_startup(self, stats: Any) -> None:
        """What starting the subjects cost the run (``run.startup``)."""
        if self.doc is not None and stats.started:
            self.doc["run"]["startup"] = stats.to_json()

    def on_run_finished(self, *, complete: bool) -> None:
        if self.doc is None:
            self.on_run_started(RunInfo())
        assert self.doc is not None
        run = self.doc["run"]
        run["finished_at"] = now_iso()
        run["complete"] = bool(complete)
        run["interrupted"] = not complete
        corpus = self.coverage_corpus or (Path(run["fixtures"]) if run.get("fixtures") else None)
        self.doc["coverage"] = coverage_for(self.doc, corpus=corpus)
        self._flush(final=True)

    def _flush(self, *, final: bool = False) -> None:
        """Rewrite the file. While the run goes, each result is serialised once and the file is
        spliced from those fragments (linear, not quadratic, in the number of results); the
        final write is the whole document, indented."""
        assert self.doc is not None
        run = self.doc["run"]
        results = self.doc["results"]
        self.doc["summary"] = summarise(results, strict=run["strict"], complete=run["complete"],
                                        fail_on_flaky=bool(run.get("fail_on_flaky")))
        if final:
            write_atomic(self.path, dumps(self.doc))
            return
        while len(self._fragments) < len(results):
            self._fragments.append(json.dumps(results[len(self._fragments)], ensure_ascii=False))
        head = {k: v for k, v in self.doc.items() if k != "results"}
        text = json.dumps(head, ensure_ascii=False)
        spliced = '{"results": [\n' + ",\n".join(self._fragments) + "\n], " + text[1:]
        write_atomic(self.path, spliced + "\n")


def now_iso() -> str:
    return _now()


# --- loading -----------------------------------------------------------------------------------


@cache
def _validator() -> Any:
    from jsonschema import Draft202012Validator

    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def _pointer(parts: Iterable[Any]) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def validate_document(doc: Any, path: str | Path = "<memory>") -> None:
    """Raise :class:`ResultsFileError` for the first schema error (with its JSON pointer)."""
    if not isinstance(doc, dict):
        raise ResultsFileError(path, "", "a results file must be a JSON object")
    version = doc.get("format_version")
    if isinstance(version, int) and version > FORMAT_VERSION:
        raise ResultsFileError(path, "/format_version",
                               f"format_version {version} was written by a newer tooluse; this one "
                               f"reads version {FORMAT_VERSION}: upgrade tooluse-conformance")
    errors = sorted(_validator().iter_errors(doc), key=lambda e: (len(e.absolute_path), e.path))
    if errors:
        e = errors[0]
        more = f" (and {len(errors) - 1} more problems)" if len(errors) > 1 else ""
        raise ResultsFileError(path, _pointer(e.absolute_path),
                               f"{e.message}{more}; is this a tooluse results.json "
                               f"(format_version {FORMAT_VERSION})?")


@dataclass
class RunResults:
    """A validated results document, with typed views of its records."""

    doc: dict[str, Any]
    path: Path | None = None

    @property
    def results(self) -> list[CheckResult]:
        return [CheckResult.from_json(r) for r in self.doc["results"]]

    @property
    def subjects(self) -> list[SubjectInfo]:
        return [SubjectInfo.from_json(s) for s in self.doc["subjects"]]

    @property
    def complete(self) -> bool:
        return bool(self.doc["run"]["complete"])


def load_results(path: str | Path) -> RunResults:
    """Read and validate a ``results.json``; errors name the file, the JSON pointer and the fix."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ResultsFileError(p, "", "file not found") from None
    except IsADirectoryError:
        raise ResultsFileError(p, "", "is a directory; give the results.json inside it") from None
    except UnicodeDecodeError as e:
        raise ResultsFileError(p, "", f"not UTF-8 text ({e.reason} at byte {e.start})") from None
    except OSError as e:  # permission denied, an I/O error
        raise ResultsFileError(p, "", f"cannot read the file: {e.strerror or e}") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise ResultsFileError(p, "", f"broken JSON at line {e.lineno} column {e.colno}: {e.msg}"
                               ) from None
    validate_document(doc, p)
    return RunResults(doc, p)


# --- normalisation (snapshots, the committed baseline) ------------------------------------------

VOLATILE = "<volatile>"


def normalise(doc: dict[str, Any]) -> dict[str, Any]:
    """A copy with volatile fields (times, durations, versions, argv, seed, paths, start-up)
    replaced or dropped.

    The copy still validates against the schema.
    Results are sorted by (subject, check id) so a parallel run compares equal to a serial one.
    """
    d = json.loads(json.dumps(doc))
    d["suite"] = {k: VOLATILE for k in d["suite"]} | {"name": d["suite"]["name"]}
    run = d["run"]
    for k in ("started_at", "finished_at"):
        if run.get(k) is not None:
            run[k] = VOLATILE
    run["argv"] = []
    run["seed"] = None  # stays valid against the schema (integer or null)
    run.pop("startup", None)  # seconds, and counts that depend on them (spares, re-runs)
    if run.get("fixtures"):
        run["fixtures"] = Path(run["fixtures"]).name
    for r in d["results"]:
        r["duration"] = 0.0
    d["results"].sort(key=lambda r: (r["subject"], r["check_id"]))
    return d
