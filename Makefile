# The two commands of the README: `make demo` runs the prototype tour,
# `make test` runs every test. Both install what a fresh machine lacks.

CARGO ?= cargo

.PHONY: demo test setup lint

demo: setup
	$(CARGO) run --quiet --example quickstart

test: setup lint
	$(CARGO) test

lint:
	$(CARGO) fmt --check
	$(CARGO) clippy --all-targets -- -D warnings

# rustfmt and clippy come with the toolchain on our machines; add them where
# a toolchain was installed without them.
setup:
	@$(CARGO) fmt --version >/dev/null 2>&1 || rustup component add rustfmt
	@$(CARGO) clippy --version >/dev/null 2>&1 || rustup component add clippy
