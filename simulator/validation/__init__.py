"""Validation API: every violation of a JSON object against the protocol's JSON Schemas.

>>> from simulator.validation import validate
>>> validate({"type": "tool_result"}, "block", strict=True)[0].message
"'tool_use_id' is a required property"

``validate(obj, kind, *, strict=False)`` returns a list of :class:`Violation` (JSON pointer,
message, rule, severity); ``detect_kind(obj)`` guesses the kind; ``validate_cassette`` checks
every body and event of a :class:`~simulator.cassette.Cassette` with pointers into its file.
"""

from __future__ import annotations

from ._cassette import validate_cassette
from ._detect import CAPTURE_KINDS, detect_kind, unwrap_capture
from ._validate import is_valid, validate, validator_for
from ._violation import Severity, Violation, errors

__all__ = ["CAPTURE_KINDS", "Severity", "Violation", "detect_kind", "errors", "is_valid", "unwrap_capture",
           "validate", "validate_cassette", "validator_for"]
