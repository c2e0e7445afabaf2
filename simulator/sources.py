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
#: Captures of live API traffic (``../shared/real_traffic``): the section is a capture id
#: (``pydai__369``), always tagged ``3P`` (reported by a third party's recording).
REAL_TRAFFIC = "real_traffic"

SEEDS = (SEED_CODE_EXECUTION, SEED_TEXT_EDITOR, SEED_PTC, SEED_BASH, SEED_MANAGED_AGENTS)

#: English names of the seed headings the code base and the fixtures cite, translated from the
#: seed text (the seeds are Indonesian, French and Korean; users never see them). Seed 003's
#: citations carry the English name already ("파라미터 (Parameters)"), as the seed's headings do.
#: Headings that are English already (``view``, ``Streaming``) are not listed. A section made of
#: parts (``"Format respons / Error"``) is translated part by part.
ENGLISH_SECTIONS: dict[str, dict[str, str]] = {
    SEED_CODE_EXECUTION: {
        "Alasan berhenti `pause_turn`": "The pause_turn stop reason",
        "Alasan berhenti pause_turn": "The pause_turn stop reason",
        "Cara file yang dihasilkan ditangkap": "How generated files are captured",
        "Cara kerja eksekusi kode": "How code execution works",
        "Format respons": "Response format",
        "Respons operasi file": "File operation responses",
        "Respons perintah Bash": "Bash command responses",
        "Menggunakan eksekusi kode dengan alat eksekusi lainnya":
            "Using code execution with other execution tools",
        "Penggunaan dan harga": "Usage and pricing",
        "Penggunaan ulang container": "Container reuse",
        "Unggah dan analisis file": "Upload and analyze files",
        "Upgrade ke versi alat terbaru": "Upgrade to the latest tool version",
        "Versi alat": "Tool versions",
    },
    SEED_TEXT_EDITOR: {
        "Contoh: Memperbaiki kesalahan sintaks dengan tool editor teks":
            "Example: fixing a syntax error with the text editor tool",
        "Gunakan model yang kompatibel": "Use a compatible model",
        "Implementasikan langkah-langkah keamanan": "Implement security measures",
        "Implementasikan tool editor teks": "Implement the text editor tool",
        "Log perubahan": "Changelog",
        "Nomor baris": "Line numbers",
        "Perintah tool editor teks": "Text editor tool commands",
        "Tangani kesalahan": "Handle errors",
        "Tangani panggilan tool editor": "Handle editor tool calls",
        "Tangani penggantian teks unik dengan hati-hati": "Handle unique text replacement carefully",
    },
    SEED_PTC: {
        "Ce qui se passe réellement": "What actually happens",
        "L'activer": "Enabling it",
        "Le champ caller": "The caller field",
        "Les chaînes de version, décodées": "The version strings, decoded",
        "Les chiffres": "The numbers",
        "Les cinq façons dont cela casse": "The five ways it breaks",
        "Reprise": "Resuming",
    },
    SEED_BASH: {
        "Bash 도구": "Bash tool",
    },
    SEED_MANAGED_AGENTS: {
        "Alat kustom": "Custom tools",
        "Deklarasi harus sesuai dengan Managed Agents API":
            "Declarations must match the Managed Agents API",
        "Deklarasi harus sesuai dengan Managed Agents API (tools)":
            "Declarations must match the Managed Agents API: tools",
        "Kegagalan alat muncul sebagai hasil alat error":
            "Tool failures surface as error tool results",
        "Kegagalan alat muncul sebagai hasil alat error (timeout)":
            "Tool failures surface as error tool results: timeout",
        "Melayani alat kustom": "Serving custom tools",
        "Membungkus server MCP sebagai alat kustom": "Wrapping MCP servers as custom tools",
        "Worker hanya menjawab alat yang didaftarkan padanya":
            "A worker answers only the tools registered with it",
    },
}


DOCS = "https://platform.claude.com/docs/en/"

#: The public page each seed is a translation of (the English original a user can open), the
#: seed's language, and the translated page the seed was taken from.
PAGES: dict[str, tuple[str, str, str]] = {
    SEED_CODE_EXECUTION: (DOCS + "agents-and-tools/tool-use/code-execution-tool", "Indonesian",
                          "https://platform.claude.com/docs/id/agents-and-tools/tool-use/"
                          "code-execution-tool"),
    SEED_TEXT_EDITOR: (DOCS + "agents-and-tools/tool-use/text-editor-tool", "Indonesian",
                       "https://platform.claude.com/docs/id/agents-and-tools/tool-use/"
                       "text-editor-tool"),
    SEED_PTC: (DOCS + "agents-and-tools/tool-use/programmatic-tool-calling", "French",
               "https://platform.claude.com/docs/fr/agents-and-tools/tool-use/"
               "programmatic-tool-calling"),
    SEED_BASH: (DOCS + "agents-and-tools/tool-use/bash-tool", "Korean",
                "https://platform.claude.com/docs/ko/agents-and-tools/tool-use/bash-tool"),
    SEED_MANAGED_AGENTS: (DOCS + "managed-agents/self-hosted-sandboxes-custom-tools", "Indonesian",
                          "https://platform.claude.com/docs/id/managed-agents/"
                          "self-hosted-sandboxes-custom-tools"),
}

#: PROTOCOL.md's numbered parts and the public page each gathers its facts from (its "Sources").
PROTOCOL_PAGES: dict[str, str] = {
    "1": DOCS + "agents-and-tools/tool-use/programmatic-tool-calling",
    "2": DOCS + "agents-and-tools/tool-use/code-execution-tool",
    "3": DOCS + "agents-and-tools/tool-use/text-editor-tool",
    "4": DOCS + "agents-and-tools/tool-use/bash-tool",
    "5": DOCS + "api/errors",
    "6": DOCS + "build-with-claude/streaming",
    "7": DOCS + "managed-agents/self-hosted-sandboxes",
    "8": DOCS + "api/models",
}


def page_url(document: str, section: str) -> str | None:
    """The public documentation page a citation points to (None for captures and for PROTOCOL.md
    parts gathered from several pages)."""
    if document in PAGES:
        return PAGES[document][0]
    if document == PROTOCOL:
        number = section.split(".", 1)[0].strip()
        return PROTOCOL_PAGES.get(number)
    return None


def english_section(document: str, section: str) -> str:
    """The section's name in English: the translation of a seed heading, the English name a
    Korean heading carries (``"오류 처리하기 (Handle errors)"`` → ``Handle errors``), or the
    heading itself when it is English already."""
    en = english(document, section)
    if en:
        return en
    if section.endswith(")") and " (" in section and not section.isascii():
        return section[section.rindex(" (") + 2:-1]
    return section


def english(document: str, section: str) -> str | None:
    """The English name of a seed ``section`` (None when it is English already or unknown)."""
    table = ENGLISH_SECTIONS.get(document, {})
    if section in table:
        return table[section]
    parts = section.split(" / ")
    if len(parts) > 1 and any(x in table for x in parts):
        return " / ".join(table.get(x, x) for x in parts)
    return None


#: Tags as used in PROTOCOL.md: documented, SDK-derived, inferred, third-party, undocumented.
Tag = Literal["D", "S", "I", "3P", "?"]


@dataclass(frozen=True)
class Source:
    """A citation: ``document`` is a seed file name or ``PROTOCOL.md``; ``section`` a heading."""

    document: str
    section: str
    tag: Tag = "D"

    def __post_init__(self) -> None:
        if self.document not in (*SEEDS, PROTOCOL, REAL_TRAFFIC):
            raise ValueError(f"unknown source document {self.document!r}; use a seed file, "
                             "PROTOCOL.md or real_traffic")
        if not self.section:
            raise ValueError("a source needs a section")

    @property
    def inferred(self) -> bool:
        return self.tag in ("I", "?")

    @property
    def title(self) -> str:
        """The section as users read it: the seed's heading with its English name,
        ``"Tangani kesalahan (Handle errors)"``. ``section`` stays the seed's own heading (rule
        ids, fixtures and the seed-section tests match it)."""
        en = english(self.document, self.section)
        return f"{self.section} ({en})" if en else self.section

    def __str__(self) -> str:
        mark = "" if self.tag == "D" else f" [{self.tag}]"
        return f"{self.document} § {self.title}{mark}"

    def to_json(self) -> dict[str, object]:
        return {"document": self.document, "section": self.section, "title": self.title,
                "tag": self.tag}

    @property
    def url(self) -> str | None:
        """The public page (English) this citation's section is on."""
        return page_url(self.document, self.section)

    @property
    def section_en(self) -> str:
        return english_section(self.document, self.section)

    def cite(self) -> str:
        """The citation as a user reads it: the section by its English name and the page to open,
        ``Handle errors — https://platform.claude.com/docs/en/.../bash-tool (seed 003, Korean:
        오류 처리하기)``; PROTOCOL.md parts and captures by their names."""
        mark = "" if self.tag == "D" else f" [{self.tag}]"
        if self.document in PAGES:
            _, language, _ = PAGES[self.document]
            heading = self.section.removesuffix(f" ({self.section_en})")
            original = f", {language}: {heading}" if heading != self.section_en else ""
            where = f"seed {self.document[:3]}{original}"
            return f"{self.section_en} — {self.url} ({where}){mark}"
        if self.document == PROTOCOL:
            url = f" — {self.url}" if self.url else ""
            return f"PROTOCOL.md § {self.section}{url}{mark}"
        return f"{self}"

    def cite_json(self) -> dict[str, object]:
        """:meth:`to_json` plus what a user opens: ``url`` and ``section_en``."""
        out = self.to_json()
        out["section_en"] = self.section_en
        if self.url:
            out["url"] = self.url
        return out


def cite_json_text(src: dict[str, object]) -> str:
    """:meth:`Source.cite` for a citation as stored (a results file's ``source``)."""
    try:
        tag = str(src.get("tag") or "D")
        return Source(str(src["document"]), str(src["section"]),
                      tag if tag in ("D", "S", "I", "3P", "?") else "?").cite()  # type: ignore[arg-type]
    except (KeyError, ValueError):
        return f"{src.get('document', '?')} § {src.get('title') or src.get('section', '?')}"


def seed(document: str, section: str, tag: Tag = "D") -> Source:
    return Source(document, section, tag)


def protocol(section: str, tag: Tag = "D") -> Source:
    return Source(PROTOCOL, section, tag)


def capture(*ids: str) -> Source:
    """A live capture (or several, ``" / "``-joined) as the source: ``capture("pydai__369")``."""
    if not ids or not all("__" in i for i in ids):
        raise ValueError(f"capture ids look like 'pydai__369', got {ids!r}")
    return Source(REAL_TRAFFIC, " / ".join(ids), "3P")
