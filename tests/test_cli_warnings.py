"""``tooluse``'s processes ignore hypothesis' cross-thread false alarm about ``random``.

The checks run at once in threads. When another thread (the SDK's retry jitter in a loop check)
moves the global ``random`` state while a strategy draws, hypothesis warns "Do not use the
`random` module inside strategies" (a FutureWarning: shown to users). A full-suite CI run showed
it from the in-process reference run; no strategy of the suite uses ``random``.
"""

from __future__ import annotations

import warnings

import pytest
from hypothesis.errors import HypothesisDeprecationWarning

from conformance.cli import RANDOM_IN_STRATEGY, main


def test_the_false_alarm_is_ignored_after_the_command_starts(
        capsys: pytest.CaptureFixture[str]) -> None:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert main(["checks"]) == 0
        capsys.readouterr()
        warnings.warn(HypothesisDeprecationWarning(
            f"{RANDOM_IN_STRATEGY}; instead consider `st.randoms()`, `st.sampled_from()`, etc.  "
            "from data=data()"), stacklevel=1)
        warnings.warn(HypothesisDeprecationWarning("another deprecation"), stacklevel=1)
    assert [str(w.message) for w in seen] == ["another deprecation"]
