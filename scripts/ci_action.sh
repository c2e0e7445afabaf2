#!/usr/bin/env bash
# The logic of the GitHub Action (action.yml at the repository root), runnable anywhere:
# installs the suite, runs `tooluse run` against one subject, appends the Markdown report to the
# job summary. action.yml only sets up Python, calls this script with its inputs as environment
# variables and uploads the reports directory; tests/test_action.py runs this same script.
#
# Inputs (environment):
#   TOOLUSE_SUBJECT            required: a `module:attr` factory (or path/to/file.py:attr, or a
#                              bundled reference subject such as reference-bash), or a command
#                              line that starts the tool (any language)
#   TOOLUSE_TOOL_TYPE          required: the tool type the subject implements (bash_20250124,
#                              text_editor_20250728, ...); bash_* is a bash tool, text_editor_* an
#                              editor
#   TOOLUSE_SUBJECT_KIND       auto (default) | factory | command
#   TOOLUSE_NAME               the subject's label in the reports (optional)
#   TOOLUSE_EXPECTED_FAILURES  a baseline file of known failures (optional)
#   TOOLUSE_STRICT             true | false (default): SHOULD checks count like MUST ones
#   TOOLUSE_OUT                the reports directory (default tooluse-reports)
#   TOOLUSE_SHARD              K/N: run only the K-th of N shards (`tooluse run --shard K/N`);
#                              join the shards' reports with `tooluse run merge` (docs/ci.md)
#   TOOLUSE_HISTORY            a results.json whose durations balance the shards (optional)
#   TOOLUSE_ARGS               more `tooluse run` arguments, split on spaces (e.g. --timeout 10)
#   TOOLUSE_PIP_ARGS           more `pip install` arguments, split on spaces (e.g. `-e .` for the
#                              package under test, or its requirements)
#   TOOLUSE_SUITE              what to install the suite from (default: the directory holding
#                              this script's checkout: the action's own copy); a wheel or a git URL
#   TOOLUSE_INSTALL            1 (default) | 0: 0 uses the `tooluse` already on PATH
#   TOOLUSE_PYTHON             the interpreter to install into (default: python3, else python)
#   GITHUB_STEP_SUMMARY        set by GitHub: report.md is appended to it (skipped when unset)
#   GITHUB_OUTPUT              set by GitHub: `status` and `reports` outputs (skipped when unset)
#
# Exit status: the run's (0 pass, 1 failures or an incomplete run, 2 usage errors); 2 as well when
# an input is invalid or the installation fails.
set -uo pipefail

fail_usage() {
  echo "tooluse action: error: $*" >&2
  if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
    printf '### tooluse conformance: not run\n\n%s\n' "$*" >>"$GITHUB_STEP_SUMMARY"
  fi
  if [ -n "${GITHUB_OUTPUT:-}" ]; then
    echo "status=2" >>"$GITHUB_OUTPUT"
  fi
  exit 2
}

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
subject="${TOOLUSE_SUBJECT:-}"
tool_type="${TOOLUSE_TOOL_TYPE:-}"
kind="${TOOLUSE_SUBJECT_KIND:-auto}"
strict="${TOOLUSE_STRICT:-false}"
out="${TOOLUSE_OUT:-tooluse-reports}"
suite="${TOOLUSE_SUITE:-$(dirname "$here")}"

[ -n "$subject" ] || fail_usage "the subject input is empty: give a module:attr factory or a command"
case "$tool_type" in
  bash_*) family=bash ;;
  text_editor_*) family=editor ;;
  "") fail_usage "the tool-type input is empty: give the tool type the subject implements, e.g. bash_20250124 or text_editor_20250728" ;;
  *) fail_usage "tool-type '$tool_type' is neither a bash_* nor a text_editor_* tool type" ;;
esac
case "$strict" in
  true | false) ;;
  *) fail_usage "strict is '$strict'; use true or false" ;;
esac
if [ "$kind" = auto ]; then
  # A factory is one word: module.path:attr, path/to/file.py:attr, or a reference subject's name.
  if [[ "$subject" =~ ^[A-Za-z_][A-Za-z0-9_.]*:[A-Za-z_][A-Za-z0-9_]*$ ]] ||
     [[ "$subject" =~ ^[^[:space:]]+\.py:[A-Za-z_][A-Za-z0-9_]*$ ]] ||
     [[ "$subject" =~ ^reference-[a-z0-9-]+$ ]]; then
    kind=factory
  else
    kind=command
  fi
fi
case "$kind" in
  factory) subject_args=("--$family" "$subject") ;;
  command) subject_args=("--$family-cmd" "$subject") ;;
  *) fail_usage "subject-kind is '$kind'; use auto, factory or command" ;;
esac
if [ -n "${TOOLUSE_SHARD:-}" ] && ! [[ "$TOOLUSE_SHARD" =~ ^[0-9]+/[0-9]+$ ]]; then
  fail_usage "shard is '$TOOLUSE_SHARD'; give K/N, e.g. 1/2"
fi
if [ -n "${TOOLUSE_EXPECTED_FAILURES:-}" ] && [ ! -f "$TOOLUSE_EXPECTED_FAILURES" ]; then
  fail_usage "expected-failures file '$TOOLUSE_EXPECTED_FAILURES' not found"
fi

if [ "${TOOLUSE_INSTALL:-1}" != 0 ]; then
  python="${TOOLUSE_PYTHON:-$(command -v python3 || command -v python)}"
  set -f  # the pip arguments are split on spaces, never globbed
  # shellcheck disable=SC2086
  "$python" -m pip install --disable-pip-version-check "$suite" ${TOOLUSE_PIP_ARGS:-} ||
    fail_usage "installing the suite from '$suite' failed (pip's output above)"
  set +f
  PATH="$(dirname "$python"):$PATH"  # the tooluse script next to that interpreter
fi
command -v tooluse >/dev/null || fail_usage "no tooluse command on PATH after installation"

argv=(run "${subject_args[@]}" "--$family-type" "$tool_type" --out "$out")
[ -n "${TOOLUSE_NAME:-}" ] && argv+=(--name "$TOOLUSE_NAME")
[ -n "${TOOLUSE_EXPECTED_FAILURES:-}" ] && argv+=(--expected-failures "$TOOLUSE_EXPECTED_FAILURES")
[ "$strict" = true ] && argv+=(--strict)
[ -n "${TOOLUSE_SHARD:-}" ] && argv+=(--shard "$TOOLUSE_SHARD")
[ -n "${TOOLUSE_HISTORY:-}" ] && argv+=(--history "$TOOLUSE_HISTORY")
set -f
# shellcheck disable=SC2206
extra=(${TOOLUSE_ARGS:-})
set +f
argv+=("${extra[@]}")

echo "tooluse action: tooluse ${argv[*]}"
tooluse "${argv[@]}"
status=$?

if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
  if [ -f "$out/report.md" ]; then
    cat "$out/report.md" >>"$GITHUB_STEP_SUMMARY"
  else
    printf '### tooluse conformance: no report (exit %s)\n\nSee the step log.\n' "$status" \
      >>"$GITHUB_STEP_SUMMARY"
  fi
fi
if [ -n "${GITHUB_OUTPUT:-}" ]; then
  {
    echo "status=$status"
    echo "reports=$out"
  } >>"$GITHUB_OUTPUT"
fi
exit "$status"
