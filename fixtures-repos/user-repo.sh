#!/usr/bin/env bash
# Builds the "user repository" the git-layer tests publish into, plus its remote:
#
#   <dir>/remote.git  bare repository, receive.denyNonFastForwards=true (nothing may be force-pushed)
#   <dir>/user        non-bare repository on branch main, one commit pushed to origin (= remote.git),
#                     then left "mid-work": a stash entry, a staged change, an unstaged change and an
#                     untracked file. agentv-results must leave all of that byte-identical.
#
# Usage: fixtures-repos/user-repo.sh <dir>     (<dir> is created; it must not contain user/ or remote.git/)
# Deterministic: fixed identity and dates; independent of your global git config.
set -euo pipefail

if [ $# -ne 1 ]; then
  echo "usage: $0 <dir>" >&2
  exit 2
fi
dir=$1
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
if [ -e "$dir/user" ] || [ -e "$dir/remote.git" ]; then
  echo "$0: $dir/user or $dir/remote.git already exists" >&2
  exit 2
fi

# Never read the machine's or the person's git config; never prompt.
# shellcheck source=git-env.sh
. "$(cd "$(dirname "$0")" && pwd)/git-env.sh"

git init -q --bare -b main "$dir/remote.git"
git -C "$dir/remote.git" config receive.denyNonFastForwards true

git init -q -b main "$dir/user"
cd "$dir/user"
printf '# demo project\n' > README.md
mkdir -p src
printf 'console.log("hello");\n' > src/app.js
printf 'node_modules/\n' > .gitignore
git add README.md src/app.js .gitignore
git commit -q -m 'initial commit'
git remote add origin "$dir/remote.git"
git push -q -u origin main

# A stash entry (stash list is part of what must stay untouched).
printf 'stashed experiment\n' >> src/app.js
git stash push -q -m 'fixture: stashed experiment'

# Staged change, unstaged change, untracked file.
printf 'staged notes\n' > STAGED.md
git add STAGED.md
printf 'console.log("unstaged edit");\n' >> src/app.js
printf 'scratch\n' > untracked.txt
