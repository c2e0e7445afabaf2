// A text editor tool (text_editor_20250728, named str_replace_based_edit_tool): the text editor
// tool docs' own sample handler, completed and fixed only where the docs' prose asks, in Node with
// its standard library only. Run by the suite as an out-of-process subject:
//   tooluse run --editor-cmd "node editor_tool.mjs" --editor-type text_editor_20250728
// (`tooluse init editor --lang node` writes it). Protocol (the suite's command subjects): one JSON
// tool input per line on stdin, one JSON result ({"content", "is_error"}) per line on stdout.
//
// Public page: https://platform.claude.com/docs/en/agents-and-tools/tool-use/text-editor-tool
//
// Kept from the docs' sample (handle_editor_tool, "Handle editor tool calls"): dispatch on
// command and path; view reads and returns the file's content (numbered lines, "1: def
// is_prime(n):" as in the docs' example, "Line numbers") or lists a directory; create writes
// file_text; str_replace is the docs' safe_replace ("Handle unique text replacement carefully":
// no match and several matches are errors, exactly one is replaced); insert puts the text after
// insert_line (0 for the start of the file); undo_edit is refused on this version ("This version
// removes the `undo_edit` command but keeps every other capability", Changelog). Errors are tool
// results with is_error: true and the docs' example texts ("Handle errors").
//
// Fixed, each where the docs' prose asks it (the Python starter, editor_tool.py, says the same):
// [1] bytes, not text: files are read and written as Buffers, old_str/new_str matched and written
//     as their UTF-8 bytes, so CRLF, tabs, a missing final newline and bytes that are not UTF-8
//     stay as they were ("old_str: The text to replace (must match exactly, including whitespace
//     and indentation)"; "It is used to make precise edits"); view shows invalid bytes as U+FFFD;
// [2] exactly one match means one location: overlapping matches are counted ("Your application
//     must make sure that there is exactly one match for the old text, or give an appropriate
//     error message"); an empty old_str is refused;
// [3] no backup files: the sample's backup_file serves undo_edit, which this version does not have;
// [4] validation ("Validate all input to prevent unintended changes"; "Validate file paths to
//     prevent directory traversal"): bad fields, unknown commands, ranges and lines outside the
//     file, and paths outside the working directory are refused, nothing changed; no shell;
// [5] max_characters: "your handler truncates view output to that length";
// [6] create makes missing parent directories; insert reads insert_text (new_str too).
// Harness plumbing, not behaviour: TOOLUSE_WORKDIR is the working directory, and
// TOOLUSE_MAX_CHARACTERS the tool definition's max_characters.
import { mkdirSync, readFileSync, readdirSync, realpathSync, statSync, writeFileSync }
  from "node:fs";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { createInterface } from "node:readline";

const TOOL_TYPE = "text_editor_20250728";
const COMMANDS = ["view", "create", "str_replace", "insert"];
const FILE_NOT_FOUND = "Error: File not found";
const NO_MATCH = "Error: No match found for replacement. Please check your text and try again.";
const REPLACED = "Successfully replaced text at exactly one location.";
const LISTING_DEPTH = 2;
const NL = 0x0a;

const root = realpathSync(process.env.TOOLUSE_WORKDIR ?? process.cwd());
const maxCharacters = process.env.TOOLUSE_MAX_CHARACTERS
  ? Number(process.env.TOOLUSE_MAX_CHARACTERS) : null;

class Refused extends Error {}

// The real path of a path that may not exist yet: its deepest existing ancestor resolved.
function realPath(path) {
  let missing = "";
  let at = path;
  for (;;) {
    try {
      return join(realpathSync(at), missing);
    } catch {
      const parent = dirname(at);
      if (parent === at) return path;
      missing = join(at.slice(parent.length + (parent.endsWith(sep) ? 0 : 1)), missing);
      at = parent;
    }
  }
}

// [4] A path inside the working directory (relative ones taken against it).
function resolvePath(raw) {
  if (typeof raw !== "string" || !raw || raw.includes("\0")) {
    throw new Refused("Error: The `path` parameter is required: the file or directory to work " +
      "on, inside the working directory.");
  }
  const path = realPath(resolve(isAbsolute(raw) ? raw : join(root, raw)));
  if (path !== root && !path.startsWith(root + sep)) {
    throw new Refused(`Error: The path ${raw} is outside the working directory ${root}.`);
  }
  return path;
}

function isDir(path) {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function textField(input, name, fallback) {
  const value = input[name] ?? fallback;
  if (typeof value !== "string") {
    throw new Refused(`Error: The \`${name}\` parameter is required and must be a string.`);
  }
  return value;
}

function readFile(path) {
  if (isDir(path)) throw new Refused(`Error: ${path} is a directory; this command needs a file.`);
  return readFileSync(path); // ENOENT -> "Error: File not found"
}

// Lines with their terminators; a line ends only at "\n" ("\r\n" keeps its "\r").
function splitLines(content) {
  const lines = [];
  let start = 0;
  for (let at = content.indexOf(NL); at !== -1; at = content.indexOf(NL, start)) {
    lines.push(content.subarray(start, at + 1));
    start = at + 1;
  }
  if (start < content.length) lines.push(content.subarray(start));
  return lines;
}

function endsWithNewline(buffer) {
  return buffer.length > 0 && buffer[buffer.length - 1] === NL;
}

// [5] view output cut to max_characters, saying so.
function truncate(text) {
  if (maxCharacters === null || text.length <= maxCharacters) return text;
  return `${text.slice(0, maxCharacters)}\n<response clipped: view output truncated to ` +
    `${maxCharacters} characters; use view_range to see the rest>`;
}

// [4] [start, end]: 1-based, both ends included, end -1 for the end of the file.
function checkRange(viewRange, n) {
  if (!Array.isArray(viewRange) || viewRange.length !== 2 ||
      !viewRange.every((x) => Number.isInteger(x))) {
    throw new Refused("Error: `view_range` must be two integers [start, end]: 1-based line " +
      "numbers, end -1 for the end of the file.");
  }
  const [start, end] = viewRange;
  if (start < 1 || start > Math.max(n, 1)) {
    throw new Refused(`Error: Invalid \`view_range\` [${viewRange}]: the first line must be ` +
      `between 1 and ${n}.`);
  }
  if (end === -1) return [start, n];
  if (end < start || end > n) {
    throw new Refused(`Error: Invalid \`view_range\` [${viewRange}]: the last line must be ` +
      `between ${start} and ${n}, or -1 for the end of the file.`);
  }
  return [start, end];
}

// The files and directories up to two levels deep, hidden ones left out (never a shell).
function listDirectory(dir, shownAs) {
  const entries = [];
  const walk = (at, depth) => {
    let children;
    try {
      children = readdirSync(at, { withFileTypes: true });
    } catch {
      return;
    }
    children.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of children) {
      if (entry.name.startsWith(".")) continue;
      const full = join(at, entry.name);
      const shown = `${shownAs.replace(/\/+$/, "")}/${relative(dir, full)}`;
      entries.push(entry.isDirectory() ? `${shown}/` : shown);
      if (entry.isDirectory() && depth < LISTING_DEPTH) walk(full, depth + 1);
    }
  };
  walk(dir, 1);
  return [`Files and directories up to ${LISTING_DEPTH} levels deep in ${shownAs}, hidden ` +
    "items excluded:", ...entries].join("\n");
}

function view(path, raw, viewRange) {
  if (isDir(path)) {
    if (viewRange !== undefined && viewRange !== null) {
      throw new Refused("Error: `view_range` is not allowed when `path` is a directory.");
    }
    return truncate(listDirectory(path, raw));
  }
  const lines = splitLines(readFile(path));
  let [first, last] = [1, lines.length];
  if (viewRange !== undefined && viewRange !== null) [first, last] = checkRange(viewRange, lines.length);
  const numbered = lines.slice(first - 1, last).map((line, i) => {
    const body = endsWithNewline(line) ? line.subarray(0, line.length - 1) : line;
    return `${first + i}: ${body.toString("utf8")}`; // [1] invalid bytes shown as U+FFFD
  });
  return truncate(numbered.join("\n"));
}

function create(path, raw, fileText) {
  if (isDir(path)) throw new Refused(`Error: ${raw} is a directory; create needs a file path.`);
  mkdirSync(dirname(path), { recursive: true }); // [6]
  writeFileSync(path, Buffer.from(fileText, "utf8"));
  return `File created successfully at: ${raw}`;
}

// The docs' safe_replace, on bytes [1], counting every location [2].
function strReplace(path, oldStr, newStr) {
  const content = readFile(path);
  const old = Buffer.from(oldStr, "utf8");
  if (old.length === 0) throw new Refused("Error: `old_str` is empty; give the exact text to replace.");
  const first = content.indexOf(old);
  let count = 0;
  for (let at = first; at !== -1; at = content.indexOf(old, at + 1)) count += 1;
  if (count === 0) throw new Refused(NO_MATCH);
  if (count > 1) {
    throw new Refused(`Error: Found ${count} matches for replacement text. Please provide more ` +
      "context to make a unique match.");
  }
  writeFileSync(path, Buffer.concat([content.subarray(0, first), Buffer.from(newStr, "utf8"),
    content.subarray(first + old.length)]));
  return REPLACED;
}

// text as whole lines after line `line`; every other byte kept; a needed terminator is the
// file's own ("\r\n" in a CRLF file) [1].
function insert(path, raw, insertLine, text) {
  const content = readFile(path);
  const lines = splitLines(content);
  if (!Number.isInteger(insertLine) || insertLine < 0 || insertLine > lines.length) {
    throw new Refused(`Error: Invalid \`insert_line\` ${JSON.stringify(insertLine)}: the file ` +
      `has ${lines.length} lines, so it must be between 0 and ${lines.length}.`);
  }
  const firstLine = lines[0] ?? Buffer.alloc(0);
  const crlf = firstLine.length > 1 && firstLine[firstLine.length - 2] === 0x0d &&
    endsWithNewline(firstLine);
  const eol = Buffer.from(crlf ? "\r\n" : "\n");
  const offset = lines.slice(0, insertLine).reduce((n, line) => n + line.length, 0);
  let before = content.subarray(0, offset);
  const after = content.subarray(offset);
  let added = Buffer.from(text, "utf8");
  if (before.length && !endsWithNewline(before)) { // after the last line of a file without one
    before = Buffer.concat([before, eol]);
    if (endsWithNewline(added) && !after.length) { // the file still ends as it did
      const cut = added.length > 1 && added[added.length - 2] === 0x0d ? 2 : 1;
      added = added.subarray(0, added.length - cut);
    }
  } else if (after.length && !endsWithNewline(added)) {
    added = Buffer.concat([added, eol]);
  }
  writeFileSync(path, Buffer.concat([before, added, after]));
  return `Text inserted after line ${insertLine} of ${raw}.`;
}

// The docs' handle_editor_tool.
function handleEditorTool(input) {
  if (input === null || typeof input !== "object" || Array.isArray(input)) {
    throw new Refused("Error: The tool input must be a JSON object with a `command`.");
  }
  const command = input.command;
  if (command === "undo_edit") {
    throw new Refused(`Error: undo_edit is not supported by ${TOOL_TYPE} (removed in ` +
      `text_editor_20250429). Allowed commands: ${COMMANDS.join(", ")}.`);
  }
  if (!COMMANDS.includes(command)) {
    throw new Refused(`Error: Unknown command ${JSON.stringify(command)}. Allowed commands: ` +
      `${COMMANDS.join(", ")}.`);
  }
  const raw = input.path;
  const path = resolvePath(raw);
  if (command === "view") return view(path, raw, input.view_range);
  if (command === "create") return create(path, raw, textField(input, "file_text"));
  if (command === "str_replace") {
    return strReplace(path, textField(input, "old_str"), textField(input, "new_str", ""));
  }
  const name = "insert_text" in input ? "insert_text" : "new_str";
  return insert(path, raw, input.insert_line, textField(input, name));
}

function handle(input) {
  try {
    return { content: handleEditorTool(input), is_error: false };
  } catch (e) {
    if (e instanceof Refused) return { content: e.message, is_error: true };
    if (e && e.code === "ENOENT") return { content: FILE_NOT_FOUND, is_error: true };
    if (e && (e.code === "EACCES" || e.code === "EPERM")) {
      return { content: "Error: Permission denied. Cannot write to file.", is_error: true };
    }
    return { content: `Error: ${e && e.message ? e.message : e}`, is_error: true };
  }
}

const requests = createInterface({ input: process.stdin });
requests.on("line", (line) => {
  if (!line.trim()) return;
  let result;
  try {
    result = handle(JSON.parse(line));
  } catch (e) {
    result = { content: `Error: the tool input is not JSON: ${e}`, is_error: true };
  }
  process.stdout.write(JSON.stringify(result) + "\n");
});
requests.on("close", () => process.exit(0));
