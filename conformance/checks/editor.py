"""The text editor checks (issue 5, item 2): importing this module registers all of them.

One module per area: ``editor_view`` (view, view_range, directories, max_characters),
``editor_edit`` (str_replace, create, insert, undo_edit), ``editor_errors``, ``editor_bytes``
(nothing outside the edited span changes), ``editor_paths`` (metacharacters, outside paths), ``editor_undo`` (undo on tabs and CRLF) and
``editor_stateful`` (the model-based check).
"""

from __future__ import annotations

from . import (  # noqa: F401  (imported to register their checks)
    editor_bytes,
    editor_edit,
    editor_errors,
    editor_paths,
    editor_stateful,
    editor_undo,
    editor_view,
)
