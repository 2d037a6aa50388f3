#!/usr/bin/env bash
# Apply stamp-initiator.patch to ext-apps at a tag and run ext-apps' own tests.
#
#   upstream/ext-apps/run.sh [EXT_APPS_GIT_DIR] [TAG]
#
# EXT_APPS_GIT_DIR: a git checkout (or bare mirror) of
#   modelcontextprotocol/ext-apps; default: the mirror `fetch` would create,
#   /work/.mirror/modelcontextprotocol+ext-apps/repo.
# TAG: default v2.0.4 (the published @modelcontextprotocol/ext-apps 2.0.4).
# TEST_CMD: the test command, default `npm test` (= `bun test src examples`,
#   as ext-apps' CI runs it after `npm install`/`npm run build`).
#
# The tag's tree is exported with `git archive` into a temporary directory
# (the checkout is not touched), the patch is applied with `git apply`,
# dependencies come from the npm registry (`npm ci`, which also runs the
# package's `prepare` = build), then TEST_CMD runs. Exits non-zero when the
# tag is missing, the patch does not apply, or a test fails.
# Not run in CI. KEEP=1 keeps the temporary tree.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
patch="$here/stamp-initiator.patch"
repo=${1:-/work/.mirror/modelcontextprotocol+ext-apps/repo}
tag=${2:-v2.0.4}
test_cmd=${TEST_CMD:-npm test}

die() { echo "run.sh: $*" >&2; exit 2; }

git -C "$repo" rev-parse --git-dir >/dev/null 2>&1 || die "not a git repository: $repo"
commit=$(git -C "$repo" rev-parse --verify --quiet "$tag^{commit}") \
  || die "no tag or commit '$tag' in $repo"

work=$(mktemp -d "${TMPDIR:-/tmp}/ext-apps-stamp.XXXXXX")
if [ "${KEEP:-0}" = 1 ]; then
  echo "run.sh: keeping $work"
else
  trap 'rm -rf "$work"' EXIT
fi

echo "run.sh: $repo $tag = $commit"
git -C "$repo" archive --format=tar "$commit" | tar -x -C "$work"
cd "$work"
version=$(node -p 'require("./package.json").version')
echo "run.sh: package.json version $version"

# git apply wants a repository to resolve paths against; the tree gets its own.
git init -q .
git apply --check "$patch" || { echo "run.sh: the patch does not apply at $tag" >&2; exit 1; }
git apply "$patch"
echo "run.sh: patch applied:"
git apply --stat "$patch"

if [ -f package-lock.json ]; then
  npm ci --no-audit --no-fund
else
  npm install --no-audit --no-fund
fi

# ext-apps' scripts call bun; it is a devDependency (node_modules/.bin/bun).
# Fall back to BUN, or to the one this repository installs.
export PATH="$work/node_modules/.bin:$PATH"
if ! command -v bun >/dev/null 2>&1; then
  for b in "${BUN:-}" /work/main/node_modules/.bin/bun; do
    if [ -n "$b" ] && [ -x "$b" ]; then
      PATH="$(dirname "$b"):$PATH"
      break
    fi
  done
fi
command -v bun >/dev/null 2>&1 || die "bun not found (set BUN=/path/to/bun)"

echo "run.sh: $test_cmd"
$test_cmd
