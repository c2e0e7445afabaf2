"""Bash steps printing output of every size (seed 003 "Handle large outputs"; PROTOCOL.md §4: stdout
and stderr are returned): none, a few lines, past any truncation, one long line, stderr, no final
newline. The answer must hold (some of) the output, truncated in any way, and keep the session in
step."""

from __future__ import annotations

from dataclasses import dataclass

from conformance.properties.bash_model import readable
from conformance.properties.bash_step import Ctx, Disagreement, Op, short

#: (command, kind); ``{n}`` is the size.
OUTPUTS = {
    "seq": "seq 1 {n}",
    "stderr": "seq 1 {n} >&2",
    "line": "head -c {n} /dev/zero | tr '\\0' x; echo",
    "partial": "printf %s tu-partial-{n}",
}


@dataclass
class Output(Op):
    """Output of some size; the answer must hold (some of) it and keep the session in step."""

    how: str
    n: int
    kind = "output"

    def run(self, ctx: Ctx) -> None:
        command = OUTPUTS[self.how].format(n=self.n)
        r = ctx.send({"command": command}, self.kind)
        if r.is_error:
            raise Disagreement(f"output:{self.how}", f"`{command}` was answered with an error",
                               short(r), f"(some of) the output of `{command}`")
        ctx.expect_status(r, "ok", f"`{command}`")
        ctx.disturbed(self.kind)
        text = readable(r.text)
        if self.how == "partial":
            ok = f"tu-partial-{self.n}" in text
        elif self.how == "line":
            ok = "x" * min(self.n, 64) in "".join(text.split())
        else:
            numbers = [int(x.strip()) for x in text.split("\n")
                       if x.strip().isdigit() and 1 <= int(x.strip()) <= self.n]
            if self.n <= 3:
                ok = numbers == list(range(1, self.n + 1)) or set(range(1, self.n + 1)) <= set(numbers)
            else:
                ok = any(b == a + 1 == c - 1 for a, b, c in zip(numbers, numbers[1:], numbers[2:], strict=False))
        if not ok:
            key = f"output:{self.how}"
            raise Disagreement(key, f"`{command}` was answered without its output (not even "
                               "part of it, truncated in any way)", short(r),
                               f"(some of) the output of `{command}`")


SIZES = {"seq": (0, 1, 3, 100, 101, 2_000, 30_000), "stderr": (2, 150, 5_000),
         "line": (1, 4_096, 65_537, 200_000), "partial": (1, 2)}
