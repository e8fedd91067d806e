#!/usr/bin/env bash
# The action's second step: `crashlens ci` with GitHub annotations (which also fill the job summary)
# and the report files asked for; their paths go to the step's outputs. The exit code is crashlens's.
set -euo pipefail
bin="${CRASHLENS_BIN:-crashlens}"
out_dir="${INPUT_OUTPUT_DIR:-}"
[ -n "$out_dir" ] || out_dir="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/crashlens"
case "$out_dir" in *$'\n'*) echo "::error title=crashlens::output-dir holds a line break"; exit 2 ;; esac
mkdir -p "$out_dir"

set -f  # globs are crashlens's to expand (recursively, ** included), not the shell's
args=(ci -f github)
for p in ${INPUT_PATHS:-}; do args+=("$p"); done
declare -A written=()
for fmt in ${INPUT_FORMATS//,/ }; do
  case "$fmt" in
    sarif) file=crashlens.sarif ;;
    junit) file=crashlens-junit.xml ;;
    gitlab) file=gl-code-quality-report.json ;;
    markdown) file=crashlens.md ;;
    json) file=crashlens.json ;;
    github) continue ;;  # always on: the annotations and the job summary
    *) echo "::error title=crashlens::formats: '$fmt' is not one of sarif, junit, gitlab, markdown, json"; exit 2 ;;
  esac
  args+=(-f "$fmt" -o "$out_dir/$file")
  written[$fmt]="$out_dir/$file"
done
args+=(--fail-on "${INPUT_FAIL_ON:-fatal}")
[ -z "${INPUT_REPO_ROOT:-}" ] || args+=(--repo-root "$INPUT_REPO_ROOT")
while IFS= read -r m; do [ -z "$m" ] || args+=(--path-map "$m"); done <<< "${INPUT_PATH_MAP:-}"
while IFS= read -r d; do [ -z "$d" ] || args+=(--signatures "$d"); done <<< "${INPUT_SIGNATURES:-}"
set +f

rc=0
"$bin" "${args[@]}" || rc=$?
{
  echo "exit-code=$rc"
  echo "report-dir=$out_dir"
  echo "sarif=${written[sarif]:-}"
  echo "junit=${written[junit]:-}"
} >> "${GITHUB_OUTPUT:?GITHUB_OUTPUT is not set}"
exit "$rc"
