#!/usr/bin/env bash
# What the npm registry holds of ext-apps 2.x, against the patch: whether
# any published 2.x tarball ships a source (src/, tests, source maps), and
# whether the five AppBridge handler calls the patch changes are in every
# 2.x build as the patch's pre-image has them.
#
#   upstream/ext-apps/check-dist.sh
#
# Needs only npm and the registry. Prints one line per version; exits 1 if a
# version's build lacks one of the five calls (the patch would then need a
# look), 0 otherwise. It changes nothing here (a temporary directory).
set -euo pipefail

work=$(mktemp -d "${TMPDIR:-/tmp}/ext-apps-dist.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"

# The handlers `stamp-initiator.patch` routes through withAppInitiator, as
# the bundler prints each call: `return this._<handler>(<request>.params,<extra>)`.
handlers="oncalltool onreadresource onlistresources onlistresourcetemplates onlistprompts"

versions=$(npm view @modelcontextprotocol/ext-apps versions --json | node -e '
  const all = JSON.parse(require("fs").readFileSync(0, "utf8"));
  console.log(all.filter((v) => /^2\./.test(v)).join(" "));')
echo "check-dist.sh: 2.x versions on the registry: $versions"

status=0
for version in $versions; do
  tarball=$(npm pack --silent "@modelcontextprotocol/ext-apps@$version")
  files=$(tar tzf "$tarball")
  count=$(echo "$files" | wc -l)
  sources=$(echo "$files" | grep -E '^package/src/|\.(ts|tsx)$' | grep -cvE '\.d\.ts$' || true)
  maps=$(echo "$files" | grep -c '\.map$' || true)
  mkdir "$version" && tar xzf "$tarball" -C "$version"
  bridge="$version/package/dist/src/app-bridge.js"
  sha=$(sha256sum "$bridge" | cut -c1-16)
  missing=""
  for handler in $handlers; do
    grep -qE "return this\._$handler\([A-Za-z_\$]+\.params,[A-Za-z_\$]+\)" "$bridge" || missing="$missing $handler"
  done
  echo "$version: $count files, $sources TypeScript sources, $maps source maps; dist/src/app-bridge.js sha256 $sha...; the five calls: ${missing:+missing$missing}${missing:-all present}"
  [ -z "$missing" ] || status=1
done
exit $status
