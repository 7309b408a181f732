# GroupSync: `make demo` runs the main job, `make test` the test suite, `make bench` the benchmarks.
SWIFT ?= swift
RELEASE_FLAGS = -c release --static-swift-stdlib

BENCH_BIN = "$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)/groupsync-bench"
# Extra arguments for groupsync-bench, e.g. `make bench BENCH_ARGS="--only 1,3"`.
BENCH_ARGS ?=

.PHONY: deps bench-deps build release demo test bench bench-quick clean

deps:
	@Deploy/install-deps.sh

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build $(RELEASE_FLAGS) --product groupsync

demo: release
	@Deploy/demo.sh "$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)/groupsync"

test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

bench-deps:
	@Deploy/install-bench-deps.sh

# Release build of groupsync and groupsync-bench, then every workload at full size (N = 100,000; ~15 min).
bench: deps bench-deps
	$(SWIFT) build $(RELEASE_FLAGS)
	$(BENCH_BIN) $(BENCH_ARGS)

# The same workloads at small sizes (about a minute), written to Benchmarks/results/quick/.
bench-quick: deps bench-deps
	$(SWIFT) build $(RELEASE_FLAGS)
	$(BENCH_BIN) --quick $(BENCH_ARGS)

clean:
	rm -rf .build
