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

#: PROTOCOL.md's numbered parts and the public page each gathers its documented facts from.
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

#: The SDK release PROTOCOL.md's SDK facts ([S]) were read from, on GitHub.
SDK = "https://github.com/anthropics/anthropic-sdk-python/blob/v2.10.0/src/anthropic/"
#: The project's notes on the protocol, shipped in the package: the text of every fact cited from
#: PROTOCOL.md, each with its public source (docs/protocol-notes.md; the wheel's
#: conformance/docs/protocol-notes.md). Users read this name; PROTOCOL.md is not shipped.
NOTES = "docs/protocol-notes.md"

#: PROTOCOL.md sections the checks cite, by the public page and section each fact is from (as the
#: fact's tag in PROTOCOL.md names it: [D TE] the text editor page, [D RL] the rate-limits page,
#: [S `_base_client.py`] the SDK file). Keyed by (section, tag); ``None`` matches any tag.
PUBLIC: dict[tuple[str, str | None], tuple[str, str]] = {
    ("1. Programmatic tool calling: Continuation request", None):
        ("Programmatic tool calling: continuing after a pause", DOCS + "agents-and-tools/"
         "tool-use/programmatic-tool-calling"),
    ("1. Programmatic tool calling: Error texts and conditions", None):
        ("Programmatic tool calling: error conditions", DOCS + "agents-and-tools/tool-use/"
         "programmatic-tool-calling"),
    ("2. Code execution tool: Client tool alongside code execution", None):
        ("Server tools: a client tool alongside a server tool", DOCS + "agents-and-tools/"
         "tool-use/server-tools"),
    ("3. Text editor tool: Commands (insert_text)", None):
        ("Text editor tool commands: insert", PROTOCOL_PAGES["3"]),
    ("3. Text editor tool: Documented example texts", None):
        ("Handle errors", PROTOCOL_PAGES["3"]),
    ("3. Text editor tool: Type/name pairs (max_characters)", None):
        ("max_characters (text_editor_20250728)", PROTOCOL_PAGES["3"]),
    ("4. Bash tool: Semantics", None): ("How it works", PROTOCOL_PAGES["4"]),
    ("5. Error responses: Headers (retry-after)", "D"):
        ("Response headers: retry-after", DOCS + "api/rate-limits"),
    ("5. Error responses: Headers (retry-after)", "S"):
        ("Retries (the SDK's client: max_retries, retry-after)", SDK + "_base_client.py"),
    ("7. Worker behaviour", None):
        ("The SDK's self-hosted worker (poll, ack, heartbeat, stop)",
         SDK + "lib/environments/_worker.py"),
}


def protocol_part(section: str) -> str:
    """The number of a PROTOCOL.md section (``"3"`` for ``"3. Text editor tool: Commands"``;
    empty for an unnumbered one)."""
    head = section.split(".", 1)[0].strip()
    return head if head.isdigit() else ""


def public_source(section: str, tag: str = "D") -> tuple[str, str | None]:
    """The public source of a PROTOCOL.md fact: (the section as a user reads it, its URL). A fact
    the docs state is on its page, an SDK fact in the SDK's code on GitHub; an inference or an
    undocumented fact has no public source (URL None): the project's notes carry its text."""
    for key in ((section, tag), (section, None)):
        if key in PUBLIC:
            return PUBLIC[key]
    part = protocol_part(section)
    name = section[len(part) + 1:].strip() if part else section
    if tag == "S":
        return name, SDK.replace("/blob/", "/tree/").rstrip("/")
    if tag in ("I", "?"):
        return name, None
    return name, PROTOCOL_PAGES.get(part)


def page_url(document: str, section: str, tag: str = "D") -> str | None:
    """The public page a citation points to (None for captures and for inferred facts)."""
    if document in PAGES:
        return PAGES[document][0]
    if document == PROTOCOL:
        return public_source(section, tag)[1]
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
            raise ValueError(f"unknown source document {self.document!r}; use one of the five "
                             "documentation files (simulator.sources.PAGES), PROTOCOL.md or "
                             "real_traffic")
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
        return page_url(self.document, self.section, self.tag)

    @property
    def section_en(self) -> str:
        """The section as a user reads it, in English (a PROTOCOL.md fact: its public source's)."""
        if self.document == PROTOCOL:
            return public_source(self.section, self.tag)[0]
        return english_section(self.document, self.section)

    def cite(self) -> str:
        """The citation as a user reads it: the section by its English name and the public page
        to open, ``Handle errors — https://platform.claude.com/docs/en/.../bash-tool (Korean:
        오류 처리하기)``; a PROTOCOL.md fact by its public source and the shipped notes that quote
        it (``… (text: docs/protocol-notes.md § 5)``); a capture by its id."""
        mark = "" if self.tag == "D" else f" [{self.tag}]"
        if self.document in PAGES:
            _, language, _ = PAGES[self.document]
            heading = self.section.removesuffix(f" ({self.section_en})")
            original = f" ({language}: {heading})" if heading != self.section_en else ""
            return f"{self.section_en} — {self.url}{original}{mark}"
        if self.document == PROTOCOL:
            name, url = public_source(self.section, self.tag)
            part = protocol_part(self.section)
            notes = f"{NOTES} § {part}" if part else NOTES
            if url:
                return f"{name} — {url} (text: {notes}){mark}"
            return f"{name} — {notes} (no public source){mark}"
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
