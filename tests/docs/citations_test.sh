#!/usr/bin/env bash
# Citations a reader can follow (issue 9 item 7): every tracked file may cite only documents
# that are in this repository or public sources.
#   1. No file names a note that lives outside the repository (the project's working notes:
#      the names are assembled below so this script does not cite them itself).
#   2. Every `docs/...` path a file cites exists (a trailing #anchor or punctuation is
#      ignored; a path ending in / must be a directory).
#   3. Every relative Markdown link in a .md file resolves.
# Usage: citations_test.sh REPO_ROOT
set -euo pipefail
root=${1:?usage: citations_test.sh REPO_ROOT}
cd "$root"

# The fuzz corpora (nicsim/*/fuzz_corpus/) are machine-mutated inputs, not text anyone reads:
# their broken "docs/..." fragments are what a fuzzer makes of a comment.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files | grep -vE '^(build[^/]*|third_party)/|/fuzz_corpus/')
else
  mapfile -t files < <(find . -type f -not -path './.git/*' -not -path './build*' \
    -not -path '*/fuzz_corpus/*' | sed 's|^\./||')
fi

status=0
fail() {
  echo "$1" >&2
  status=1
}

# 1. Notes outside the repository.
outside=(
  "driver""-mechanisms"
  "DESIGN""\\.md"
  "wave2""-references"
  "tool""-anchors"
  "style""-anchors"
  "\\.\\./sh""ared/"
  "/work/""shared"
  "sh""ared/docs"
)
pattern=$(IFS='|'; echo "${outside[*]}")
while IFS= read -r hit; do
  fail "$hit: cites a document that is not in this repository (cite docs/mechanisms/ or the public source)"
done < <(grep -nIE "$pattern" -- "${files[@]}" 2>/dev/null || true)

# 2. docs/ paths.
while IFS=: read -r file line path; do
  path=${path%%#*}
  while [[ "$path" =~ [.,\;:\)\`\'\"]$ ]]; do path=${path%?}; done
  [[ -z "$path" || "$path" == "docs/" ]] && continue
  if [[ "$path" == */ ]]; then
    [[ -d "$path" ]] || fail "$file:$line: cites $path, which is not a directory in the repository"
  elif [[ "$path" == *'*'* ]]; then
    compgen -G "$path" >/dev/null || fail "$file:$line: cites $path, which matches no file"
  elif [[ ! -e "$path" ]]; then
    fail "$file:$line: cites $path, which does not exist"
  fi
done < <(grep -noIE '(^|[^A-Za-z0-9_./-])docs/[A-Za-z0-9_./*#-]*' -- "${files[@]}" 2>/dev/null |
           sed -E 's/^([^:]*):([0-9]+):[^d]*(docs\/.*)$/\1:\2:\3/' || true)

# 3. Relative Markdown links.
md_files=()
for file in "${files[@]}"; do
  if [[ "$file" == *.md ]]; then md_files+=("$file"); fi
done
while IFS=: read -r file line target; do
  target=${target%%#*}
  [[ -z "$target" || "$target" =~ ^([a-z]+:|/) ]] && continue
  dir=.
  [[ "$file" == */* ]] && dir=${file%/*}
  [[ -e "$dir/$target" ]] || fail "$file:$line: links to $target, which does not exist"
done < <( ((${#md_files[@]})) && grep -noE '\]\([^)[:space:]]+\)' -- "${md_files[@]}" |
           sed -E 's/^([^:]*):([0-9]+):\]\((.*)\)$/\1:\2:\3/' || true)

if ((status == 0)); then
  echo "citations: ${#files[@]} tracked files, every cited document is in the repository"
fi
exit $status
