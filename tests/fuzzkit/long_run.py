"""The long fuzz run behind ``nox -s fuzz``: many more hostile requests than the bounded test,
straight into the composed handler, with counts by category.

    python -m fuzzkit.long_run [--examples N] [--seed S]      (from the tests/ directory)
"""

from __future__ import annotations

import argparse
import collections
import sys
import time

from hypothesis import HealthCheck, given, seed, settings

from fuzzkit.requests import category, check_response, requests
from simulator import routes
from simulator.cassette import iter_corpus
from simulator.http import SimRequest


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="fuzz", description=__doc__.splitlines()[0])
    p.add_argument("--examples", type=int, default=5000)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    app = routes.build(list(iter_corpus()), log_limit=1000)
    counts: collections.Counter[str] = collections.Counter()
    statuses: collections.Counter[int] = collections.Counter()

    @seed(args.seed)
    @settings(max_examples=args.examples, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(requests)
    def fuzz(req: SimRequest) -> None:
        resp = app(req)
        counts[category(req)] += 1
        statuses[resp.status] += 1
        check_response(req, resp)

    started = time.monotonic()
    fuzz()
    total = sum(counts.values())
    print(f"fuzz: {total} requests in {time.monotonic() - started:.1f}s, no 5xx, every error "
          "in the API's shape")
    for name, n in counts.most_common():
        print(f"  {n:7d}  {name}")
    print("  statuses: " + ", ".join(f"{s}: {n}" for s, n in sorted(statuses.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
