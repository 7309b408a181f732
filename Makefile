# GroupSync: `make demo` runs the main job, `make test` the test suite, `make bench` the benchmarks.
SWIFT ?= swift
RELEASE_FLAGS = -c release --static-swift-stdlib

# Seeds for `make soak` (the deterministic simulator, release build, every core).
SOAK_SEEDS ?= 10000

# Seconds per fuzz target for `make fuzz` (CI runs it with 20).
FUZZ_SECONDS ?= 45

BENCH_BIN = "$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)/groupsync-bench"
# Extra arguments for groupsync-bench, e.g. `make bench BENCH_ARGS="--only 1,3"`.
BENCH_ARGS ?=

.PHONY: deps bench-deps build release demo install uninstall test soak fuzz bench bench-quick clean

deps:
	@Deploy/install-deps.sh

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build $(RELEASE_FLAGS) --product groupsync

demo: release
	@Deploy/demo.sh "$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)/groupsync"

# The release binary, stripped, into PREFIX/bin, and the systemd user unit (Deploy/groupsync.service) where
# the user's systemd finds it. DESTDIR stages both under another root.
PREFIX ?= $(HOME)/.local
DESTDIR ?=

install: release
	@Deploy/install.sh install "$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)/groupsync" "$(PREFIX)" "$(DESTDIR)"

uninstall:
	@Deploy/install.sh uninstall "$(PREFIX)" "$(DESTDIR)"

# The suite takes about 3 minutes. A test that blocks for good would hold CI to its own limit; `timeout`
# ends the run instead: "Error 124" from make means the tests did not finish within TEST_MINUTES. It sends
# SIGINT, as Ctrl-C does, because `swift test` passes that on to the test process it runs in a process group
# of its own (a SIGTERM would leave that process running).
TEST_MINUTES ?= 30

test: deps
	$(SWIFT) build --build-tests
	timeout --signal=INT --kill-after=30s $(TEST_MINUTES)m $(SWIFT) test --skip-build

# Thousands of seeds of the full-length simulation (CI runs 500 shorter ones inside `make test`).
# A failing seed is printed with the command that replays it; the exit code is then 4.
soak: release
	"$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)/groupsync" simulate --seeds $(SOAK_SEEDS)

# libFuzzer targets (frame decoder, messages and handshake, values) with the address sanitizer, built into
# .build-fuzz, each run for FUZZ_SECONDS from corpora made of Protocol/vectors. A crash fails the target.
fuzz: deps
	Fuzz/run.sh $(FUZZ_SECONDS)

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
	rm -rf .build .build-fuzz
