# The two commands of the README: `make demo` runs the prototype (host,
# gateway and server over real MCP), `make test` runs every test. Both
# install what a fresh machine lacks.

CARGO ?= cargo
WASM_TARGET := wasm32-unknown-unknown
WASM_BINDGEN_VERSION := 0.2.130
WASM := target/$(WASM_TARGET)/release/mcp_provenance.wasm

.PHONY: demo test build lint setup setup-wasm setup-chromium

demo: build
	@node examples/prototype/run.mjs

test: setup lint build setup-chromium
	$(CARGO) test
	$(CARGO) test --target $(WASM_TARGET) --lib
	node --test js-tests/

# The npm package in pkg/, ready for `npm pack`.
build: setup-wasm node_modules
	$(CARGO) build --lib --target $(WASM_TARGET) --release
	node tools/build-pkg.mjs $(WASM)
	node tools/build-browser.mjs

lint: setup-wasm
	$(CARGO) fmt --check
	$(CARGO) clippy --all-targets -- -D warnings
	$(CARGO) clippy --lib --tests --target $(WASM_TARGET) -- -D warnings

# rustfmt and clippy come with the toolchain on our machines; add them where
# a toolchain was installed without them.
setup:
	@$(CARGO) fmt --version >/dev/null 2>&1 || rustup component add rustfmt
	@$(CARGO) clippy --version >/dev/null 2>&1 || rustup component add clippy

# The wasm target, and the wasm-bindgen CLI of exactly the version Cargo.toml
# pins (`--locked` can fail on a yanked dependency; then build without it).
setup-wasm: setup
	@rustup target list --installed | grep -qx $(WASM_TARGET) || rustup target add $(WASM_TARGET)
	@wasm-bindgen --version 2>/dev/null | grep -qx "wasm-bindgen $(WASM_BINDGEN_VERSION)" || \
		$(CARGO) install wasm-bindgen-cli --version $(WASM_BINDGEN_VERSION) --locked || \
		$(CARGO) install wasm-bindgen-cli --version $(WASM_BINDGEN_VERSION)

# Debian's Chromium for the browser tests (a browser download of a test
# tool's own fails on these machines).
setup-chromium:
	@command -v chromium >/dev/null 2>&1 || { apt-get update && apt-get install -y --no-install-recommends chromium; }

node_modules: package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch node_modules
