#!/usr/bin/env bash
# Builds the "user repository" of user-repo.sh, then puts it in one of the awkward states a publish
# must cope with (fixtures-repos/README.md):
#
#   detached              HEAD detached at the current commit (staged/unstaged changes kept)
#   no-remote             origin removed: there is nowhere to push
#   results-checked-out   the user switched their worktree to agentv/results/v1 (publish must refuse)
#   results-in-worktree   a linked worktree <dir>/results-wt has agentv/results/v1 checked out
#   remote-url <url>      origin's URL replaced by <url> (a git daemon, an HTTP server, a dead port)
#
# Usage: fixtures-repos/user-repo-variant.sh <dir> <variant> [url]
# Deterministic and independent of your global git config, like user-repo.sh.
set -euo pipefail

if [ $# -lt 2 ]; then
  echo "usage: $0 <dir> <variant> [url]" >&2
  exit 2
fi
dir=$1
variant=$2
here=$(cd "$(dirname "$0")" && pwd)
bash "$here/user-repo.sh" "$dir"
dir=$(cd "$dir" && pwd)

# shellcheck source=git-env.sh
. "$here/git-env.sh"

cd "$dir/user"
case "$variant" in
  detached)
    git checkout -q --detach
    ;;
  no-remote)
    git remote remove origin
    ;;
  results-checked-out)
    # Staged and unstaged changes move along with the switch, as they would for a user.
    git checkout -q -b agentv/results/v1
    ;;
  results-in-worktree)
    git worktree add -q -b agentv/results/v1 "$dir/results-wt"
    ;;
  remote-url)
    if [ $# -ne 3 ]; then
      echo "$0: remote-url needs the URL" >&2
      exit 2
    fi
    git remote set-url origin "$3"
    ;;
  *)
    echo "$0: unknown variant $variant" >&2
    exit 2
    ;;
esac
