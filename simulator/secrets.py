"""Credentials that must never reach a cassette, and the scanner that proves none did.

Public API (the recorder and the fixture linter share it):

- :func:`find_secrets(obj) <find_secrets>` → ``[(json_pointer, kind), ...]``: every credential left
  in a parsed cassette (or any JSON value). ``kind`` says why: ``header:x-api-key``,
  ``query:key``, ``field:authorization_token``, ``pattern:sk-ant-...``, ``env:NAME``.
- :func:`redact(obj) <redact>`: the same value with each credential replaced by :data:`REDACTED`
  (credential headers and query parameters are dropped).
- :class:`SecretScanner`: both, with extra patterns (``--secret-pattern``) and literal values.

Where a name is only a credential in context (``key`` is a credential as a query parameter, not as
a tool input field), the scanner looks at the enclosing ``headers`` / ``query`` object.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

REDACTED = "[REDACTED]"

#: Values that are credentials wherever they appear (configurable: ``SecretScanner(patterns=)``).
DEFAULT_PATTERNS: tuple[str, ...] = (
    r"sk-ant-[A-Za-z0-9_-]+",
    r"(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{8,}",
)
#: Header names that carry credentials.
SECRET_HEADER = re.compile(
    r"^(x-api-key|api-key|authorization|proxy-authorization|cookie|set-cookie|x-auth-token"
    r"|anthropic-[a-z0-9-]*-key|x-[a-z0-9-]*-(token|secret)|.*api[-_]?key.*)$", re.I)
#: Query parameter names that carry credentials.
SECRET_QUERY = frozenset({"key", "api_key", "apikey", "api-key", "token", "access_token", "auth",
                          "secret", "password", "sig", "signature", "code", "x-api-key"})
#: JSON field names that carry credentials anywhere in a body.
SECRET_FIELDS = frozenset({"api_key", "apikey", "x-api-key", "authorization", "authorization_token",
                           "access_token", "refresh_token", "client_secret", "password"})
#: Environment variable names whose values are credentials (scanned for verbatim).
SECRET_ENV = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL|AUTH)", re.I)
_MIN_LITERAL = 8


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def env_secrets(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """``{value: NAME}`` for environment variables named like credentials (8+ characters)."""
    env = os.environ if environ is None else environ
    return {v: k for k, v in env.items() if SECRET_ENV.search(k) and len(v) >= _MIN_LITERAL}


@dataclass
class SecretScanner:
    patterns: tuple[str, ...] = DEFAULT_PATTERNS
    #: Literal secret values (``{value: label}``); the environment's are added unless disabled.
    literals: dict[str, str] = field(default_factory=dict)
    use_environment: bool = True

    def __post_init__(self) -> None:
        self._regexes = [re.compile(p) for p in self.patterns]
        if self.use_environment:
            self.literals = {**env_secrets(), **self.literals}

    @classmethod
    def with_patterns(cls, extra: Iterable[str] = (), **kwargs: Any) -> SecretScanner:
        """The default patterns plus ``extra`` (a bad regex raises ``re.error`` naming it)."""
        return cls(patterns=(*DEFAULT_PATTERNS, *extra), **kwargs)

    # --- scanning ------------------------------------------------------------------------------

    def _text_kinds(self, text: str) -> list[str]:
        kinds = [f"pattern:{r.pattern}" for r in self._regexes if r.search(text)]
        kinds += [f"env:{label}" for value, label in self.literals.items() if value in text]
        return kinds

    def find(self, obj: Any) -> list[tuple[str, str]]:
        found: list[tuple[str, str]] = []
        self._walk(obj, "", None, found)
        return found

    def _walk(self, obj: Any, ptr: str, parent: str | None, found: list[tuple[str, str]]) -> None:
        if isinstance(obj, str):
            found.extend((ptr or "/", kind) for kind in self._text_kinds(obj))
        elif isinstance(obj, list):
            for i, item in enumerate(obj):
                self._walk(item, f"{ptr}/{i}", None, found)
        elif isinstance(obj, dict):
            for key, value in obj.items():
                child = f"{ptr}/{_escape(str(key))}"
                name = str(key).lower()
                found.extend((child, f"key-{kind}") for kind in self._text_kinds(str(key)))
                named = self._named_kind(name, parent)
                if named and isinstance(value, str) and value not in ("", REDACTED):
                    found.append((child, named))
                    continue
                self._walk(value, child, name, found)

    @staticmethod
    def _named_kind(name: str, parent: str | None) -> str | None:
        if parent == "headers" and SECRET_HEADER.match(name):
            return f"header:{name}"
        if parent == "query" and name in SECRET_QUERY:
            return f"query:{name}"
        if name in SECRET_FIELDS:
            return f"field:{name}"
        return None

    # --- redaction -----------------------------------------------------------------------------

    def redact_text(self, text: str) -> str:
        for regex in self._regexes:
            text = regex.sub(REDACTED, text)
        for value in sorted(self.literals, key=len, reverse=True):
            text = text.replace(value, REDACTED)
        return text

    def redact(self, obj: Any, parent: str | None = None) -> Any:
        if isinstance(obj, str):
            return self.redact_text(obj)
        if isinstance(obj, list):
            return [self.redact(item) for item in obj]
        if isinstance(obj, dict):
            out: dict[str, Any] = {}
            for key, value in obj.items():
                name = str(key).lower()
                kind = self._named_kind(name, parent)
                if kind and kind.startswith(("header:", "query:")):
                    continue  # credential headers and query parameters are dropped entirely
                if kind and isinstance(value, str):
                    out[self.redact_text(str(key))] = REDACTED
                else:
                    out[self.redact_text(str(key))] = self.redact(value, name)
            return out
        return obj


def find_secrets(obj: Any, *, patterns: Iterable[str] = (),
                 literals: Mapping[str, str] | None = None) -> list[tuple[str, str]]:
    """Every credential in ``obj`` as ``(json_pointer, kind)``; empty when it is clean."""
    return SecretScanner.with_patterns(patterns, literals=dict(literals or {})).find(obj)


def redact(obj: Any, *, patterns: Iterable[str] = ()) -> Any:
    """``obj`` with every credential removed or replaced by :data:`REDACTED`."""
    return SecretScanner.with_patterns(patterns).redact(obj)
