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

# Plain build (unit, cli, diff, stress), then ASan+UBSan and TSan builds
# running the concurrency tests; ends with the line `N passed, N failed`.
test: deps
	@scripts/run-tests.sh

clean:
	rm -rf build build-asan build-tsan build-fuzz
