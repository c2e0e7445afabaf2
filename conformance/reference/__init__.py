"""Reference subjects bundled with the suite: what ``tooluse run --all-reference`` and
``nox -s conformance`` run against. Each passes every MUST and SHOULD check of its tool type.

Add one entry per subject (one per editor version): name -> (family, tool_type, spec[, options]).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, NamedTuple


class ReferenceSubject(NamedTuple):
    #: Check family: ``bash`` or ``editor``.
    family: str
    tool_type: str
    #: ``module:attr`` factory.
    spec: str
    #: Tool-definition options it is configured with (e.g. ``{"max_characters": 2000}``).
    options: Mapping[str, Any] = MappingProxyType({})


REFERENCE_SUBJECTS: dict[str, ReferenceSubject] = {
    "reference-bash": ReferenceSubject("bash", "bash_20250124", "conformance.reference.bash:factory"),
    "reference-editor-20241022": ReferenceSubject(
        "editor", "text_editor_20241022", "conformance.reference.editor:text_editor_20241022"),
    "reference-editor-20250124": ReferenceSubject(
        "editor", "text_editor_20250124", "conformance.reference.editor:text_editor_20250124"),
    "reference-editor-20250429": ReferenceSubject(
        "editor", "text_editor_20250429", "conformance.reference.editor:text_editor_20250429"),
    "reference-editor-20250728": ReferenceSubject(
        "editor", "text_editor_20250728", "conformance.reference.editor:text_editor_20250728",
        MappingProxyType({"max_characters": 10000})),
}
