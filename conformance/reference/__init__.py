"""Reference subjects bundled with the suite: what ``tooluse run --all-reference`` and
``nox -s conformance`` run against. Each passes every MUST and SHOULD check of its tool type.

Add one entry per subject (one per editor version): name -> (family, tool_type, spec).
"""

from __future__ import annotations

from typing import NamedTuple


class ReferenceSubject(NamedTuple):
    #: Check family: ``bash`` or ``editor``.
    family: str
    tool_type: str
    #: ``module:attr`` factory.
    spec: str


REFERENCE_SUBJECTS: dict[str, ReferenceSubject] = {
    "reference-bash": ReferenceSubject("bash", "bash_20250124", "conformance.reference.bash:factory"),
}
