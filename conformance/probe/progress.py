"""The probe's progress on stderr: one line per scenario ended, as ``tooluse run --progress
lines`` gives one per check (``[3/6] completed  probe_demo/custom/weather  2 turns, 2 requests
1.2s | tokens 1,460 in, 167 out, 0 cache; $0.0069 so far``), and a summary at the end.

The same plain lines on a terminal and elsewhere: a scenario is a whole conversation (seconds to
minutes each, a few per run), so each gets its log line; nothing is rewritten in place, and
every line ends with a newline."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TextIO

from .driver import Budget, Outcome
from .run import cost


def _count(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def tokens_line(budget: Budget, price: tuple[float, float] | None) -> str:
    u = budget.usage
    spent = cost(u, price)
    text = (f"tokens {u['input_tokens']:,} in, {u['output_tokens']:,} out, "
            f"{u['cache_read_input_tokens'] + u['cache_creation_input_tokens']:,} cache")
    if budget.total is not None:
        text += f" ({budget.used:,}/{budget.total:,} of the budget)"
    return text + (f"; ${spent:.4f} so far" if spent is not None else "; cost: give --price")


class ProgressLine:
    def __init__(self, price: tuple[float, float] | None, stream: TextIO, *,
                 quiet: bool = False) -> None:
        self.price, self.stream, self.quiet = price, stream, quiet

    def __call__(self, done: int, total: int, outcome: Outcome, budget: Budget) -> None:
        if self.quiet:
            return
        what = [_count(outcome.turns, "turn"), _count(outcome.requests, "request")]
        if outcome.drift:
            what.append(f"{len(outcome.drift)} drift")
        if outcome.retried:
            what.append(f"{len(outcome.retried)} retried")
        print(f"[{done}/{total}] {outcome.status}  {outcome.scenario}  {', '.join(what)}  "
              f"{outcome.wall_seconds:.1f}s | {tokens_line(budget, self.price)}",
              file=self.stream, flush=True)

    def summary(self, outcomes: list[Outcome], budget: Budget, not_run: int, out: Path) -> None:
        counts = Counter(o.status for o in outcomes)
        drift = sum(len(o.drift) for o in outcomes)
        parts = ", ".join(f"{n} {s}" for s, n in sorted(counts.items())) or "nothing driven"
        tail = f"; {not_run} not run (run again to resume)" if not_run else ""
        print(f"tooluse probe: {parts}; {drift} drift finding(s){tail}; "
              f"{tokens_line(budget, self.price)}; wrote {out}", file=self.stream, flush=True)
