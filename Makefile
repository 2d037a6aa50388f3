# The two commands of the README: `make demo` runs the prototype (host,
# gateway and server over real MCP), `make test` runs every test. Both
# install what a fresh machine lacks.

CARGO ?= cargo
WASM_TARGET := wasm32-unknown-unknown
# The npm package's module: the binding crate (binding/), built over the
# core without its serde_json::Value API.
WASM := target/$(WASM_TARGET)/release/mcp_provenance_wasm.wasm
# The outgoing module (stampInitiator, clearInitiator, attachInvocation
# alone), built with the profile `size` (Cargo.toml).
WASM_SIZE := target/$(WASM_TARGET)/size/mcp_provenance_wasm.wasm
# The crates whose tests run natively and in wasm: the core and the npm
# binding (the Python one is tested through its wheel, make python-test);
# the core with its tower middleware (native only: on wasm32 the feature adds
# nothing), so that tests/tower.rs and examples/rmcp_http.rs are built and run.
TESTED := --workspace --exclude mcp-provenance-python --features mcp-provenance/tower

.PHONY: demo test msrv test-wasm setup-wasm-bindgen setup-chromedriver python-wheel setup-python-build python-test bench bench-serde loadtest fuzz build pack describe lint setup setup-wasm setup-debian setup-fuzz

demo: build
	@node examples/prototype/run.mjs

# The Python tests come before the Node ones: they build the venv that
# js-tests/differential.test.mjs runs the Python servers from. The
# agentgateway check is upstream/agentgateway's own crate: the logic of its
# patch on the rmcp agentgateway pins, and the processor's core.
test: setup lint build setup-debian
	$(CARGO) test $(TESTED)
	$(MAKE) msrv
	cd upstream/agentgateway/check && $(CARGO) test
	$(MAKE) python-test
	node --test js-tests/
	$(MAKE) test-wasm
	$(MAKE) fuzz FUZZ_SECONDS=20

# The oldest Rust the crate says it builds with, read from Cargo.toml's
# rust-version, installed if missing: the core's library (every feature),
# its `cli` command and its `tower` feature built with it from the
# checked-in Cargo.lock, in a target folder of their own. Not the tests:
# their dev-dependencies (rmcp among them) need a newer Rust.
MSRV := $(shell sed -n 's/^rust-version = "\(.*\)"/\1/p' Cargo.toml)
MSRV_TARGET := $(or $(CARGO_TARGET_DIR),target)/msrv
msrv:
	@rustup toolchain list | grep -q '^$(MSRV)-' || rustup toolchain install $(MSRV) --profile minimal
	$(CARGO) +$(MSRV) build --locked --target-dir $(MSRV_TARGET) -p mcp-provenance --lib --all-features
	$(CARGO) +$(MSRV) build --locked --target-dir $(MSRV_TARGET) -p mcp-provenance --features cli --bin mcp-provenance
	$(CARGO) +$(MSRV) build --locked --target-dir $(MSRV_TARGET) -p mcp-provenance --lib --no-default-features --features tower

# The core's unit tests and every conformance vector inside wasm, under
# wasm-bindgen-test-runner (the runner .cargo/config.toml names): in Node,
# then the same build in headless Chromium through Debian's chromedriver
# (the runner starts Chromium headless with --no-sandbox itself, so root
# needs no webdriver.json). The test targets that are native only compile
# to nothing there ("no tests to run!"). The runner runs only
# #[wasm_bindgen_test] functions and passes over a plain #[test] without a
# word, so each test module names the one as the other on wasm32; the grep
# fails for a module that does not.
test-wasm: setup-wasm setup-wasm-bindgen setup-chromedriver
	@! grep -rL 'use wasm_bindgen_test::wasm_bindgen_test as test;' $$(grep -rl '^mod tests {' src binding/src) | grep . || { echo 'these test modules would not run in wasm: add `#[cfg(target_arch = "wasm32")] use wasm_bindgen_test::wasm_bindgen_test as test;`'; exit 1; }
	$(CARGO) test $(TESTED) --target $(WASM_TARGET) --tests
	WASM_BINDGEN_USE_BROWSER=1 CHROMEDRIVER=/usr/bin/chromedriver $(CARGO) test $(TESTED) --target $(WASM_TARGET) --tests

# The Python package (python/): its abi3 wheels for x86_64 Linux, built by
# maturin with zig as the linker, so that what they need of the C library is
# the tag's, not this machine's: manylinux2014 (glibc 2.17: CentOS 7,
# Debian 11, Ubuntu 20.04, Amazon Linux 2 and later) into target/wheels, and
# musllinux_1_2 (Alpine 3.13 and later) into target/wheels/musllinux. The
# build fails on a wheel that auditwheel finds claims more than it is
# (tools/audit-wheels.py); python/tests/test_wheels.py reads what each
# extension asks of the C library. The manylinux2014 wheel, which this
# machine runs, is installed with its extras (so that they are known to
# resolve) into a fresh virtual environment with what its tests run with
# (python/tests/requirements.txt).
PY_BUILD := target/python/build
PY_TEST := target/python/test
MUSL_TARGET := x86_64-unknown-linux-musl
# maturin runs zig as `python3 -m ziglang`: the build venv's python3, first
# on its PATH.
MATURIN := PATH="$(abspath $(PY_BUILD))/bin:$$PATH" $(abspath $(PY_BUILD))/bin/maturin build --release --zig
python-wheel: setup-python-build
	rm -rf target/wheels $(PY_TEST)
	cd python && $(MATURIN) --compatibility manylinux2014 --out ../target/wheels
	cd python && $(MATURIN) --target $(MUSL_TARGET) --compatibility musllinux_1_2 --out ../target/wheels/musllinux
	$(PY_BUILD)/bin/python tools/audit-wheels.py target/wheels/*.whl target/wheels/musllinux/*.whl
	python3 -m venv $(PY_TEST)
	$(PY_TEST)/bin/pip install -q "$$(echo target/wheels/mcp_provenance-*.whl)[fastmcp,mcp,otel,prometheus,redis]" -r python/tests/requirements.txt

# What the wheels are built and checked with: Rust's musl target; from
# Debian, musl's loader, with which python/tests/test_wheels.py loads the
# musl extension; and in a virtual environment, from PyPI, maturin, zig (the
# package ziglang) and auditwheel, at these versions (pip asks PyPI nothing
# once they are there).
setup-python-build:
	@rustup target list --installed | grep -qx $(MUSL_TARGET) || rustup target add $(MUSL_TARGET)
	@test -x /lib/ld-musl-x86_64.so.1 || { apt-get update && apt-get install -y --no-install-recommends musl; }
	@test -x $(PY_BUILD)/bin/pip || python3 -m venv $(PY_BUILD)
	@$(PY_BUILD)/bin/pip install -q --disable-pip-version-check "maturin>=1.16,<1.17" "ziglang>=0.17,<0.18" "auditwheel>=6.8,<6.9"

# The Python tests, against the installed wheel: every vector, the
# middlewares under FastMCP's and the SDK's own clients, the docstrings'
# examples, mypy --strict, and ContextForge 1.1.0 started as its README
# says in front of a FastMCP server (its own Python 3.12 venv in
# target/contextforge, kept across runs). The npm package is built first: the OpenTelemetry
# test holds the Python sink's attributes to the npm entry's.
python-test: build python-wheel
	$(PY_TEST)/bin/python -m unittest discover -s python/tests -t python/tests -v

# The figures of the README's performance section: the package against what
# a JS user would pick instead, cost as a message grows, the native core,
# and the Python package against pydantic and hand-written Python. First, the
# package against the baseline commit's, built once by tools/baseline.mjs,
# in one process (bench/binding.mjs); then serde-wasm-bindgen beside the
# package's own boundary (bench-serde).
bench: build python-wheel
	node tools/baseline.mjs
	node bench/binding.mjs
	$(MAKE) bench-serde
	node bench/compare.mjs
	node bench/envelope-cost.mjs
	node bench/filter.mjs
	node bench/http.mjs
	node bench/outcome.mjs
	$(CARGO) build --release --features cli --bin mcp-provenance
	node bench/check.mjs
	$(CARGO) bench --bench native
	$(PY_TEST)/bin/python bench/python.py
	$(PY_TEST)/bin/python bench/middleware.py

# serde-wasm-bindgen beside the package's own boundary, on the structs that
# cross whole and on the object API's calls whole (bench/serde-wasm-bindgen):
# the figures binding/src/lib.rs keeps the tape by.
SWB := bench/serde-wasm-bindgen
bench-serde: build
	cd $(SWB) && $(CARGO) build --release --target $(WASM_TARGET)
	wasm-bindgen --target nodejs --out-dir $(SWB)/target/pkg $(SWB)/target/$(WASM_TARGET)/release/serde_wasm_bindgen_bench.wasm
	node $(SWB)/run.mjs

# The prototype under load (16 clients x 500 calls) and with its server
# killed mid-run: counts asserted, figures printed.
loadtest: build
	node examples/prototype/loadtest.mjs

# Each fuzz target for FUZZ_SECONDS, from the conformance vectors as seeds
# (fuzz/); `make test` gives each 20 seconds, so that none rots. Inputs up
# to 1 MiB (a gateway's default body bound), and an input that takes longer
# than FUZZ_TIMEOUT seconds is a failure: no slow input (every check is
# linear in what it reads).
FUZZ_TIMEOUT ?= 5
FUZZ_TARGETS := validate sanitize audit_record json filter
FUZZ_SECONDS ?= 300
fuzz: setup-fuzz
	node fuzz/seed.mjs $(FUZZ_TARGETS)
	@for target in $(FUZZ_TARGETS); do \
	  $(CARGO) +nightly fuzz run $$target fuzz/corpus/$$target -- -max_total_time=$(FUZZ_SECONDS) -max_len=1048576 -timeout=$(FUZZ_TIMEOUT) -print_final_stats=1 || exit 1; \
	done

# cargo-fuzz and the nightly toolchain it builds with.
setup-fuzz:
	@rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
	@$(CARGO) fuzz --help >/dev/null 2>&1 || $(CARGO) install cargo-fuzz

# The npm package in pkg/, ready for `npm pack`: its two modules, each with
# its JS glue made by wasm-bindgen (into BINDGEN/host and BINDGEN/filter;
# with __wbg_reset_state, which starts the module afresh after a trap),
# which tools/build-pkg.mjs shrinks, inlines and copies into pkg/dist. The
# host module (the object API) is the crate with its feature `host`, the
# filter module (gateway, http, the command) with `filter`; both are built
# to the same file, so each goes through wasm-bindgen before the next build.
BINDGEN := target/wasm-bindgen
BINDGEN_FLAGS := --target web --experimental-reset-state-function --no-typescript --out-name mcp_provenance
build: setup-wasm setup-wasm-bindgen node_modules
	$(CARGO) build -p mcp-provenance-wasm --lib --target $(WASM_TARGET) --release --no-default-features --features host
	wasm-bindgen $(BINDGEN_FLAGS) --out-dir $(BINDGEN)/host $(WASM)
	$(CARGO) build -p mcp-provenance-wasm --lib --target $(WASM_TARGET) --release --no-default-features --features filter
	wasm-bindgen $(BINDGEN_FLAGS) --out-dir $(BINDGEN)/filter $(WASM)
	$(CARGO) build -p mcp-provenance-wasm --lib --target $(WASM_TARGET) --profile size --no-default-features --features outgoing
	wasm-bindgen $(BINDGEN_FLAGS) --out-dir $(BINDGEN)/outgoing $(WASM_SIZE)
	node tools/build-pkg.mjs $(BINDGEN)/host $(BINDGEN)/filter $(BINDGEN)/outgoing
	node tools/build-browser.mjs
	node tools/build-extension.mjs

# The npm tarball, to install before the package is on npm:
#   npm install <clone>/target/npm/mcp-provenance-<version>.tgz
pack: build
	mkdir -p target/npm
	cd pkg && npm pack --pack-destination ../target/npm

# binding/table.json, the one description of the boundary, written anew
# from the Rust constants (a test fails while it is stale).
describe:
	MCP_PROVENANCE_BLESS=1 $(CARGO) test -p mcp-provenance-wasm --lib the_checked_in_description_is_current

# Formatting, clippy over every build, the core's docs as docs.rs builds
# them (every feature) and as a Rust user's `cargo doc` does (the default
# features), and the npm binding's own (its private items: it has no public
# API), with no broken link.
lint: setup-wasm
	$(CARGO) fmt --check
	$(CARGO) clippy $(TESTED) --all-targets --features mcp-provenance/cli -- -D warnings
	$(CARGO) clippy $(TESTED) --tests --target $(WASM_TARGET) -- -D warnings
	$(CARGO) clippy -p mcp-provenance-wasm --lib --target $(WASM_TARGET) --no-default-features --features host -- -D warnings
	$(CARGO) clippy -p mcp-provenance-wasm --lib --target $(WASM_TARGET) --no-default-features --features filter -- -D warnings
	$(CARGO) clippy -p mcp-provenance-wasm --lib --target $(WASM_TARGET) --no-default-features --features outgoing -- -D warnings
	$(CARGO) clippy -p mcp-provenance-python -- -D warnings
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --no-deps --all-features -p mcp-provenance
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --no-deps -p mcp-provenance
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --no-deps --document-private-items -p mcp-provenance-wasm

# rustfmt and clippy come with the toolchain on our machines; add them where
# a toolchain was installed without them.
setup:
	@$(CARGO) fmt --version >/dev/null 2>&1 || rustup component add rustfmt
	@$(CARGO) clippy --version >/dev/null 2>&1 || rustup component add clippy

# The wasm target. Its JS glue comes from the wasm-bindgen CLI
# (setup-wasm-bindgen).
setup-wasm: setup
	@rustup target list --installed | grep -qx $(WASM_TARGET) || rustup target add $(WASM_TARGET)

# The wasm-bindgen CLI (wasm-bindgen and wasm-bindgen-test-runner) of the
# wasm-bindgen version Cargo.lock pins (the binding crate and
# wasm-bindgen-test 0.3.80 pin it): its glue must be of the version the
# module was built with.
WASM_BINDGEN_VERSION := 0.2.130
setup-wasm-bindgen:
	@wasm-bindgen --version 2>/dev/null | grep -qx "wasm-bindgen $(WASM_BINDGEN_VERSION)" || $(CARGO) install wasm-bindgen-cli --version $(WASM_BINDGEN_VERSION)

# From Debian: Chromium's WebDriver for the wasm tests (Debian keeps it at
# Chromium's version; a driver download of the runner's own would fail).
setup-chromedriver:
	@test -x /usr/bin/chromedriver || { apt-get update && apt-get install -y --no-install-recommends chromium chromium-driver; }

# From Debian: Chromium for the browser tests (a browser download of a test
# tool's own fails on these machines), Xvfb for the headed ones, GNU time
# for the peak memory the CLI tests measure (a launcher's own memory would
# count in any other), and Valgrind, whose instruction counts are the work
# tests/growth.rs compares (the same on every run, where times are not),
# and patch, which applies upstream/contextforge/'s change to ContextForge
# 1.1.0 for the plugin's test; and redis-server, the Redis the middlewares
# share witnessed sessions through in the tests (each starts its own); and
# curl and jq, which examples/contextforge/README.md's operator runs.
setup-debian:
	@command -v chromium >/dev/null 2>&1 && test -x /usr/bin/time && command -v Xvfb >/dev/null 2>&1 && command -v valgrind >/dev/null 2>&1 && command -v patch >/dev/null 2>&1 && command -v redis-server >/dev/null 2>&1 && command -v curl >/dev/null 2>&1 && command -v jq >/dev/null 2>&1 || { apt-get update && apt-get install -y --no-install-recommends chromium time xvfb valgrind patch redis-server curl jq; }

node_modules: package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch node_modules
