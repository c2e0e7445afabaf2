"""Seed 001's own text editor example, completed only with what the seed's prose asks.

The example code of seed 001 (``/work/shared/seeds/001_*.txt``), kept as it is written:

- ``handle_editor_tool`` ("Tangani panggilan tool editor"): dispatch on ``command`` and ``path``;
  ``undo_edit`` on Claude 4 (``str_replace_based_edit_tool``) answered with
  ``{"error": "perintah undo_edit tidak didukung di Claude 4"}``;
- ``backup_file`` ("Buat backup sebelum mengedit"): ``{file_path}.backup``, copied with
  ``open(file_path, 'r')`` / ``open(backup_path, 'w')``;
- ``safe_replace`` ("Tangani penggantian teks unik dengan hati-hati"): ``content.count(old_text)``,
  0 → "Error: Tidak ditemukan kecocokan", more than 1 → "Error: Ditemukan {count} kecocokan",
  else ``content.replace`` and write, "Berhasil mengganti teks"; files read and written in text
  mode (``open(file_path, 'r')`` / ``'w'``).

What the skeleton leaves as ``pass`` is completed from the prose, each addition with its sentence:

- view: "Baca dan kembalikan konten file" (read and return the file's content) and, for a
  directory, "mendaftar konten direktori" (list the directory's contents); line numbers as in the
  seed's own view result (``"1: def is_prime(n):"``, "Nomor baris"); ``view_range``: "Nomor baris
  dimulai dari 1, dan -1 untuk baris akhir berarti baca sampai akhir file" (lines start at 1, and
  -1 for the end means read to the end of the file).
- create: "Perintah create memungkinkan Claude untuk membuat file baru dengan konten yang
  ditentukan" (create a new file with the given content).
- insert: "insert_line: Nomor baris setelah mana teks akan disisipkan (0 untuk awal file)" (the
  line after which the text is inserted, 0 for the start of the file).
- undo_edit: "Pulihkan dari backup untuk Claude 3.7/3.5" (restore from the backup, the skeleton's
  comment): the backup is moved back into place, so a second undo finds none (one level).
- a backup before every change: "Buat backup sebelum membuat perubahan" (make a backup before
  making changes); a ``str_replace`` that changed nothing (an error) does not keep its backup.
- errors as a ``tool_result`` with ``is_error: true`` ("Tangani kesalahan": "kembalikan pesan
  kesalahan yang sesuai dalam tool_result", every example there carrying ``"is_error": true``);
  the sample's own texts ("Error: File tidak ditemukan", ...).
- "Validasi path file untuk mencegah directory traversal" (validate file paths to prevent
  directory traversal) and "Validasi semua input untuk mencegah perubahan yang tidak diinginkan"
  (validate all input): paths outside the working directory and malformed input are refused.
- paths as the seed's examples write them (``"primes.py"``, ``"src/"``): relative to the working
  directory; absolute ones as given.

Nothing else is added. The seed documents ``text_editor_20241022``, ``20250124`` and ``20250429``
only (``max_characters`` and ``insert_text`` of ``20250728`` are not in it), so this subject is
run on the versions it documents (:data:`Seed001Sample.TOOL_TYPES`).

What the example breaks by its own code (:data:`Seed001Sample.BREAKS`, named in docs/checks.md):
``open(file_path, 'r')`` reads with universal newlines, so every CRLF (and lone CR) of a file it
edits or backs up becomes LF, against "old_str: Teks yang akan diganti (harus cocok persis,
termasuk whitespace dan indentasi)" and "Ini digunakan untuk membuat pengeditan yang tepat" (it
is used to make precise edits): the file's other lines change. That is
``editor.bytes.crlf_preserved``, and on undo ``editor.undo_edit.restores_crlf``. And
``backup_file`` opens the backup for writing before it reads the file: on a file that is not
UTF-8 the read fails (the command is refused) and leaves an *empty* ``.backup``, which the next
``undo_edit`` "restores": the file is emptied although no edit was made, against "Perintah
undo_edit memungkinkan Claude untuk mengembalikan pengeditan terakhir yang dibuat pada file"
(revert the last edit made to the file). The model check finds it
(``editor.model.agrees_with_reference_model``: a planted ``b'\xfe'``, a refused edit, an undo).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from conformance.reference.editor import TextEditor
from simulator import registry

#: The seed's error texts ("Tangani kesalahan").
NOT_FOUND = "Error: File tidak ditemukan"


class _Refused(Exception):
    """An error answered as a tool_result with ``is_error: true``."""


def backup_file(file_path: str) -> None:
    """Buat backup file sebelum mengedit. (Seed 001, "Buat backup sebelum mengedit".)"""
    backup_path = f"{file_path}.backup"
    if os.path.exists(file_path):
        with open(file_path) as src, open(backup_path, "w") as dst:
            dst.write(src.read())


def safe_replace(file_path: str, old_text: str, new_text: str) -> str:
    """Ganti teks hanya jika ada tepat satu kecocokan. (Seed 001, "Tangani penggantian teks unik
    dengan hati-hati".)"""
    with open(file_path) as f:
        content = f.read()

    count = content.count(old_text)
    if count == 0:
        return "Error: Tidak ditemukan kecocokan"
    elif count > 1:
        return f"Error: Ditemukan {count} kecocokan"
    else:
        new_content = content.replace(old_text, new_text)
        with open(file_path, "w") as f:
            f.write(new_content)
        return "Berhasil mengganti teks"


class Seed001Sample(TextEditor):
    """Seed 001's ``handle_editor_tool`` with ``backup_file`` and ``safe_replace``, completed from
    the prose (see the module docstring)."""

    CONVENTION = "seed 001's own sample handler (text-mode files, one .backup level)"
    #: The versions seed 001 documents.
    TOOL_TYPES = ("text_editor_20250124", "text_editor_20250429")
    #: MUST checks the example's own code breaks, with the seed sentence it breaks.
    BREAKS = {
        "editor.bytes.crlf_preserved": "Ini digunakan untuk membuat pengeditan yang tepat.",
        "editor.undo_edit.restores_crlf": "Ini digunakan untuk membuat pengeditan yang tepat.",
        "editor.model.agrees_with_reference_model":
            "Perintah undo_edit memungkinkan Claude untuk mengembalikan pengeditan terakhir yang "
            "dibuat pada file.",
    }

    def __call__(self, tool_input: dict[str, Any]) -> dict[str, Any]:
        try:
            result = self.handle_editor_tool(tool_input, registry.TOOLS[self.tool_type].name)
        except _Refused as e:
            return {"content": str(e), "is_error": True}
        except FileNotFoundError:
            return {"content": NOT_FOUND, "is_error": True}
        except (OSError, UnicodeDecodeError) as e:
            return {"content": f"Error: {e}", "is_error": True}
        if isinstance(result, dict):  # the skeleton's {"error": ...} for undo_edit on Claude 4
            return {"content": f"Error: {result['error']}", "is_error": True}
        # "Tangani kesalahan": an error is a tool_result with is_error: true.
        return {"content": result, "is_error": result.startswith("Error")}

    # -- the seed's handle_editor_tool ---------------------------------------------------------

    def handle_editor_tool(self, input_params: dict[str, Any], model_version: str
                           ) -> str | dict[str, str]:
        if not isinstance(input_params, dict):
            raise _Refused("Error: input harus berupa objek")
        command = input_params.get('command', '')
        file_path = self._path(input_params.get('path', ''))

        if command == 'view':
            # Baca dan kembalikan konten file
            return self._view(file_path, input_params.get("view_range"))
        elif command == 'str_replace':
            # Ganti teks dalam file
            old, new = _text(input_params, "old_str"), _text(input_params, "new_str", "")
            self._existing_file(file_path)
            kept = _backup_of(file_path)
            backup_file(file_path)
            result = safe_replace(file_path, old, new)
            if result.startswith("Error"):  # no change made: the backup of it is not kept
                _put_back(file_path, kept)
            return result
        elif command == 'create':
            # Buat file baru
            file_text = _text(input_params, "file_text")
            if os.path.isdir(file_path):
                raise _Refused(f"Error: {file_path} adalah direktori")
            backup_file(file_path)
            with open(file_path, "w") as f:
                f.write(file_text)
            return f"File dibuat: {input_params['path']}"
        elif command == 'insert':
            # Sisipkan teks pada lokasi
            return self._insert(file_path, input_params.get("insert_line"),
                                _text(input_params, "new_str"))
        elif command == 'undo_edit':
            # Periksa apakah ini model Claude 4
            if 'str_replace_based_edit_tool' in model_version:
                return {"error": "perintah undo_edit tidak didukung di Claude 4"}
            # Pulihkan dari backup untuk Claude 3.7/3.5
            backup_path = f"{file_path}.backup"
            if not os.path.exists(backup_path):
                raise _Refused(f"Error: tidak ada backup untuk {input_params['path']}")
            os.replace(backup_path, file_path)
            return f"Pengeditan terakhir pada {input_params['path']} dibatalkan"
        raise _Refused(f"Error: perintah tidak dikenal: {command!r}")

    # -- the completions (each sentence in the module docstring) ---------------------------------

    def _path(self, raw: Any) -> str:
        if not isinstance(raw, str) or not raw or "\x00" in raw:
            raise _Refused("Error: path tidak valid")
        full = os.path.realpath(raw if os.path.isabs(raw) else os.path.join(self.root, raw))
        if full != str(self.root) and not full.startswith(str(self.root) + os.sep):
            raise _Refused(f"Error: {raw} berada di luar direktori kerja")
        return full

    def _existing_file(self, file_path: str) -> None:
        if not os.path.exists(file_path):
            raise FileNotFoundError(file_path)
        if not os.path.isfile(file_path):
            raise _Refused(f"Error: {file_path} bukan file")

    def _view(self, file_path: str, view_range: Any) -> str:
        if os.path.isdir(file_path):
            if view_range is not None:
                raise _Refused("Error: view_range hanya untuk file")
            return "\n".join(sorted(os.listdir(file_path)))
        self._existing_file(file_path)
        with open(file_path) as f:
            lines = f.read().split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        start, end = 1, len(lines)
        if view_range is not None:
            if (not isinstance(view_range, list) or len(view_range) != 2
                    or not all(type(x) is int for x in view_range)):
                raise _Refused("Error: view_range harus dua bilangan bulat")
            start, end = view_range
            end = len(lines) if end == -1 else end
            if not 1 <= start <= max(len(lines), 1) or not start <= end <= len(lines):
                raise _Refused(f"Error: view_range {view_range} di luar file")
        return "\n".join(f"{i}: {line}" for i, line in enumerate(lines[start - 1:end], start))

    def _insert(self, file_path: str, insert_line: Any, new_str: str) -> str:
        self._existing_file(file_path)
        with open(file_path) as f:
            content = f.read()
        lines = content.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        if type(insert_line) is not int or not 0 <= insert_line <= len(lines):
            raise _Refused(f"Error: insert_line tidak valid: {insert_line}")
        offset = sum(len(x) + 1 for x in lines[:insert_line])
        before, after = content[:offset], content[offset:]
        if before and not before.endswith("\n"):
            before += "\n"  # after the last line of a file without a final newline
        if after and not new_str.endswith("\n"):
            new_str += "\n"
        backup_file(file_path)
        with open(file_path, "w") as f:
            f.write(before + new_str + after)
        return f"Teks disisipkan setelah baris {insert_line}"


def _backup_of(file_path: str) -> bytes | None:
    try:
        return Path(f"{file_path}.backup").read_bytes()
    except OSError:
        return None


def _put_back(file_path: str, kept: bytes | None) -> None:
    """The backup as it was before a command that changed nothing ("Buat backup sebelum membuat
    perubahan": a backup is made before a *change*)."""
    backup = Path(f"{file_path}.backup")
    if kept is None:
        backup.unlink(missing_ok=True)
    else:
        backup.write_bytes(kept)


def _text(tool_input: dict[str, Any], name: str, default: str | None = None) -> str:
    value = tool_input.get(name, default)
    if not isinstance(value, str):
        raise _Refused(f"Error: parameter `{name}` wajib berupa string")
    return value
