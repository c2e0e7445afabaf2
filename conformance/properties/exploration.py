"""The bounded, quiet, failure-recording hypothesis runs of the property and model checks.

Shared by :func:`conformance.checks.properties.run_property` and
:func:`conformance.properties.editor.explore_editor_model`; what they guarantee is described in
:mod:`conformance.checks.properties`. The pieces:

- :class:`Budget`: wall time and calls for one run, derived from the subject's timeout; its
  :meth:`~Budget.charge` raises :class:`StopExploring` when they run out;
- :class:`StopExploring`: a ``BaseException`` that ends a hypothesis run at once (hypothesis
  treats ``Exception`` s as failures to shrink, and lets the others through);
- :class:`Findings`: failures recorded as they happen, the smallest example per distinct failure;
- :func:`quiet_settings`, :func:`hypothesis_turn`: deterministic and silent settings (every
  setting pinned, none taken from the loaded profile), the turn (:data:`HYPOTHESIS_TURNS`), a
  reporter that keeps hypothesis' text off the terminal, and generation that does not depend on
  the modules the process has imported (:func:`no_local_constants`);
- :func:`explore`: runs the test and says how it ended (hypothesis' ``ExceptionGroup`` and
  ``Flaky*`` errors are endings, not harness errors: the findings hold the failures);
- :func:`shrink` with :func:`deletions`, :func:`simpler_texts`, :func:`simpler_bytes`: a
  deterministic, count-bounded shrinker for a failing sequence of steps (the model checks use it
  instead of hypothesis' shrinking, whose result depends on how much time it had), and
  :func:`shrink_finding`, the same for a finding replayed on fresh subjects (editor and bash).

The model checks' recipe (editor: :mod:`conformance.properties.editor`, bash:
:mod:`conformance.properties.bash_machine`; reusable for any tool): generate a fixed number of
examples (a count, never a clock), record each distinct failure without stopping, shrink each
with :func:`shrink_finding`, verify the shrunk reproducer as printed on a fresh subject
(:func:`conformance.reproducers.replay_fresh_subject`), and treat the :class:`Budget`'s time cap as an *incomplete*
run (:class:`conformance.catalog.CheckIncomplete`), never as a verdict.
"""

from __future__ import annotations

import atexit
import os
import random
import shutil
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from hypothesis import (
    HealthCheck,
    Phase,
    Verbosity,
    configuration,
    register_random,
    seed,
    settings,
)
from hypothesis.errors import Flaky, Unsatisfiable
from hypothesis.reporting import with_reporter
from hypothesis.stateful import RuleBasedStateMachine, run_state_machine_as_test

from conformance.cache import user_cache_dir
from conformance.session import ToolSession
from conformance.subjects.timing import MAX_ALLOWANCE, harness_lag

E = TypeVar("E", bound=BaseException)

#: Hypothesis runs take turns, whatever its version: hypothesis builds source-level descriptions
#: of strategies with ``ast``, and CPython 3.11 is not safe compiling ASTs from several threads at
#: once (seen in a run: ``SystemError: AST constructor recursion depth mismatch``). The other
#: cases still run concurrently with the one property in progress.
HYPOTHESIS_TURNS = threading.Lock()

#: Examples per property (``TOOLUSE_MAX_EXAMPLES`` overrides).
DEFAULT_MAX_EXAMPLES = 25
#: A property's wall-time budget in command timeouts: 60 s at the default 3 s. Half the runner's
#: case budget (40 timeouts), so a property ends on its own well before its session's deadline.
BUDGET_TIMEOUTS = 20
#: The least wall time a property gets (a subject run with a very short timeout).
MIN_BUDGET_SECONDS = 10.0
#: Calls a property may make (a fast subject is bounded by its examples long before this).
MAX_CALLS = 5000
#: Share of the budget for generating and shrinking; the rest is kept for the final replays.
EXPLORE_SHARE = 0.85


def max_examples() -> int:
    try:
        return max(1, int(os.environ.get("TOOLUSE_MAX_EXAMPLES", DEFAULT_MAX_EXAMPLES)))
    except ValueError:
        return DEFAULT_MAX_EXAMPLES


class StopExploring(BaseException):
    """Ends a hypothesis run at once: the budget is spent, or the subject cannot go on.

    Not an ``Exception``: hypothesis treats ``Exception`` s as test failures (and shrinks them);
    other ``BaseException`` s pass straight through it."""


@dataclass
class Budget:
    """What a run may use: ``calls`` (deterministic: the same subject always stops at the same
    call) and a hard time cap of ``seconds`` (only for a subject or machine far slower than
    expected: a run that hits it is *incomplete*, never a pass or a failure; see
    :attr:`timed_out`). Time is judged fairly (:mod:`conformance.subjects.timing`): the
    harness's own scheduling lag since the clock started is not counted (up to
    :data:`~conformance.subjects.timing.MAX_ALLOWANCE` times ``seconds``), so a machine busy
    with other work stretches the cap instead of ending the run."""

    seconds: float
    calls: int = MAX_CALLS
    started: float = field(default_factory=time.monotonic)
    used: int = 0
    examples: int = 0
    #: Set when the budget ended the run (generation stopped early).
    ran_out: bool = False
    #: Set when it was the time cap that ended it: the run is incomplete.
    timed_out: bool = False
    #: :func:`~conformance.subjects.timing.harness_lag` when the clock started.
    lag_start: float = field(default_factory=harness_lag)

    @classmethod
    def for_session(cls, s: ToolSession, seconds: float | None = None,
                    calls: int | None = None) -> Budget:
        """:data:`BUDGET_TIMEOUTS` of the subject's command timeout (``seconds`` overrides)."""
        if seconds is None:
            timeout = getattr(s, "timeout", None)
            base = float(timeout) if isinstance(timeout, int | float) and timeout > 0 else 3.0
            seconds = max(MIN_BUDGET_SECONDS, base * BUDGET_TIMEOUTS)
        return cls(seconds, calls if calls is not None else MAX_CALLS)

    def restart(self) -> None:
        """Start the clock now (when the run gets its turn)."""
        self.started = time.monotonic()
        self.lag_start = harness_lag()

    @property
    def elapsed(self) -> float:
        """Seconds used: wall time since the clock started, less the harness's scheduling lag
        meanwhile (the time it waited for a CPU; at most ``MAX_ALLOWANCE`` times the cap)."""
        lag = max(0.0, harness_lag() - self.lag_start)
        return time.monotonic() - self.started - min(lag, MAX_ALLOWANCE * self.seconds)

    def left(self, share: float = 1.0) -> float:
        return self.seconds * share - self.elapsed

    def spent(self, share: float = 1.0) -> bool:
        return self.left(share) <= 0 or self.used >= self.calls * share

    def charge(self, calls: int = 1, share: float = EXPLORE_SHARE) -> None:
        """Account for ``calls`` about to be made; :class:`StopExploring` when none are left."""
        if self.spent(share):
            self.ran_out = True
            self.timed_out = self.timed_out or self.left(share) <= 0
            raise StopExploring("budget")
        self.used += calls

    def note(self) -> str:
        """What the run covered (the observed note of a run that found nothing)."""
        text = f"{self.used} calls in {self.examples} examples"
        if self.timed_out:
            text += (f" before the hard time cap ({self.seconds:g} s; {self.elapsed:.1f} s "
                     "used)")
        elif self.ran_out:
            text += (f" before the budget ran out ({self.seconds:g} s or {self.calls} calls; "
                     f"{self.elapsed:.1f} s used)")
        return text


# --- deterministic shrinking ---------------------------------------------------------------------

T = TypeVar("T")


def shrink(items: list[T], fails: Callable[[list[T]], bool],
           variants: Callable[[list[T]], Iterator[list[T]]], *, tries: int) -> tuple[list[T], int]:
    """The smallest variant of ``items`` that still ``fails``, searched greedily and
    deterministically: the first candidate :func:`variants` offers that still fails replaces
    the current one, and the search starts over from it; it ends when no candidate fails or after
    ``tries`` calls of ``fails`` (a count, never a clock: the same subject always gets the same
    reproducer). Returns the result and the tries used. ``fails`` may raise
    :class:`StopExploring` (a hard time cap); the best so far is then lost to the caller, who
    reports the run incomplete."""
    used = 0
    best = list(items)
    improved = True
    while improved and used < tries:
        improved = False
        for candidate in variants(best):
            if used >= tries:
                break
            used += 1
            if fails(candidate):
                best, improved = candidate, True
                break
    return best, used


class Keyed(Protocol):
    """A finding with a :attr:`key`: what kind of failure it is (shrinking keeps it)."""

    @property
    def key(self) -> str: ...


K = TypeVar("K", bound=Keyed)


def shrink_finding(found: K, items: list[T], replay: Callable[[list[T]], K | None],
                   variants: Callable[[list[T]], Iterator[list[T]]], *, tries: int) -> K:
    """The smallest finding of ``found``'s kind (its :attr:`~Keyed.key`) that :func:`shrink`
    reaches from ``items`` (the steps that showed it): each candidate is replayed with
    ``replay`` (a fresh subject or directory; the finding it shows, or None) and kept when it
    shows a finding with the same key. A :class:`StopExploring` from ``replay`` (the hard time
    cap) ends the search with the smallest so far. The model checks' one shrinker (editor and
    bash)."""
    best = [found]

    def fails(candidate: list[T]) -> bool:
        again = replay(candidate)
        if again is not None and again.key == found.key:
            best[0] = again
            return True
        return False

    try:
        shrink(items, fails, variants, tries=tries)
    except StopExploring:
        pass  # the time cap: the smallest so far
    return best[0]


def deletions(items: list[T]) -> Iterator[list[T]]:
    """``items`` with a chunk removed: halves first, then smaller chunks, then single items
    (last first: a failure is usually at the end)."""
    n = len(items)
    size = n // 2
    while size >= 1:
        for start in range(n - size, -1, -size):
            yield items[:start] + items[start + size:]
        size //= 2


def simpler_texts(text: str) -> Iterator[str]:
    """Simpler forms of a generated text, shortest first: empty, each half, without each
    line, without each character (short texts), then with each unusual character (not ASCII
    letters, digits, spaces or newlines) replaced by ``a``."""
    if not text:
        return
    yield ""
    half = len(text) // 2
    if half:
        yield text[:half]
        yield text[half:]
    lines = text.splitlines(keepends=True)
    if len(lines) > 1:
        for i in range(len(lines)):
            yield "".join(lines[:i] + lines[i + 1:])
    if len(text) <= 64:
        for i in range(len(text)):
            yield text[:i] + text[i + 1:]
    for i, c in enumerate(text):
        if not (c.isascii() and (c.isalnum() or c in " \n")):
            yield text[:i] + "a" + text[i + 1:]


def simpler_bytes(data: bytes) -> Iterator[bytes]:
    """:func:`simpler_texts` for bytes (each byte a character)."""
    for text in simpler_texts(data.decode("latin-1")):
        yield text.encode("latin-1")


@dataclass
class Finding(Generic[E]):
    """One distinct failure: the smallest example seen for it."""

    key: str
    error: E
    size: int
    order: int
    #: Times it was seen (hypothesis replays and shrinks a failure many times).
    seen: int = 1
    extra: Any = None


class Findings(Generic[E]):
    """The failures seen during a run, the smallest example kept per distinct failure ``key``."""

    def __init__(self) -> None:
        self.by_key: dict[str, Finding[E]] = {}

    def add(self, key: str, error: E, size: int, extra: Any = None) -> None:
        old = self.by_key.get(key)
        if old is None:
            self.by_key[key] = Finding(key, error, size, len(self.by_key), extra=extra)
        else:
            old.seen += 1
            if size <= old.size:  # ties: the later one (hypothesis shrinks as it goes)
                old.error, old.size, old.extra = error, size, extra

    def ordered(self) -> list[Finding[E]]:
        """Smallest first (then in the order found)."""
        return sorted(self.by_key.values(), key=lambda f: (f.size, f.order))

    def __len__(self) -> int:
        return len(self.by_key)

    def __bool__(self) -> bool:
        return bool(self.by_key)


_STORAGE_LOCK = threading.Lock()
#: The temporary directory hypothesis keeps its files in for this process (None: not ours).
_storage: Path | None = None


def private_storage() -> Path | None:
    """Keep hypothesis' files out of the user's working directory.

    With no example database (``database=None``) hypothesis still writes caches (the Unicode
    table, the constants it collects from the code) into ``.hypothesis/`` of the current
    directory. A check's run sends them to the suite's cache, ``~/.cache/tooluse/hypothesis``
    (:func:`conformance.cache.user_cache_dir`), where the next run finds them: hypothesis built
    its Unicode table again in every process (a quarter of a CPU-second per ``tooluse run``;
    issue 21). Where that cannot be written, a temporary directory of this process, removed when
    it exits. Neither when ``HYPOTHESIS_STORAGE_DIRECTORY`` says where they go or hypothesis'
    storage is already in use in this process (a pytest run of the user's own hypothesis tests:
    their ``.hypothesis/`` is theirs). Returns the directory when it is this module's."""
    global _storage
    with _STORAGE_LOCK:
        if _storage is not None:
            return _storage
        if os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
            return None
        # hypothesis' own record of its home directory (None until something used or set it).
        if getattr(configuration, "__hypothesis_home_directory", None) is not None:
            return None
        _storage = _writable(user_cache_dir("hypothesis"))
        if _storage is None:
            _storage = Path(tempfile.mkdtemp(prefix="tooluse-hypothesis-"))
            atexit.register(shutil.rmtree, _storage, True)
        configuration.set_hypothesis_home_dir(_storage)
        return _storage


def _writable(directory: Path) -> Path | None:
    """``directory``, made if need be, when this process can write into it; else None."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return directory if os.access(directory, os.W_OK | os.X_OK) else None


def quiet_settings(**overrides: Any) -> settings:
    """The settings every run inside a check uses: bounded, deterministic, silent, with no
    example database and hypothesis' caches kept out of the working directory
    (:func:`private_storage`).

    Every setting hypothesis has is pinned here (the callers set their own ``max_examples`` and
    ``stateful_step_count``), none is left to the loaded profile: a test suite's
    ``settings.load_profile(...)`` or hypothesis' own "ci" profile (loaded when ``CI`` is set)
    must not change what a check runs."""
    private_storage()
    base: dict[str, Any] = dict(
        max_examples=DEFAULT_MAX_EXAMPLES, stateful_step_count=50,
        deadline=None, database=None, derandomize=True, print_blob=False,
        verbosity=Verbosity.quiet, suppress_health_check=list(HealthCheck),
        report_multiple_bugs=True, phases=(Phase.explicit, Phase.generate, Phase.shrink))
    if hasattr(settings.default, "backend"):  # hypothesis >= 6.103
        base["backend"] = "hypothesis"
    base.update(overrides)
    return settings(**base)


@contextmanager
def no_local_constants() -> Iterator[None]:
    """Generation that does not depend on which modules this process has imported.

    Hypothesis (6.131 and later) mixes literal constants into what it draws (1 draw in 20): a
    fixed global set, and the constants of every *local* module in ``sys.modules`` (any module
    outside site-packages and the standard library that is not a test file: an editable install
    of this package, the user's own subject modules). Which of those are imported differs from
    process to process (a CLI run, a pytest worker that ran other tests first) and can change
    while a run goes on (another case importing a module), so the same derandomized run drew
    other examples: the editor model check on the reference editor gave 357 calls in 41
    examples inside a full-suite worker and 521 calls in 40 alone. During a check's run the
    local pool is empty (the global constants stay); the constants cache is cleared on the way
    in and out so neither side sees the other's pool. A no-op where hypothesis has no local
    constants."""
    try:
        from hypothesis.internal.conjecture import providers
        from hypothesis.internal.constants_ast import Constants
    except ImportError:  # hypothesis before local constants
        yield
        return
    harvest = getattr(providers, "_get_local_constants", None)
    cache = getattr(getattr(providers, "CONSTANTS_CACHE", None), "cache", None)
    if harvest is None or cache is None:
        yield
        return
    empty = Constants()
    providers._get_local_constants = lambda: empty
    cache.clear()
    try:
        yield
    finally:
        providers._get_local_constants = harvest
        cache.clear()


#: The one ``random.Random`` hypothesis keeps per thread for its runs, shared by every thread
#: that runs a check (:func:`one_thread_random`); registered once, here.
_RUNS_RANDOM = random.Random()
register_random(_RUNS_RANDOM)


def one_thread_random() -> None:
    """Give this thread hypothesis's per-thread ``Random`` if it has none yet: the shared one.

    Hypothesis makes one per thread, on the thread's first run, and registers it; registering
    runs a full ``gc.collect()`` (a tenth of a second and more in a big process), and a run's
    checks run in fresh pool threads: 8% of the harness's own CPU in the bash checks. Runs take
    turns (:data:`HYPOTHESIS_TURNS`), so one instance serves them all; hypothesis seeds it at
    every example and restores it after, so what it draws is what a fresh one would draw. A
    no-op where hypothesis keeps it elsewhere (its private ``core.threadlocal``)."""
    import hypothesis.core

    local = getattr(hypothesis.core, "threadlocal", None)
    if local is not None and getattr(local, "_hypothesis_global_random", False) is None:
        local._hypothesis_global_random = _RUNS_RANDOM


@contextmanager
def hypothesis_turn(budget: Budget) -> Iterator[list[str]]:
    """Wait for this run's turn (:data:`HYPOTHESIS_TURNS`), start the budget's clock, and keep
    what hypothesis would report (the yielded list) off the terminal. Generation in the turn
    depends on nothing outside the run (:func:`no_local_constants`)."""
    output: list[str] = []
    with HYPOTHESIS_TURNS, with_reporter(lambda text: output.append(str(text))), \
            no_local_constants():
        one_thread_random()
        budget.restart()
        yield output


def explore(test: Callable[[], None], failures: tuple[type[BaseException], ...]) -> str:
    """Run a hypothesis test whose failures were recorded as they happened; how it ended:
    ``"passed"``, ``"failed"``, ``"stopped"`` (:class:`StopExploring`), ``"flaky"`` or
    ``"unsatisfiable"``. Anything else it raises (a harness bug) propagates."""
    try:
        test()
    except StopExploring:
        return "stopped"
    except Flaky:  # FlakyFailure, FlakyStrategyDefinition, FlakyReplay, ...
        return "flaky"
    except Unsatisfiable:
        return "unsatisfiable"
    except BaseExceptionGroup as group:  # report_multiple_bugs: several distinct failures
        _, rest = group.split((*failures, Flaky, StopExploring))
        if rest is not None:
            raise rest from None
        return "failed"
    except failures:
        return "failed"
    return "passed"


#: The seed of every model check's examples (``hypothesis.seed``): explicit, so the examples do
#: not depend on any source text (see :func:`run_machine`).
MACHINE_SEED = 0


def run_machine(machine: type[RuleBasedStateMachine], config: settings) -> None:
    """``run_state_machine_as_test`` for a model check's machine class, seeded by
    :data:`MACHINE_SEED` and without parsing the module that defines it.

    Given a class, hypothesis hashes the class's source, and ``inspect.findsource`` of a class
    parses its whole module with ``ast``. CPython 3.11 is not safe building ASTs in several
    threads at once (gh-106905): in a reference run the editor model checks raised
    ``SystemError: AST constructor recursion depth mismatch`` there, while another case's thread
    formatted a traceback (which parses with ``ast`` too). A ``functools.partial`` of the class
    builds the same machine and has no source. Derandomized, hypothesis would also seed the
    examples from the digest of that source (a source-text seed that a swallowed parse error
    would silently change); the explicit seed replaces it. What hypothesis still parses (its
    own ``run_state_machine``, for a database key that ``database=None`` leaves unused) is a
    few lines, and an error there is swallowed without changing the examples."""
    factory = seed(MACHINE_SEED)(partial(machine))
    run_state_machine_as_test(factory, settings=config)  # type: ignore[arg-type]


#: Helpers that raise a check's failure for it (``fail`` of the editor and bash checks): the
#: failure's origin is the line that called them.
RAISERS = frozenset({"fail"})


def origin(e: BaseException) -> str:
    """Where an exception was raised (file and line): hypothesis' notion of a distinct bug."""
    frames = list(traceback.extract_tb(e.__traceback__))
    while len(frames) > 1 and frames[-1].name in RAISERS:  # the check's line, not the helper's
        frames = frames[:-1]
    if not frames:
        return type(e).__name__
    last = frames[-1]
    return f"{type(e).__name__}@{Path(last.filename).name}:{last.lineno}"
