#!/usr/bin/env bash
# `make lint` and CI: every commit after the recorded base has a subject under 72 characters and,
# when it has a body (the why), a blank line between the two, so `git log --oneline` stays a list.
#   bash scripts/check-commits.sh [BASE]     (default: the commit in scripts/commit-base)
# The history before the base was written without the rule (subjects of hundreds of characters);
# rewriting it would change every commit id, so the rule starts at the base, which is recorded
# once and never moved. Merge commits are left out: git writes their subjects.
# Where the base is not in the history (a shallow clone), only HEAD is checked, and it says so;
# outside a git checkout (an unpacked archive) there is nothing to check.
set -euo pipefail
cd "$(dirname "$0")/.."
MAX=71
base="${1:-$(tr -d '[:space:]' <scripts/commit-base)}"
if ! git rev-parse --git-dir >/dev/null 2>&1; then
  echo "check-commits: not a git checkout, nothing to check"
  exit 0
fi
if git cat-file -e "${base}^{commit}" 2>/dev/null; then
  range=("${base}..HEAD")
  what="after ${base:0:12}"
else
  echo "check-commits: base ${base:0:12} is not in this history (a shallow clone?): checking HEAD only"
  range=(-1 HEAD)
  what="at HEAD"
fi
bad=0
while IFS= read -r commit; do
  subject="$(git log -1 --format=%s "$commit")"
  second="$(git log -1 --format=%B "$commit" | sed -n 2p)"
  if [ "${#subject}" -gt "$MAX" ]; then
    echo "${commit:0:12}: subject of ${#subject} characters (at most $MAX): ${subject:0:80}..."
    bad=1
  fi
  if [ -n "$second" ]; then
    echo "${commit:0:12}: no blank line between the subject and the body: $subject"
    bad=1
  fi
done < <(git rev-list --no-merges "${range[@]}")
if [ "$bad" -ne 0 ]; then
  echo "check-commits: reword these (git rebase -i) before they land; the why goes in the body"
  exit 1
fi
echo "check-commits: $(git rev-list --no-merges --count "${range[@]}") commit(s) $what: fine"
