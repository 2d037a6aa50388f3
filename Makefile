# The two commands of the README: `make demo` runs the prototype (host,
# gateway and server over real MCP), `make test` runs every test. Both
# install what a fresh machine lacks.

CARGO ?= cargo
WASM_TARGET := wasm32-unknown-unknown
WASM := target/$(WASM_TARGET)/release/mcp_provenance.wasm
# The npm package's module: its exports, without the serde_json::Value API.
NPM_FEATURES := --no-default-features --features npm

.PHONY: demo test build lint setup setup-wasm setup-chromium

demo: build
	@node examples/prototype/run.mjs

test: setup lint build setup-chromium
	$(CARGO) test
	node --test js-tests/

# The npm package in pkg/, ready for `npm pack`.
build: setup-wasm node_modules
	$(CARGO) build --lib --target $(WASM_TARGET) --release $(NPM_FEATURES)
	node tools/build-pkg.mjs $(WASM)
	node tools/build-browser.mjs

lint: setup-wasm
	$(CARGO) fmt --check
	$(CARGO) clippy --all-targets -- -D warnings
	$(CARGO) clippy --lib --target $(WASM_TARGET) $(NPM_FEATURES) -- -D warnings

# rustfmt and clippy come with the toolchain on our machines; add them where
# a toolchain was installed without them.
setup:
	@$(CARGO) fmt --version >/dev/null 2>&1 || rustup component add rustfmt
	@$(CARGO) clippy --version >/dev/null 2>&1 || rustup component add clippy

# The wasm target. The module needs no JS glue generator: it imports
# nothing, and pkg/lib moves its data.
setup-wasm: setup
	@rustup target list --installed | grep -qx $(WASM_TARGET) || rustup target add $(WASM_TARGET)

# Debian's Chromium for the browser tests (a browser download of a test
# tool's own fails on these machines).
setup-chromium:
	@command -v chromium >/dev/null 2>&1 || { apt-get update && apt-get install -y --no-install-recommends chromium; }

node_modules: package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch node_modules
