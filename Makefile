# ptcx — the two commands a new user runs are `make demo` and `make test`.
# Each installs the system packages it needs (Debian; run as root or with sudo).

GO ?= go

.PHONY: all build guest tsc deps test vet demo check-demo clean

all: build

# deps installs the Debian toolchain for the guest when it is missing.
deps:
	@scripts/install-deps.sh

# guest builds guest/guest.wasm (QuickJS-NG + our glue) from pinned sources.
guest: deps
	@guest/build.sh

# tsc installs the pinned TypeScript compiler into .tools/ (for sdkgen tests).
tsc:
	@scripts/install-tsc.sh

VERSION := $(shell git describe --always --dirty 2>/dev/null || echo devel)

build: guest
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o bin/ptcx ./cmd/ptcx
	$(GO) build -o bin/shoptool ./examples/shop/shoptool

vet: guest
	$(GO) vet ./...

test: guest tsc vet check-demo
	$(GO) test -race -count=1 ./...

# check-demo runs the demo and requires README.md to show exactly its output.
check-demo: build
	@scripts/check-demo.sh

demo: build
	@scripts/demo.sh

clean:
	rm -rf bin guest/build guest/guest.wasm
