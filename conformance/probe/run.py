"""A probe run: scenarios driven concurrently, each written to the output as it ends.

Output directory::

    probe.json                     the run: model, host, limits, totals, every scenario's status
    scenarios/<scenario id>.json   what each scenario did (:class:`~.driver.Outcome`)
    cassettes/<scenario id>.json   every exchange, redacted (a cassette: ``tooluse serve`` and
                                   ``tooluse diff`` read it)

A scenario file is written when its scenario ends; ``probe.json`` after every scenario. A run
with the same output directory (and model) skips the scenarios whose status is final
(:data:`~.driver.FINAL`): interrupted, budget-stopped and failed ones are driven again.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from conformance.errors import ToolUseError
from conformance.reports.results_file import write_atomic
from conformance.subjects.launch import Confinement
from simulator.record import SecretLeak
from simulator.secrets import SecretScanner

from .drift import judge_requests
from .driver import FINAL, Budget, Driver, Limits, Outcome
from .scenarios import ProbeScenario
from .tools import ToolDesk
from .transport import RecordingTransport, cassette_of, write_cassette

FORMAT = "tooluse-probe"
FORMAT_VERSION = 1
DEFAULT_BASE_URL = "https://api.anthropic.com"


class ProbeOutputError(ToolUseError, ValueError):
    """An output directory a probe cannot use (another model's run, a broken file)."""


@dataclass
class ProbeConfig:
    model: str
    out: Path
    base_url: str = DEFAULT_BASE_URL
    api_key: str | None = None
    limits: Limits = field(default_factory=Limits)
    #: Total tokens the run may spend (None: no budget).
    budget: int | None = None
    concurrency: int = 4
    #: USD per million input and output tokens, for the cost shown (None: tokens only).
    price: tuple[float, float] | None = None
    timeout: float = 600.0
    #: Send :data:`simulator.model_mode.SCENARIO_HEADER` (the scenario id): a model-mode
    #: ``tooluse serve`` then answers from that scenario's cassette.
    scenario_header: bool = False
    #: The sandbox mode and limits of the bash answering the scenarios (``--sandbox``, ...).
    confinement: Confinement = field(default_factory=Confinement)


def scenario_file(out: Path, scenario_id: str, kind: str = "scenarios") -> Path:
    """Where a scenario's file goes: its id as a relative path (never outside ``out``)."""
    parts = [p for p in scenario_id.replace("\\", "/").split("/") if p not in ("", ".", "..")]
    return out / kind / f"{'/'.join(parts) or '_'}.json"


def load_index(out: Path) -> dict[str, Any] | None:
    """The ``probe.json`` of ``out``, or None when there is none."""
    p = out / "probe.json"
    if not p.is_file():
        return None
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ProbeOutputError(f"{p}: not readable as JSON ({e}); remove it or use another --out") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ProbeOutputError(f"{p}: not a tooluse probe output; use another --out")
    return doc


def is_probe_output(path: Path) -> bool:
    try:
        return path.is_dir() and load_index(path) is not None
    except ProbeOutputError:
        return False


def completed(out: Path) -> dict[str, dict[str, Any]]:
    """Scenario id -> outcome, for the scenarios of ``out`` whose status is final."""
    index = load_index(out) or {}
    done = {}
    for sid in index.get("scenarios", {}):
        p = scenario_file(out, sid)
        if p.is_file():
            doc = json.loads(p.read_text(encoding="utf-8"))
            if doc.get("status") in FINAL:
                done[sid] = doc
    return done


def cost(usage: dict[str, int], price: tuple[float, float] | None) -> float | None:
    """USD for ``usage`` at ``price`` (cache writes and reads counted as input tokens)."""
    if price is None:
        return None
    tokens_in = usage.get("input_tokens", 0) + usage.get("cache_creation_input_tokens", 0) + \
        usage.get("cache_read_input_tokens", 0)
    return (tokens_in * price[0] + usage.get("output_tokens", 0) * price[1]) / 1_000_000


Progress = Callable[[int, int, Outcome, Budget], None]


class ProbeRun:
    """Drive ``scenarios`` with ``config``; :meth:`run` returns the outcomes of this run."""

    def __init__(self, scenarios: Sequence[ProbeScenario], config: ProbeConfig,
                 progress: Progress | None = None, stop: threading.Event | None = None) -> None:
        self.config = config
        self.scenarios = list(scenarios)
        self.progress = progress
        self.stop = stop or threading.Event()
        self.scanner = SecretScanner(literals={config.api_key: "api key"} if config.api_key
                                     and len(config.api_key) >= 8 else {})
        self.budget = Budget(config.budget)
        index = load_index(config.out)
        if index is not None and index.get("model") != config.model:
            raise ProbeOutputError(f"{config.out} holds a probe of model {index.get('model')!r}, "
                                   f"not {config.model!r}; use another --out")
        self.done = completed(config.out)
        self.index: dict[str, Any] = index or {
            "format": FORMAT, "version": FORMAT_VERSION, "model": config.model, "runs": [],
            "scenarios": {}}
        self._lock = threading.Lock()
        self._finished = 0
        self._inner: Any = None
        self.outcomes: list[Outcome] = []

    @property
    def todo(self) -> list[ProbeScenario]:
        return [s for s in self.scenarios if s.id not in self.done]

    def run(self) -> list[Outcome]:
        todo = self.todo
        started = datetime.now(UTC).isoformat(timespec="seconds")
        t0 = time.monotonic()
        for s in self.scenarios:
            self.index["scenarios"].setdefault(s.id, {"status": "pending"})
        self._write_index()
        workers = max(1, self.config.concurrency)
        self._inner = _inner_transport(workers)
        try:
            with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="tooluse-probe") as pool:
                futures = [pool.submit(self._one, s) for s in todo]
                try:
                    for f in futures:
                        f.result()
                except KeyboardInterrupt:  # the scenarios running stop before their next request
                    self.stop.set()
                    raise
        finally:
            self._inner.close()
            self.index["runs"].append({
                "started": started, "wall_seconds": round(time.monotonic() - t0, 3),
                "host": urlsplit(self.config.base_url).netloc, "scenarios": len(todo),
                "skipped_completed": len(self.scenarios) - len(todo),
                "budget": self.config.budget, "concurrency": workers,
                "max_turns": self.config.limits.max_turns,
                "max_output_tokens": self.config.limits.max_output_tokens})
            self._write_index()
        return self.outcomes

    def _one(self, scenario: ProbeScenario) -> None:
        if self.stop.is_set() or self.budget.exhausted:
            return  # not started: stays pending, a resumed run drives it
        transport = RecordingTransport(self._inner, self.scanner)
        client = _client(self.config, transport, scenario.id)
        desk = ToolDesk(scenario, confinement=self.config.confinement)
        driver = Driver(scenario, client, self.config.model, self.config.limits, self.budget,
                        transport.exchanges, stop=self.stop)
        try:
            outcome = driver.run(desk)
        except Exception as e:  # a bug or an SDK surprise: kept, the run goes on
            outcome = driver.outcome
            outcome.status, outcome.error = "failed", {"status": None, "type": type(e).__name__,
                                                        "message": str(e)[:500]}
        finally:
            desk.close()
            client.close()
        self._save(scenario, outcome, transport.exchanges)

    def _save(self, scenario: ProbeScenario, outcome: Outcome,
              exchanges: list[dict[str, Any]]) -> None:
        out = self.config.out
        doc = self.scanner.redact(outcome.to_json())
        cassette_path: str | None = None
        if exchanges:
            target = scenario_file(out, scenario.id, "cassettes")
            cassette = cassette_of(scenario.id, self.config.model, exchanges,
                                   scenario.params.get("tools") or [])
            outcome.drift += judge_requests(scenario.id, cassette)
            doc["drift"] = self.scanner.redact([f.to_json() for f in outcome.drift])
            try:
                write_cassette(target, cassette, self.scanner)
                cassette_path = str(target.relative_to(out))
            except SecretLeak as e:
                doc["cassette_refused"] = str(e)
        doc["cassette"] = cassette_path
        path = scenario_file(out, scenario.id)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
        with self._lock:
            self.outcomes.append(outcome)
            self._finished += 1
            self.index["scenarios"][scenario.id] = {"status": outcome.status,
                                                    "turns": outcome.turns,
                                                    "requests": outcome.requests}
            self._write_index()
            if self.progress is not None:
                self.progress(self._finished, len(self.todo), outcome, self.budget)

    def _write_index(self) -> None:
        statuses = [v.get("status") for v in self.index["scenarios"].values()]
        self.index["complete"] = all(s in FINAL for s in statuses)
        self.index["counts"] = {s: statuses.count(s) for s in sorted(set(map(str, statuses)))}
        self.config.out.mkdir(parents=True, exist_ok=True)
        write_atomic(self.config.out / "probe.json",
                     json.dumps(self.index, indent=2, ensure_ascii=False) + "\n")


def _inner_transport(workers: int) -> Any:
    """One connection pool for the run (building a TLS context costs ~0.15 s)."""
    import httpx2

    return httpx2.HTTPTransport(limits=httpx2.Limits(max_connections=max(10, 2 * workers)))


def _client(config: ProbeConfig, transport: RecordingTransport, scenario_id: str) -> Any:
    import anthropic
    import httpx2

    from simulator.model_mode import SCENARIO_HEADER

    http = httpx2.Client(transport=transport, timeout=config.timeout)
    headers = {SCENARIO_HEADER: scenario_id} if config.scenario_header else None
    return anthropic.Anthropic(api_key=config.api_key or "tooluse-probe-no-key",
                               base_url=config.base_url, max_retries=0, http_client=http,
                               default_headers=headers)
