"""run_property: several distinct failures, flaky subjects, a dead subject and a spent budget end in a
CheckFailure or a pass with a note, never in a hypothesis error; nothing is printed."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import strategies as st

from conformance.catalog import CheckFailure, CheckIncomplete
from conformance.checks.properties import run_property
from conformance.properties.exploration import Budget
from conformance.session import ToolResult, allow_spawn


@dataclass
class EchoSession:
    """A fake bash-like session: answers ``{"command": x}`` with x; ``dead`` after ``die_at``."""

    workdir: Path
    tool_type: str = "bash_20250124"
    timeout: float = 3.0
    delay: float = 0.0
    die_at: str | None = None
    history: list[dict[str, Any]] = field(default_factory=list)
    faults: list[str] = field(default_factory=list)
    dead: bool = False
    closed: bool = False

    def call(self, tool_input: dict[str, Any], *, deadline: float | None = None) -> ToolResult:
        self.history.append(tool_input)
        time.sleep(self.delay)
        if self.dead:
            self.faults.append("subject is not running")
            return ToolResult("harness: subject is not running", is_error=True)
        if self.die_at is not None and self.die_at in tool_input["command"]:
            self.dead = True
            self.faults.append("subject exited while answering")
            return ToolResult("harness: exited", is_error=True)
        return ToolResult(tool_input["command"], is_error=False)

    def close(self) -> None:
        self.closed = True


def test_two_distinct_failures_are_one_check_failure_naming_both(tmp_path: Path) -> None:
    s = EchoSession(tmp_path)

    def body(n: int) -> None:
        r = s.call({"command": str(n)})
        if n > 50:
            raise CheckFailure("too big", received=r.text)
        if n % 2 == 1:
            raise CheckFailure("odd", received=r.text)

    with pytest.raises(CheckFailure) as e:
        run_property(s, st.integers(0, 100), body, examples=200)
    assert "Also:" in e.value.message
    assert "too big" in e.value.message and "odd" in e.value.message
    assert len(e.value.reproducer) == 1


def test_a_flaky_failure_is_reported_not_a_hypothesis_error(tmp_path: Path) -> None:
    s = EchoSession(tmp_path)
    calls = iter(range(10**6))

    def body(n: int) -> None:
        s.call({"command": str(n)})
        if next(calls) == 5:  # fails once, never again
            raise CheckFailure("once")

    with pytest.raises(CheckFailure) as e:
        run_property(s, st.integers(0, 100), body, examples=50)
    assert e.value.message.startswith("once")


def test_a_dead_subject_stops_the_run_with_the_example_that_killed_it(tmp_path: Path) -> None:
    s = EchoSession(tmp_path, die_at="77")

    def body(n: int) -> None:
        r = s.call({"command": f"echo {n}"})
        if r.is_error:
            raise CheckFailure("not echoed")

    with pytest.raises(CheckFailure) as e:
        run_property(s, st.integers(0, 100), body, examples=500)
    assert "faulted" in e.value.message
    assert e.value.reproducer == [{"command": "echo 77"}]


def test_fresh_subjects_per_example_when_the_body_takes_one(tmp_path: Path) -> None:
    s = EchoSession(tmp_path)
    made: list[EchoSession] = []

    def opener(wd: Path) -> EchoSession:
        made.append(EchoSession(wd, die_at="77"))
        return made[-1]

    allow_spawn(s, opener)

    def body(n: int, session: Any) -> None:
        r = session.call({"command": f"echo {n}"})
        if r.is_error:
            raise CheckFailure("not echoed")

    with pytest.raises(CheckFailure) as e:
        run_property(s, st.integers(0, 100), body, examples=300)
    assert "faulted" in e.value.message
    assert e.value.reproducer == [{"command": "echo 77"}]
    assert made and all(m.closed for m in made) and not s.history


def test_the_call_budget_ends_the_run_with_a_note(tmp_path: Path) -> None:
    s = EchoSession(tmp_path)

    def body(n: int) -> None:
        s.call({"command": str(n)})

    note = run_property(s, st.integers(), body, examples=10_000,
                        budget=Budget(seconds=600.0, calls=40))
    assert note is not None and "before the budget ran out" in note


def test_the_time_cap_makes_the_run_incomplete_not_a_pass(tmp_path: Path) -> None:
    s = EchoSession(tmp_path, delay=0.05)

    def body(n: int) -> None:
        s.call({"command": str(n)})

    with pytest.raises(CheckIncomplete) as e:
        run_property(s, st.integers(), body, examples=10_000, budget=Budget(seconds=1.0))
    assert "hard time cap" in str(e.value) and "neither a pass nor a failure" in str(e.value)


def test_nothing_is_printed(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    s = EchoSession(tmp_path)

    def body(n: int) -> None:
        s.call({"command": str(n)})
        if n > 10:
            raise CheckFailure("big")
        if n == 3:
            raise CheckFailure("three")

    with pytest.raises(CheckFailure):
        run_property(s, st.integers(0, 100), body, examples=100)
    out, err = capfd.readouterr()
    assert out == "" and err == ""


def _drawing_machine(drawn: list[int]) -> type:
    from hypothesis.stateful import RuleBasedStateMachine, rule

    class Drawing(RuleBasedStateMachine):
        @rule(n=st.integers())
        def step(self, n: int) -> None:
            drawn.append(n)

    return Drawing


def test_a_model_machine_runs_without_parsing_its_module(monkeypatch: pytest.MonkeyPatch) -> None:
    """run_machine (both model checks) does not parse the machine's module: given a class,
    hypothesis hashes its source, and inspect.findsource of a class parses its whole module with
    ast, which CPython 3.11 cannot do safely in several threads at once (a reference run's editor
    model checks raised ``SystemError: AST constructor recursion depth mismatch``)."""
    import ast

    from conformance.properties.exploration import quiet_settings, run_machine

    parsed: list[str] = []
    real_parse = ast.parse

    def recording_parse(source: Any, *args: Any, **kwargs: Any) -> Any:
        parsed.append(str(source))
        return real_parse(source, *args, **kwargs)

    drawn: list[int] = []
    monkeypatch.setattr(ast, "parse", recording_parse)
    run_machine(_drawing_machine(drawn), quiet_settings(max_examples=3, stateful_step_count=2))
    assert drawn, "the machine did not run"
    module = [p for p in parsed if "_drawing_machine" in p or "class Drawing" in p]
    assert module == [], "the run parsed the machine's module with ast"


def test_model_machine_examples_do_not_depend_on_its_source() -> None:
    """The examples are seeded explicitly (MACHINE_SEED), not from a digest of the source: two
    machines with the same rules written differently draw the same examples."""
    from hypothesis.stateful import RuleBasedStateMachine, rule

    from conformance.properties.exploration import quiet_settings, run_machine

    config = quiet_settings(max_examples=5, stateful_step_count=3)
    first: list[int] = []
    run_machine(_drawing_machine(first), config)
    second: list[int] = []

    class Other(RuleBasedStateMachine):
        """Written differently from _drawing_machine's class (another name, this docstring)."""

        @rule(value=st.integers())
        def record(self, value: int) -> None:
            second.append(value)  # a comment

    run_machine(Other, config)
    assert first and first == second


def test_a_result_says_error_by_its_first_word_only() -> None:
    """How an editor that leaves ``is_error`` unset refuses: "error" first, after whitespace, in
    any case; the rest of the text (a view can be megabytes) is never read."""
    says = [ToolResult(t, is_error=False).says_error()
            for t in ("Error: no such file", "  \n\tERROR x", "error", "errors: 3")]
    assert says == [True, True, True, True]
    said = [ToolResult(t, is_error=False).says_error()
            for t in ("", "no error", "1\terror: x", "Err", "e rror")]
    assert said == [False] * 5
    blocks = [{"type": "text", "text": "\n"}, {"type": "text", "text": "Error: it"}]
    assert ToolResult(blocks, is_error=False).says_error()
    assert not ToolResult("x" + "error" * 10**6, is_error=False).says_error()


def test_a_check_thread_reuses_the_one_registered_random(monkeypatch: pytest.MonkeyPatch) -> None:
    """Hypothesis registers a new ``Random`` (with a full ``gc.collect()``) on every thread's
    first run; a check's thread gets the shared one instead, and draws as a fresh one would."""
    import threading

    import hypothesis.core
    from hypothesis import given, seed, settings
    from hypothesis.internal import entropy

    from conformance.properties import exploration

    registered: list[object] = []
    register = entropy.register_random
    monkeypatch.setattr(entropy, "register_random", lambda r: (registered.append(r), register(r)))

    def draws(share: bool) -> list[int]:
        seen: list[int] = []

        @seed(7)
        @settings(max_examples=5, database=None, derandomize=False)
        @given(st.integers(), st.randoms(use_true_random=False))
        def run(i: int, r: Any) -> None:
            seen.append(i)

        with exploration.HYPOTHESIS_TURNS:
            if share:
                exploration.one_thread_random()
            run()
        shared = hypothesis.core.threadlocal._hypothesis_global_random is exploration._RUNS_RANDOM
        assert shared is share
        return seen

    got: dict[bool, list[int]] = {}
    for share in (True, True, False):  # fresh threads: the same examples either way
        t = threading.Thread(target=lambda share=share: got.__setitem__(share, draws(share)))
        t.start()
        t.join()
    assert got[True] == got[False] and len(got[True]) == 5
    assert len(registered) == 1  # only the thread that had no shared one registered its own
