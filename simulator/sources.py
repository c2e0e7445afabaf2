"""Where protocol facts come from: the five seed documents and PROTOCOL.md.

Every rule, check, registry fact and fixture cites a :class:`Source`. A source names a seed file
(and a section inside it) or a ``PROTOCOL.md`` entry, and says whether the fact is documented,
inferred, or undocumented and kept configurable.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

SEED_CODE_EXECUTION = "000_1c6513e12fd2ccd0.txt"
SEED_TEXT_EDITOR = "001_30efa6f7a5b3609f.txt"
SEED_PTC = "002_bfb5e52a09435579.txt"
SEED_BASH = "003_6e507974676b5473.txt"
SEED_MANAGED_AGENTS = "004_4f295fb03dc034c9.txt"
PROTOCOL = "PROTOCOL.md"

SEEDS = (SEED_CODE_EXECUTION, SEED_TEXT_EDITOR, SEED_PTC, SEED_BASH, SEED_MANAGED_AGENTS)

#: Tags as used in PROTOCOL.md: documented, SDK-derived, inferred, third-party, undocumented.
Tag = Literal["D", "S", "I", "3P", "?"]


@dataclass(frozen=True)
class Source:
    """A citation: ``document`` is a seed file name or ``PROTOCOL.md``; ``section`` a heading."""

    document: str
    section: str
    tag: Tag = "D"

    def __post_init__(self) -> None:
        if self.document not in (*SEEDS, PROTOCOL):
            raise ValueError(f"unknown source document {self.document!r}; use a seed file or PROTOCOL.md")
        if not self.section:
            raise ValueError("a source needs a section")

    @property
    def inferred(self) -> bool:
        return self.tag in ("I", "?")

    def __str__(self) -> str:
        mark = "" if self.tag == "D" else f" [{self.tag}]"
        return f"{self.document} § {self.section}{mark}"

    def to_json(self) -> dict[str, object]:
        return {"document": self.document, "section": self.section, "tag": self.tag}


def seed(document: str, section: str, tag: Tag = "D") -> Source:
    return Source(document, section, tag)


def protocol(section: str, tag: Tag = "D") -> Source:
    return Source(PROTOCOL, section, tag)
