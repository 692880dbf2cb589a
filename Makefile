# emco — the two commands a fresh Debian machine needs:
#   make demo   install packages, build, run the quickstart
#   make test   install packages (PostgreSQL and libpq-dev among them), build, run every
#               self-contained test, on SQLite and on a throwaway PostgreSQL server
# Further targets: build, asan-test, conformance, flows, browser-test, helm-client, bench-smoke, clean.

# ccache: hash paths relative to the checkout, so a fresh clone (CI) reuses
# the objects a build elsewhere on this machine already made.
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := true

BUILD ?= build
ASAN_BUILD ?= build-asan
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all deps build test demo asan-test conformance flows browser-test helm-client bench-smoke clean

all: build

deps:
	@bash scripts/install-deps

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_FLAGS)

build: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 900

demo: build
	bash scripts/demo.sh $(BUILD)/emco

$(ASAN_BUILD)/build.ninja:
	cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DEMCO_SANITIZE=ON $(CMAKE_FLAGS)

# Under the sanitizers the PostgreSQL runs of the store, appcontext, sync and
# lifecycle suites cover the backend's code; the process-driving reliability
# and CLI suites run on SQLite only (on PostgreSQL they repeat the same emco
# code paths at several times the cost).
asan-test: deps $(ASAN_BUILD)/build.ninja
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp \
	  ctest --output-on-failure -j $(JOBS) --timeout 1800 -E '_bench|^pg:(reliability|cli)_tests:'

conformance: build
	bash scripts/conformance.sh $(BUILD)

# The upstream flows through `emco apply -f`, then over HTTP through `emco serve`.
flows: build
	bash scripts/flows.sh $(BUILD)/emco
	bash scripts/flows.sh $(BUILD)/emco --http

# The dashboard of `emco serve` in headless Chromium (screenshots in $(BUILD)/browser-test/screenshots).
browser-test: build
	bash scripts/browser-test.sh $(BUILD)

# The real helm and kubectl against emco sim (fetches them with ../shared/tools/get-helm).
helm-client: build
	bash scripts/helm-client.sh $(BUILD)

bench-smoke: build
	bash scripts/bench.sh --smoke $(BUILD)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
