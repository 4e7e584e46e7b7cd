# benchmatrix: see README.md. Every target installs what it needs on Debian
# (as root) or says exactly what is missing.

GO      ?= go
BIN     := bin/benchmatrix
VERSION := $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X benchmatrix/version.Version=$(VERSION)

.PHONY: build test fuzz check lint docker-image bench-matrix bench-smoke bench-observe bench-vs-sysbench deps deps-test

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/benchmatrix

# deps: the server the sandbox runs (MariaDB from Debian's packages).
deps:
	@scripts/ensure-deps.sh server

# deps-test: the server plus the yardsticks: sysbench for the engine, cram
# (python3-cram) for sysbench's own test suite against benchmatrix oltp,
# mariadb-slap (mariadb-client) for benchmatrix slap, perf (linux-perf) for
# the profiles, galera-4 for the Galera topology tests, chromium for the
# HTML report's browser test.
deps-test:
	@scripts/ensure-deps.sh server sysbench cram slap perf galera chromium

# The local MariaDB image for the docker provider (no registry needed): a
# debootstrap root file system with Debian's mariadb-server, docker-imported.
# Without a Docker engine it says so, and the docker tests skip.
docker-image:
	@if docker info >/dev/null 2>&1; then scripts/build-mariadb-image.sh; \
	  else echo "no Docker engine reachable: skipping the image (docker provider tests will skip)"; fi

# The tests CI runs (.ci/run): real sandboxes and containers, sysbench as the yardstick.
test: deps-test docker-image
	$(GO) test -race -timeout 60m ./...
	$(MAKE) fuzz FUZZTIME=10s

# Fuzz the manifest decoder and the sysbench command-line parser (their
# corpora are committed under testdata/fuzz); CI runs them briefly.
FUZZTIME ?= 1m
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./experiment
	$(GO) test -run '^$$' -fuzz '^FuzzParseCommandLine$$' -fuzztime $(FUZZTIME) ./oltp

# staticcheck, pinned, installed from the Go module proxy into bin/tools.
STATICCHECK_VERSION := v0.8.2
STATICCHECK := bin/tools/staticcheck-$(STATICCHECK_VERSION)

$(STATICCHECK):
	@mkdir -p bin/tools
	GOBIN=$(CURDIR)/bin/tools $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	mv bin/tools/staticcheck $(STATICCHECK)

lint: $(STATICCHECK)
	$(STATICCHECK) ./...

check:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go') $$(git ls-files --others --exclude-standard '*.go')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(MAKE) lint
	$(MAKE) test

# The durability matrix (manifests/flush.toml) on a sandbox benchmatrix starts itself.
bench-matrix: deps build
	$(BIN) run manifests/flush.toml

# Seconds-long end-to-end run of manifests/smoke.toml.
bench-smoke: deps build
	$(BIN) run manifests/smoke.toml -o $${BENCH_OUT:-runs/smoke-$$(date +%Y%m%d-%H%M%S)}

# What sampling costs: manifests/observer-cost.toml (on vs off, interleaved).
bench-observe: deps build
	$(BIN) run manifests/observer-cost.toml -o $${BENCH_OUT:-runs/observer-cost-$$(date +%Y%m%d-%H%M%S)}

# The engine against sysbench 1.0.20 on one sandbox: tps, client CPU per
# transaction and prepare rows/s, medians of 5 alternations.
bench-vs-sysbench: deps-test
	$(GO) run ./cmd/bench-vs-sysbench -rounds 5
