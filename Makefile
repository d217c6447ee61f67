# optsched — make help lists the targets.
SHELL := /bin/bash
.DEFAULT_GOAL := help

GO ?= $(shell command -v go 2>/dev/null || echo /usr/local/go/bin/go)
BIN := bin/optsched

# Debian packages: lp_solve (liblpsolve55-dev, plus lp-solve for the shared
# liblpsolve55.so under /usr/lib/lp_solve, which keeps lp_solve's LGPL
# linking dynamic), COIN-OR CLP, the cgo toolchain, and Lua 5.1 (the
# Slurm hold guard's unit test runs it as slurmctld's job_submit/lua would).
APT_PACKAGES := liblpsolve55-dev lp-solve coinor-libclp-dev pkg-config g++ lua5.1

# golp looks for lp_solve under its own source folder; point cgo at
# Debian's copy and link it dynamically. `go install` users set the same.
export CGO_CFLAGS := -I/usr/include/lpsolve
export CGO_LDFLAGS := -L/usr/lib/lp_solve -llpsolve55 -Wl,-rpath,/usr/lib/lp_solve

FUZZTIME ?= 30s

REPO_ROOT := $(patsubst %/,%,$(dir $(abspath $(lastword $(MAKEFILE_LIST)))))

.PHONY: help deps build run test vet fuzz bench clean itest

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-8s %s\n", $$1, $$2}'

deps: ## install missing Debian packages (apt-get) and Go modules
	@if ! command -v dpkg-query >/dev/null; then \
	  echo "deps: not a Debian system; install $(APT_PACKAGES) by hand"; \
	else \
	  missing=""; \
	  for p in $(APT_PACKAGES); do \
	    dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
	  done; \
	  if [ -n "$$missing" ]; then \
	    echo "deps: installing$$missing"; \
	    sudo=""; [ "$$(id -u)" -ne 0 ] && sudo=sudo; \
	    $$sudo apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq --no-install-recommends $$missing; \
	  fi; \
	fi
	@# golp's cgo lines look for lp_lib.h under golp's own folder, so a plain
	@# `go vet ./...` (no Makefile flags) cannot find Debian's headers in
	@# /usr/include/lpsolve. Link them into /usr/local/include, the compiler's
	@# default search path (only names not already there). Building still
	@# links lp_solve dynamically through the flags above.
	@if [ -f /usr/include/lpsolve/lp_lib.h ] && [ ! -e /usr/local/include/lp_lib.h ]; then \
	  echo "deps: linking lp_solve's headers into /usr/local/include for plain go vet"; \
	  sudo=""; [ "$$(id -u)" -ne 0 ] && sudo=sudo; \
	  $$sudo mkdir -p /usr/local/include && \
	  for h in /usr/include/lpsolve/*.h; do \
	    [ -e /usr/local/include/$$(basename $$h) ] || $$sudo ln -s $$h /usr/local/include/; \
	  done; \
	fi
	@$(GO) version >/dev/null 2>&1 || { echo "deps: Go not found; install Go 1.26 (https://go.dev/dl)"; exit 1; }
	$(GO) mod download

# The commit optsched --version reports.
COMMIT := $(shell git -C $(REPO_ROOT) describe --always --dirty --abbrev=12 2>/dev/null)
LDFLAGS := -X main.commit=$(COMMIT)

build: deps ## build bin/optsched
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/optsched

run: build ## set up, build and solve the shipped example window
	./$(BIN) solve -o table instances/example-window.json

vet: deps ## go vet
	$(GO) vet ./...

test: deps vet ## set up, vet, and run every test (plus a pure-Go build, and the cgo backends under -race)
	CGO_ENABLED=0 $(GO) build -o /dev/null ./...
	$(GO) test -count=1 ./...
	$(GO) test -count=1 -race ./solver/lpsolve ./solver/clp

fuzz: deps ## fuzz every reader of external input for FUZZTIME each (default 30s)
	@set -e; for pkg in $$($(GO) list ./...); do \
	  for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$t"; $(GO) test $$pkg -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME); \
	  done; \
	done

bench: deps ## run the Go benchmarks (medians: pipe through benchstat)
	$(GO) test -run '^$$' -bench . -benchmem -count 6 ./...

itest: deps ## OpenPBS and Slurm integration suites in private namespaces (root; needs the shared/pbs and shared/slurm test scripts; see docs/pbs-itest.md, docs/slurm.md)
	@rc=0; GO="$(GO)" BIN="$(BIN)" pbsched/itest/run.sh || rc=1; \
	GO="$(GO)" BIN="$(BIN)" slurmsched/itest/run.sh || rc=1; \
	exit $$rc

clean: ## remove build output
	rm -rf bin
