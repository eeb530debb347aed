# rshmem build, install, test and benchmark entry points.
#   make                 build librshmem.so, rshmemrun, rshmem-info (release)
#   make install PREFIX=/opt/rshmem   (copies what make built; make uninstall PREFIX=... removes it)
#   make test            unit tests + C tests (CTest) against a staged install
#   make run             the demo benchmark with 4 PEs on this host
#   make bench           CPU benchmark: rshmem vs the physical floor vs Open MPI OSHMEM
#                        (HOSTS=2: then between two namespaced hosts over TCP; needs root)
#   make bench-compare   GPU benchmarks, rshmem vs NVSHMEM side by side (on the GPU machine;
#                        RSHMEM_PREFIX=<install>, NVSHMEM_HOME=<dir>, BENCH_COMPARE_ARGS=--quick)
SHELL      := /bin/bash
PREFIX     ?= /usr/local
VERSION    := $(shell sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
MAJOR      := $(firstword $(subst ., ,$(VERSION)))
CARGO      ?= cargo
PROFILE    ?= release
TARGET     := target/$(PROFILE)
STAGE      := $(CURDIR)/build/stage
CTEST_DIR  := $(CURDIR)/build/ctest
NP         ?= 4
CBINDGEN   ?= cbindgen

.PHONY: all deps build install uninstall stage test lint unit-test ctest check-exports check-header header run bench bench-compare clean

all: build

# Installs missing build/test packages (Debian); does nothing when all are present.
deps:
	@bash scripts/install-deps.sh

build:
	$(CARGO) build --$(PROFILE) --locked
	$(CC) -shared -fPIC -o $(TARGET)/libnvshmem_host.so.3 scripts/nvshmem_host_alias.c -Wl,-soname,libnvshmem_host.so.3 \
	    -Wl,--version-script=scripts/nvshmem_host_alias.map \
	    -Wl,--no-as-needed -L$(TARGET) -lrshmem -Wl,-rpath,'$$ORIGIN'

# Copies what `make build` built (no cargo: `make && sudo make install` works where root has
# no Rust); refuses with a message when nothing is built. `make uninstall` removes it again.
install:
	@bash scripts/install.sh install $(PREFIX) $(TARGET) $(VERSION)

uninstall:
	@bash scripts/install.sh uninstall $(PREFIX)

# A private install under build/stage that the C tests and benchmarks build against.
stage: build
	rm -rf $(STAGE)
	$(MAKE) --no-print-directory install PREFIX=$(STAGE)

# Formatting (rustfmt.toml) and clippy with every warning an error, over the library, tools and
# tests; every generated file must be what its generator writes now; no module reaches a layer
# above its own (docs/ARCHITECTURE.md); every C entry point runs through the C boundary.
lint: check-header
	python3 scripts/check-layers.py
	python3 scripts/check-boundary.py
	python3 scripts/gen_headers.py --check
	python3 scripts/gen_env_table.py --check
	$(CARGO) fmt --check
	$(CARGO) clippy --locked --release --all-targets -- -D warnings

unit-test:
	$(CARGO) test --locked --release

ctest: stage
	PKG_CONFIG_PATH=$(STAGE)/lib/pkgconfig cmake -S ctest -B $(CTEST_DIR) -DCMAKE_BUILD_TYPE=Release -DRSHMEM_PREFIX=$(STAGE) >/dev/null
	cmake --build $(CTEST_DIR) -j2
	cd $(CTEST_DIR) && PATH=$(STAGE)/bin:$$PATH ctest --output-on-failure -j2 --timeout 120

# Only API symbols may be exported from the library, each at its version node.
check-exports: build
	@bash scripts/check-exports.sh $(TARGET)

# cbindgen's headers: (config, Rust source, committed header) for each.
HEADERS := cbindgen.toml:src/abi/rshmem.rs:include/rshmem/rshmem_abi.h \
           cbindgen-ibgda.toml:src/abi/ibgda.rs:device/ibgda/ibgda_state.h

header:
	@for h in $(HEADERS); do IFS=: read -r cfg src out <<< "$$h"; \
	    $(CBINDGEN) -q --config $$cfg --output $$out $$src || exit 1; done

check-header:
	@mkdir -p build; for h in $(HEADERS); do IFS=: read -r cfg src out <<< "$$h"; \
	    $(CBINDGEN) -q --config $$cfg --output build/$$(basename $$out).new $$src || exit 1; \
	    diff -u $$out build/$$(basename $$out).new || exit 1; done; echo "cbindgen headers: up to date"

test: deps lint unit-test check-exports ctest

run: deps stage
	PKG_CONFIG_PATH=$(STAGE)/lib/pkgconfig $(MAKE) --no-print-directory -C perftest/host STAGE=$(STAGE)
	$(STAGE)/bin/rshmemrun -n $(NP) perftest/host/build/shmem_bench

bench: deps stage
	bash perftest/host/bench.sh $(STAGE)

# Needs no Rust: RSHMEM_PREFIX is an rshmem install built elsewhere (default build/stage).
bench-compare:
	bash scripts/bench_compare.sh $(BENCH_COMPARE_ARGS)

clean:
	$(CARGO) clean
	rm -rf build
