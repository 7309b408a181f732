# GroupSync: `make demo` runs the main job, `make test` the test suite.
SWIFT ?= swift
RELEASE_FLAGS = -c release --static-swift-stdlib

.PHONY: deps build release demo test clean

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

clean:
	rm -rf .build
