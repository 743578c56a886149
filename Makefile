# vmalock: `make run` runs the headline experiment, `make test` runs every test.
# Both install what is missing first (scripts/install-deps.sh), so a fresh
# Debian machine needs nothing else.

BUILD      ?= build
MESONFLAGS ?=

.PHONY: all deps build run test bench clean

all: build

deps:
	@scripts/install-deps.sh

$(BUILD)/build.ninja: | deps
	meson setup $(BUILD) $(MESONFLAGS)

build: deps $(BUILD)/build.ninja
	ninja -C $(BUILD)

run: build
	./$(BUILD)/vmalock run

# Plain build (unit, cli, diff, stress, fuzz, big), then ASan+UBSan, TSan,
# fault-injection and libFuzzer builds
# (scripts/run-tests.sh says which suites each runs); ends with the line
# `N passed, N failed`.
test: deps
	@scripts/run-tests.sh

clean:
	rm -rf $(BUILD) build build-asan build-tsan build-fi build-fuzz
