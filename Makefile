# GroupSync: `make demo` runs the main job, `make test` the test suite.
SWIFT ?= swift
RELEASE_FLAGS = -c release --static-swift-stdlib

# Seeds for `make soak` (the deterministic simulator, release build, every core).
SOAK_SEEDS ?= 10000

# Seconds per fuzz target for `make fuzz` (CI runs it with 20).
FUZZ_SECONDS ?= 45

.PHONY: deps build release demo test soak fuzz clean

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

# Thousands of seeds of the full-length simulation (CI runs 500 shorter ones inside `make test`).
# A failing seed is printed with the command that replays it; the exit code is then 4.
soak: release
	"$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)/groupsync" simulate --seeds $(SOAK_SEEDS)

# libFuzzer targets (frame decoder, messages and handshake, values) with the address sanitizer, built into
# .build-fuzz, each run for FUZZ_SECONDS from corpora made of Protocol/vectors. A crash fails the target.
fuzz: deps
	Fuzz/run.sh $(FUZZ_SECONDS)

clean:
	rm -rf .build .build-fuzz
