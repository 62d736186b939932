# Sourced by the fixture scripts: never read the machine's or the person's git config, never
# prompt, and make every commit deterministic (fixed identity and dates).
export GIT_CONFIG_NOSYSTEM=1
# The global config is an empty file of the fixture's own (the scripts set $dir before sourcing
# this), never /dev/null: a machine whose /dev/null was damaged must not break every fixture.
: > "${dir:?git-env.sh is sourced once \$dir is set}/.gitconfig-empty"
export GIT_CONFIG_GLOBAL="$dir/.gitconfig-empty"
export GIT_TERMINAL_PROMPT=0
export GIT_AUTHOR_NAME='Fixture User' GIT_AUTHOR_EMAIL='user@example.invalid'
export GIT_COMMITTER_NAME='Fixture User' GIT_COMMITTER_EMAIL='user@example.invalid'
export GIT_AUTHOR_DATE='2026-01-01T00:00:00Z' GIT_COMMITTER_DATE='2026-01-01T00:00:00Z'
unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE GIT_OBJECT_DIRECTORY GIT_ALTERNATE_OBJECT_DIRECTORIES GIT_NAMESPACE GIT_COMMON_DIR
