"""The probe's progress: one line per scenario ended (a bar, the scenario, tokens and cost so
far), and a summary at the end."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TextIO

from .driver import Budget, Outcome
from .run import cost

BAR_WIDTH = 20


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
        filled = BAR_WIDTH * done // max(total, 1)
        bar = "#" * filled + "-" * (BAR_WIDTH - filled)
        extra = f", {len(outcome.drift)} drift" if outcome.drift else ""
        extra += f", {len(outcome.retried)} retried" if outcome.retried else ""
        print(f"[{bar}] {done}/{total} {outcome.scenario}: {outcome.status} "
              f"({outcome.turns} turns, {outcome.requests} requests{extra}) | "
              f"{tokens_line(budget, self.price)}", file=self.stream, flush=True)

    def summary(self, outcomes: list[Outcome], budget: Budget, not_run: int, out: Path) -> None:
        counts = Counter(o.status for o in outcomes)
        drift = sum(len(o.drift) for o in outcomes)
        parts = ", ".join(f"{n} {s}" for s, n in sorted(counts.items())) or "nothing driven"
        tail = f"; {not_run} not run (run again to resume)" if not_run else ""
        print(f"tooluse probe: {parts}; {drift} drift finding(s){tail}; "
              f"{tokens_line(budget, self.price)}; wrote {out}", file=self.stream, flush=True)
