# ptcx — the two commands a new user runs are `make demo` (about 3.6 minutes
# from a fresh clone on 2 cores, 3 s once built) and `make test` (about 30
# minutes on 2 cores).
# Each installs the system packages it needs (Debian; run as root or with sudo).

GO ?= go

.PHONY: all build guest guest-python tsc deps test test-ts gen-ts test-wasmtime test-race test-stores test-clients test-image image vet demo check-demo check-docs openapi-lint plain-clone cross soak bench clean

all: build

# deps installs the Debian toolchain for the guest when it is missing.
deps:
	@scripts/install-deps.sh

# guest builds guest/wasm/guest.wasm (QuickJS-NG + our glue) from pinned sources.
guest: deps
	@guest/build.sh

# guest-python builds the Python guest, guest/python/wasm/python.wasm (CPython
# 3.13 + our glue) and its stdlib zip, from Debian trixie's pinned source
# (guest/python/README.md): about 5 minutes on 2 idle cores the first time,
# under a second once cached. make test builds it (its tests need it); make
# demo does not.
guest-python: deps
	@guest/python/build.sh

# tsc installs the pinned TypeScript compiler and the pinned pyright into
# .tools/ (npm ci from lockfiles; for sdkgen's tests, which type-check the
# generated TypeScript declarations and Python stubs and sample programs).
tsc:
	@scripts/install-tsc.sh
	@scripts/install-pyright.sh

VERSION := $(shell git describe --always --dirty 2>/dev/null || echo devel)

build: guest
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o bin/ptcx ./cmd/ptcx
	$(GO) build -o bin/shoptool ./examples/shop/shoptool

vet: guest
	$(GO) vet ./...

# image writes bin/ptcx-image.tar, ptcx's container image as an OCI archive:
# a static ptcx (CGO_ENABLED=0, the guest embedded) from scratch, run as user
# 65532, no shell; written by scripts/image (a module of its own, with
# go-containerregistry), no base image pulled. Load and run it with
# `podman load -i bin/ptcx-image.tar` (README, docs/service.md).
image: guest
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w -X main.version=$(VERSION)" -o bin/ptcx-static ./cmd/ptcx
	cd scripts/image && $(GO) run . -binary ../../bin/ptcx-static -out ../../bin/ptcx-image.tar -version $(VERSION)

# test-image installs podman (and runc) from Debian when missing, builds the
# image, checks the archive's structure and runs it in podman: /healthz and
# an execution on a loopback port, the config mounted (scripts/image's
# tests; about a minute).
test-image: image
	@scripts/install-deps.sh podman runc
	cd scripts/image && PTCX_IMAGE=$(CURDIR)/bin/ptcx-image.tar $(GO) test -tags podman -count=1 ./...

# test runs every check and every test with the guest required: a test that
# needs the guest fails, never skips, when it is missing (PTCX_REQUIRE_GUEST).
# Its 13 steps run one after another, each announced by scripts/step.sh
# (== make test: NAME (N/13), a line a minute while it runs, and its elapsed
# time when it ends); about 36 minutes on a fresh clone on 2 cores (measured
# 2026-12-07: guest-python 7 to 8 of them, under a second once cached; go
# test -race about 16), most of it the last step.
STEP := scripts/step.sh
SUBMAKE := $(MAKE) --no-print-directory
test:
	@start=$$(date +%s); \
	$(STEP) 1/13 guest $(SUBMAKE) guest && \
	$(STEP) 2/13 guest-python $(SUBMAKE) guest-python && \
	$(STEP) 3/13 tsc $(SUBMAKE) tsc && \
	$(STEP) 4/13 vet $(SUBMAKE) vet && \
	$(STEP) 5/13 check-demo $(SUBMAKE) check-demo && \
	$(STEP) 6/13 check-docs $(SUBMAKE) check-docs && \
	$(STEP) 7/13 plain-clone $(SUBMAKE) plain-clone && \
	$(STEP) 8/13 cross $(SUBMAKE) cross && \
	$(STEP) 9/13 test-wasmtime $(SUBMAKE) test-wasmtime && \
	$(STEP) 10/13 test-stores $(SUBMAKE) test-stores && \
	$(STEP) 11/13 test-clients $(SUBMAKE) test-clients && \
	$(STEP) 12/13 test-image $(SUBMAKE) test-image && \
	$(STEP) 13/13 'go test -race ./...' $(SUBMAKE) test-race && \
	s=$$(( $$(date +%s) - start )) && echo "== make test: all 13 steps passed in $$((s / 60))m$$((s % 60))s"

# test-race is make test's last step: go test -race ./... with the guest
# required. An uninstrumented build warms the compilation cache first (ptcx's
# own, wasmhost.DefaultCacheDir, keyed by each module's hash: bin/ptcx
# running a Python program compiles both guests there as the tests' Runtimes
# compile them, and one test of guest/python's fake host its unmetered
# python.wasm): -race instruments wazero's compiler too, which then takes
# about a minute for python.wasm and seconds for QuickJS in every test
# binary that compiles it cold.
test-race: build guest-python
	echo '1 + 1' | bin/ptcx run --language python - >/dev/null
	$(GO) test -count=1 -run '^TestABI_values$$' ./guest/python/ >/dev/null
	PTCX_REQUIRE_GUEST=1 $(GO) test -race -count=1 -timeout 25m ./...

# test-stores runs ptcx serve's tests again with each shared store behind
# every test server (PTCX_TEST_STORE): a local directory, and NATS
# JetStream (a server embedded in the test). The -race run above uses the
# memory store; these run without -race, for the time budget (about a
# minute each on 2 cores).
test-stores: guest
	PTCX_TEST_STORE=dir PTCX_REQUIRE_GUEST=1 $(GO) test -count=1 ./serve/
	PTCX_TEST_STORE=nats PTCX_REQUIRE_GUEST=1 $(GO) test -count=1 ./serve/

# test-clients runs the clients' tests against a real ptcx serve, bin/ptcx:
# clients/python's mypy --strict, its unittest suite and its example.py
# (scripts/test-clients.sh, about 10 s), then the TypeScript client's
# (test-ts, about a minute once installed).
test-clients: build
	@scripts/test-clients.sh
	@$(SUBMAKE) test-ts

# test-wasmtime runs the sandbox's suites (wasmhost, executor and the
# hostile programs, the hammer test among them) again on the wasmtime
# engine, bench's ptcx-wasmtime peer, and make demo with a wasmtime build
# on wasmtime, whose output must be README.md's: the same tests, switched by
# PTCX_ENGINE, built by scripts/wasmtime.sh, which links the adapter (a
# module of its own) and runs the adapter's own tests too (cgo; the first
# build links wasmtime's static library, about a minute). Without -race, to keep make test within its time budget (the
# -race run of the same suites on wazero above is most of it); about 4
# minutes on 2 cores.
test-wasmtime: build
	GO=$(GO) scripts/wasmtime.sh vet ./wasmhost/internal/engine/wasmtime/
	PTCX_ENGINE=wasmtime PTCX_REQUIRE_GUEST=1 GO=$(GO) scripts/wasmtime.sh test -count=1 -timeout 20m ./wasmhost/ ./wasmhost/internal/engine/wasmtime/ ./executor/ ./tests/hostile/
	PTCX_REQUIRE_GUEST=1 GO=$(GO) scripts/wasmtime.sh test -count=1 -run Wasmtime ./bench/
	GO=$(GO) scripts/wasmtime.sh build -o bin/ptcx-wasmtime ./cmd/ptcx
	PTCX_DEMO_BIN=bin/ptcx-wasmtime PTCX_ENGINE=wasmtime scripts/check-demo.sh

# test-ts builds bin/ptcx, installs the TypeScript client's pinned packages
# (npm ci --ignore-scripts, skipped when node_modules matches the lock),
# checks its generated types against serve/openapi.yaml, builds it and runs
# its tests and its AI SDK adapter's against a real ptcx serve
# (scripts/test-ts.sh; clients/typescript/README.md); about a minute on 2
# cores once installed, two from scratch.
test-ts: guest
	@GO=$(GO) scripts/test-ts.sh

# gen-ts regenerates the TypeScript client's wire types
# (clients/typescript/src/openapi.d.ts) from serve/openapi.yaml.
gen-ts:
	@scripts/test-ts.sh gen

# check-docs requires docs/architecture.md's package table to match the
# real imports, and every relative link in the docs to resolve; then it
# lints the OpenAPI document (openapi-lint).
check-docs:
	@scripts/check-docs.sh
	@$(SUBMAKE) openapi-lint

# openapi-lint lints serve/openapi.yaml under Redocly's recommended rules,
# with the @redocly/cli pinned in scripts/openapi-lint (installed into
# .tools/ once by npm ci): any error or warning fails.
openapi-lint:
	@scripts/openapi-lint.sh

# plain-clone builds, vets and tests the guest-free packages from a copy of
# the tracked tree, without the guest and without cgo.
plain-clone:
	@scripts/plain-clone-check.sh

# cross builds the module for darwin and windows.
cross:
	@scripts/cross-build.sh

# check-demo runs the demo and requires README.md to show exactly its output.
check-demo: build
	@scripts/check-demo.sh

demo: build
	@scripts/demo.sh

# soak runs the long tests (scripts/soak.sh): mixed good and hostile programs
# through one executor for 3 minutes (PTCX_SOAK=5m for longer), a
# 100,000-item batch whose RSS must stay flat, a tenant's latency beside a
# hostile tenant of one ptcx serve (a minute a phase), and the isolation
# property over 10,000 pooled runs.
soak: guest
	@scripts/soak.sh

# bench measures ptcx beside goja, a fresh Node Worker per run and
# quickjs-wasi, and its Python beside the same python.wasm started fresh and
# native CPython, in one run, installing Node, the pinned npm packages and
# python3 as it needs, and writes bench/out/ (PTCX_BENCH_ARGS="--runs 5" for
# a quick run). It builds the Python guest first (cached: under a second).
bench: guest-python build
	@scripts/bench.sh

clean:
	rm -rf bin guest/build guest/wasm/guest.wasm
