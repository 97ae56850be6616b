# twoface: build, test, install. See README.md.
#
# Sources are discovered by directory so that adding a module never needs a
# Makefile edit:
#   format/*.c mpi/*.c planner/*.c executor/*.c baselines/*.c calibrate/*.c context/*.c -> libtwoface
#   format/plugin/*.c  -> HDF5 zstd filter plugin
#   cli/main_*.c       -> the programs: cli/main_X.c is twoface-X
#   cli/*.c (others)   -> option parsing and reports of the programs (libtwoface-cli.a,
#                         linked into the programs only, never installed)
#   tests/test_*.c   -> serial Check suites         tests/mpi_*.c -> MPI Check suites
#   tests/util_*.c   -> linked into every test       tests/e2e_*.sh -> end-to-end scripts

PREFIX ?= /usr/local
BUILD ?= build
CC = mpicc
DEPS_PKGS = libopenmpi-dev openmpi-bin libhdf5-dev hdf5-tools libzstd-dev zstd check pkg-config zlib1g-dev \
            libmetis-dev libptscotch-dev

PKGS = hdf5-serial libzstd zlib
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS = $(shell pkg-config --libs $(PKGS) 2>/dev/null)
CHECK_CFLAGS = $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS = $(shell pkg-config --libs check 2>/dev/null)

OPT ?= -O2
SAN_FLAGS =
ifeq ($(SAN),1)
SAN_FLAGS = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
OPT = -O1
endif
CFLAGS_BASE = -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -g $(OPT) -Wall -Wextra \
              -fopenmp -fPIC $(SAN_FLAGS)
INCLUDES = -Iinclude -Iformat -Impi -Iplanner -Iexecutor -Ibaselines -Icalibrate -Icontext -Icli
CFLAGS_ALL = $(CFLAGS_BASE) $(INCLUDES) $(PKG_CFLAGS) $(SCOTCH_CFLAGS) $(CFLAGS)
# METIS (--partition metis, planner/tf_partition_metis.c) ships no pkg-config file.
METIS_LIBS = -lmetis
# PT-Scotch (--partition metis on more than one planning rank,
# planner/tf_dist_partition.c): Debian's default 32-bit SCOTCH_Num flavour.
SCOTCH_CFLAGS = -I/usr/include/scotch
SCOTCH_LIBS = -lptscotch -lscotch -lptscotcherr
LDLIBS_ALL = $(PKG_LIBS) $(METIS_LIBS) $(SCOTCH_LIBS) -lm $(SAN_FLAGS) -fopenmp

LIB_OBJ = $(patsubst %.c,$(BUILD)/obj/%.o,$(LIB_SRC))
PLUGIN_SRC = $(wildcard format/plugin/*.c)
PROG_MAINS = $(wildcard cli/main_*.c)
LIB_SRC = $(wildcard format/*.c mpi/*.c planner/*.c executor/*.c baselines/*.c calibrate/*.c context/*.c)
PROGS = $(foreach f,$(PROG_MAINS),$(BUILD)/bin/twoface-$(patsubst main_%.c,%,$(notdir $(f))))
TEST_UTIL_OBJ = $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard tests/util_*.c))
TESTS = $(patsubst tests/%.c,$(BUILD)/tests/%,$(wildcard tests/test_*.c tests/mpi_*.c))
EXAMPLES = $(patsubst examples/%.c,$(BUILD)/examples/%,$(wildcard examples/*.c))

STATIC_LIB = $(BUILD)/lib/libtwoface.a
CLI_LIB = $(BUILD)/lib/libtwoface-cli.a
CLI_OBJ = $(patsubst %.c,$(BUILD)/obj/%.o,$(filter-out $(PROG_MAINS),$(wildcard cli/*.c)))
SHARED_LIB = $(BUILD)/lib/libtwoface.so
PLUGIN = $(if $(PLUGIN_SRC),$(BUILD)/hdf5-plugins/libh5zstd.so)
# h5dump with the plugin's absolute path set (format/plugin/twoface-h5dump.in).
H5DUMP = $(if $(PLUGIN_SRC),$(BUILD)/bin/twoface-h5dump)

# Keep objects of tests and programs between runs.
.SECONDARY:

.PHONY: all deps deps-quiet tests check sanitize demo install clean bench fuzz calibrate bench-petsc
all: deps-quiet $(STATIC_LIB) $(SHARED_LIB) $(PLUGIN) $(H5DUMP) $(PROGS) $(EXAMPLES)
tests: $(TESTS)

# Checks first (instant when everything is present), installs what is missing.
# Every rule that runs the compiler has deps-quiet as an order-only
# prerequisite (after the |): under make -j nothing compiles before the
# compiler is installed, and nothing is rebuilt because the step ran.
# tests/e2e_make.sh checks that with a slow stand-in for DEPS_CMD.
DEPS_CMD ?= sh .ci/deps.sh
deps:
	@$(DEPS_CMD) $(DEPS_PKGS)
deps-quiet:
	@$(DEPS_CMD) $(DEPS_PKGS) >/dev/null

# Objects depend on the compiler and flags they were built with, recorded in
# $(BUILD)/.cflags and rewritten only when they change: a build directory kept
# across a change of flags (a new -D in the SMPI block, say) is rebuilt
# instead of mixing objects compiled two ways, which fails only at run time.
FLAGS_STAMP = $(BUILD)/.cflags
$(FLAGS_STAMP): FORCE
	@mkdir -p $(dir $@)
	@echo '$(CC) $(CFLAGS_ALL) $(CHECK_CFLAGS)' | cmp -s - $@ || \
	  echo '$(CC) $(CFLAGS_ALL) $(CHECK_CFLAGS)' >$@
.PHONY: FORCE
FORCE:

# -MT: the dependency file names the target as make does; smpicc would
# otherwise write it as an absolute path, which make never matches, and a
# changed header would not rebuild the simulated build's objects.
$(BUILD)/obj/%.o: %.c $(FLAGS_STAMP) | deps-quiet
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -MMD -MP -MT $@ -c $< -o $@

$(STATIC_LIB): $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(CLI_LIB): $(CLI_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(SHARED_LIB): $(LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) -shared -o $@ $^ $(LDLIBS_ALL)

$(PLUGIN): $(PLUGIN_SRC) format/tf_h5zstd.c format/tf_h5zstd.h | deps-quiet
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -shared -o $@ $(PLUGIN_SRC) format/tf_h5zstd.c format/tf_error.c $(LDLIBS_ALL)

$(H5DUMP): format/plugin/twoface-h5dump.in
	@mkdir -p $(dir $@)
	sed -e 's|@PLUGIN_DIR@|$(abspath $(BUILD))/hdf5-plugins|g' $< > $@ && chmod 755 $@

$(BUILD)/bin/twoface-%: $(BUILD)/obj/cli/main_%.o $(CLI_LIB) $(STATIC_LIB)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $< $(CLI_LIB) $(STATIC_LIB) $(LDLIBS_ALL)

$(BUILD)/tests/%: $(BUILD)/obj/tests/%.o $(TEST_UTIL_OBJ) $(STATIC_LIB)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $< $(TEST_UTIL_OBJ) $(STATIC_LIB) $(CHECK_LIBS) $(LDLIBS_ALL)
$(BUILD)/obj/tests/%.o: tests/%.c $(FLAGS_STAMP) | deps-quiet
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(CHECK_CFLAGS) -Itests -MMD -MP -MT $@ -c $< -o $@

$(BUILD)/examples/%: examples/%.c $(STATIC_LIB) | deps-quiet
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(STATIC_LIB) $(LDLIBS_ALL)

# The README's test command. Prints every Check summary line and a total.
check: all tests
	@BUILD=$(BUILD) sh tests/run_tests.sh

sanitize:
	@$(MAKE) --no-print-directory BUILD=build-san SAN=1 check

demo: all
	@BUILD=$(BUILD) sh examples/demo.sh

calibrate: all
	@BUILD=$(BUILD) sh calibrate/run.sh

bench: all
	@BUILD=$(BUILD) sh bench/run

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include \
	  $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/lib/hdf5/plugins
	install -m 755 $(PROGS) $(DESTDIR)$(PREFIX)/bin/
	install -m 644 $(STATIC_LIB) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(SHARED_LIB) $(DESTDIR)$(PREFIX)/lib/
	install -m 644 include/twoface.h $(DESTDIR)$(PREFIX)/include/
	install -m 755 $(PLUGIN) $(DESTDIR)$(PREFIX)/lib/hdf5/plugins/
	sed -e 's|@PLUGIN_DIR@|$(PREFIX)/lib/hdf5/plugins|g' format/plugin/twoface-h5dump.in \
	  > $(DESTDIR)$(PREFIX)/bin/twoface-h5dump && chmod 755 $(DESTDIR)$(PREFIX)/bin/twoface-h5dump
	sed -e 's|@PREFIX@|$(PREFIX)|g' twoface.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/twoface.pc

clean:
	rm -rf build build-san build-fuzz build-smpi

# ---- Python module (python/twoface, docs/python.md) ----------------------------
# make check runs its pytest suite (tests/python) under Debian's python, so it
# installs Debian's torch, mpi4py and pytest first (about 800 MB on disk, about
# a minute here; docs/python.md). `make` alone does not need them.
# make install puts the module into PYTHON's site directory for PREFIX
# (/usr/local -> /usr/local/lib/python3.X/dist-packages, in Debian python's
# sys.path; another PREFIX -> PREFIX/lib/python3.X/site-packages, for
# PYTHONPATH) and records the installed library's path in twoface/_install.py.
PYTHON ?= /usr/bin/python3
PY_DEPS_PKGS = python3-torch python3-mpi4py python3-pytest python3-scipy
PYTHON_SITE ?= $(shell $(PYTHON) -c 'import sysconfig as s; p = "$(PREFIX)"; \
  local = p == "/usr/local" and "posix_local" in s.get_scheme_names(); \
  b = "/usr" if local else p; \
  print(s.get_path("purelib", "posix_local" if local else "posix_prefix", {"base": b, "platbase": b}))')
.PHONY: deps-python install-python
# After deps-quiet: two apt-get runs at once would fight over the dpkg lock.
deps-python: | deps-quiet
	@$(DEPS_CMD) $(PY_DEPS_PKGS) >/dev/null
check: deps-python
install: install-python
install-python:
	@test -n "$(PYTHON_SITE)" || { echo "install-python: $(PYTHON) gave no site directory"; exit 1; }
	install -d $(DESTDIR)$(PYTHON_SITE)/twoface
	install -m 644 python/twoface/*.py $(DESTDIR)$(PYTHON_SITE)/twoface/
	printf '"""Written by make install."""\nLIBRARY = %s\n' "'$(PREFIX)/lib/libtwoface.so'" \
	  > $(DESTDIR)$(PYTHON_SITE)/twoface/_install.py

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)

# make bench-petsc: PETSc as an external peer (bench/petsc_spmm.c, bench/petsc.sh).
# Installs libpetsc-real-dev (apt, ~210 MB) when missing, builds
# $(BUILD)/bench/petsc-spmm with PETSc's own flags only (never libtwoface: PETSc
# links the MPI flavour of HDF5), then runs bench/petsc.sh against twoface-exec
# (PETSC_RUN=0: build only; GRAPHS, PS, KS, TARGET, REPS, PARTITION: see the script).
PETSC_BIN = $(BUILD)/bench/petsc-spmm
$(PETSC_BIN): bench/petsc_spmm.c
	@sh .ci/deps.sh libpetsc-real-dev
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -Wall -Iformat -o $@ bench/petsc_spmm.c $$(pkg-config --cflags --libs PETSc) -lm
bench-petsc: all $(PETSC_BIN)
	@if [ "$${PETSC_RUN:-1}" = 1 ]; then BUILD=$(BUILD) sh bench/petsc.sh; fi

# ---- Fuzzing -------------------------------------------------------------------
# make fuzz [FUZZ_SECONDS=60]: the libFuzzer targets tests/fuzz/fuzz_*.c, built
# with clang, AddressSanitizer and UBSan into build-fuzz/ (the format/ sources
# they need are compiled in; no MPI), each run for FUZZ_SECONDS from its seeds in
# tests/fuzz/corpus_*/ by tests/fuzz/run.sh. Findings: build-fuzz/crashes/.
FUZZ_SECONDS ?= 60
FUZZ_BUILD ?= build-fuzz
FUZZ_CC ?= clang
FUZZ_CFLAGS = -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -g -O1 \
              -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined \
              -fno-sanitize-recover=undefined -Iformat -Iplanner \
              $(shell pkg-config --cflags hdf5-serial 2>/dev/null)
FUZZ_SRC = $(wildcard format/*.c)
FUZZ_TARGETS = $(patsubst tests/fuzz/%.c,$(FUZZ_BUILD)/%,$(wildcard tests/fuzz/fuzz_*.c))

$(FUZZ_BUILD)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_oracles.h $(FUZZ_SRC) \
                      $(wildcard format/*.h)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $< $(FUZZ_SRC) $(PKG_LIBS) -lm -lpthread

fuzz:
	@sh .ci/deps.sh $(DEPS_PKGS) clang libclang-rt-14-dev >/dev/null
	@$(MAKE) --no-print-directory $(FUZZ_TARGETS)
	@sh tests/fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

# ---- Kernels ------------------------------------------------------------------
# The kernels' instruction-set variants (executor/tf_kern_{baseline,avx2,avx512}.c)
# each get their own target flags; executor/tf_kernels.c picks one at run time
# (TF_KERNEL=baseline|avx2|avx512 forces one). -ffp-contract=off: no FMA, so that
# every variant gives bitwise the same C (docs/executor.md, "Kernels").
# The same flags serve every dispatched loop (also gnn's dense products).
KERN_FLAGS_AVX2 = -mavx2 -mfma
KERN_FLAGS_AVX512 = -mavx512f -mavx512vl -mavx2 -mfma -mprefer-vector-width=512
ifeq ($(shell uname -m),x86_64)
$(BUILD)/obj/executor/tf_kern_avx2.o: CFLAGS_ALL += $(KERN_FLAGS_AVX2)
$(BUILD)/obj/executor/tf_kern_avx512.o: CFLAGS_ALL += $(KERN_FLAGS_AVX512)
endif
$(BUILD)/obj/executor/tf_kern_%.o: CFLAGS_ALL += -ffp-contract=off

# make bench-kernels: bench/kernels.c times our kernels (every variant the CPU
# runs), Eigen and librsb (untuned and after rsb_tune_spmm) on the same CSR, in
# one process, interleaved (docs/benchmarks.md, "Kernels against Eigen and
# librsb"). The peers are benchmark-only dependencies: this target installs
# libeigen3-dev and librsb-dev when missing, the build never needs them. Eigen
# is compiled as its users would for speed (-O3 -march=native). KERNELS_RUN=0:
# build only; GRAPHS, KS, THREADS: see bench/kernels.sh.
KERNELS_BENCH = $(BUILD)/bench/kernels
$(BUILD)/bench/kernels_eigen.o: bench/kernels_eigen.cpp bench/kernels_peers.h
	@sh .ci/deps.sh libeigen3-dev librsb-dev >/dev/null
	@mkdir -p $(dir $@)
	g++ -std=c++14 -O3 -march=native -DNDEBUG -fopenmp -Wall -Wextra \
	  $$(pkg-config --cflags-only-I eigen3 | sed 's/-I/-isystem /g') -c $< -o $@
$(KERNELS_BENCH): bench/kernels.c bench/kernels_rsb.c bench/kernels_peers.h \
                  $(BUILD)/bench/kernels_eigen.o $(STATIC_LIB)
	$(CC) $(CFLAGS_ALL) -Ibench $$(pkg-config --cflags librsb) -o $@ bench/kernels.c \
	  bench/kernels_rsb.c $(BUILD)/bench/kernels_eigen.o $(STATIC_LIB) \
	  $$(pkg-config --libs librsb) -lstdc++ $(LDLIBS_ALL)
# kernels-knobs (x86-64 only): the AVX-512 CSR kernel once per knob setting
# (bench/kernels_knobs.c).
KNOBS = base pf4 pf8 pf16 p64 p128 p256 fma
KNOB_pf4 = -DTF_KERN_PREFETCH=4
KNOB_pf8 = -DTF_KERN_PREFETCH=8
KNOB_pf16 = -DTF_KERN_PREFETCH=16
KNOB_p64 = -DTF_KERN_PANEL=64
KNOB_p128 = -DTF_KERN_PANEL=128
KNOB_p256 = -DTF_KERN_PANEL=256
KNOB_fma = -ffp-contract=fast
$(BUILD)/bench/knob_%.o: bench/kernels_knob.c executor/tf_kern_loops.h executor/tf_kern_variants.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -ffp-contract=off $(KERN_FLAGS_AVX512) $(KNOB_$*) \
	  -DTF_KERN_OPS=knob_$* -DTF_KERN_NAME='"$*"' -c $< -o $@
$(BUILD)/bench/kernels-knobs: bench/kernels_knobs.c $(patsubst %,$(BUILD)/bench/knob_%.o,$(KNOBS)) \
                              $(STATIC_LIB)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(patsubst %,$(BUILD)/bench/knob_%.o,$(KNOBS)) $(STATIC_LIB) \
	  $(LDLIBS_ALL)
KNOBS_BENCH = $(if $(filter x86_64,$(shell uname -m)),$(BUILD)/bench/kernels-knobs)
bench-kernels: all $(KERNELS_BENCH) $(KNOBS_BENCH)
	@if [ "$${KERNELS_RUN:-1}" = 1 ]; then BUILD=$(BUILD) sh bench/kernels.sh; fi
.PHONY: bench-kernels
# ---- end kernels ---------------------------------------------------------------

# make bench-h5-floor: what HDF5 costs a fresh process for a file written the
# way the plan writer writes it: empty, and pubmed's 21 part datasets of 64
# chunks, five processes each (bench/h5_objects.c; docs/scale.md, "Planning
# at scale").
$(BUILD)/bench/h5_objects: bench/h5_objects.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(PKG_LIBS)
bench-h5-floor: $(BUILD)/bench/h5_objects
	@cd $(BUILD)/bench && for a in "0 1 1" "21 64 1000"; do \
	  for i in 1 2 3 4 5; do H5_OBJECTS_INCREMENT_KIB=768 ./h5_objects $$a | tr '\n' ' '; \
	  echo; done; done
.PHONY: bench-h5-floor

# ---- GNN training (gnn/, docs/gnn.md) ------------------------------------------
# gnn/*.c -> $(BUILD)/lib/libtwoface-gnn.a, linked into
# twoface-gcn (cli/main_gcn.c) and into the tests named tests/test_gnn_*.c and tests/mpi_gnn_*.c
# (the rules below have shorter stems than the general test rule, so make picks them).
GNN_SRC = $(wildcard gnn/*.c)
GNN_OBJ = $(patsubst %.c,$(BUILD)/obj/%.o,$(GNN_SRC))
GNN_LIB = $(BUILD)/lib/libtwoface-gnn.a
GCN_BIN = $(BUILD)/bin/twoface-gcn
INCLUDES += -Ignn
# The dense products' instruction-set variants (gnn/tf_gnn_dense_{baseline,avx2,
# avx512}.c) get the executor kernels' target flags; gnn/tf_gnn_dense.c runs
# the variant the kernels run. -ffp-contract=off: bitwise the same results.
ifeq ($(shell uname -m),x86_64)
$(BUILD)/obj/gnn/tf_gnn_dense_avx2.o: CFLAGS_ALL += $(KERN_FLAGS_AVX2)
$(BUILD)/obj/gnn/tf_gnn_dense_avx512.o: CFLAGS_ALL += $(KERN_FLAGS_AVX512)
endif
$(BUILD)/obj/gnn/tf_gnn_dense_%.o: CFLAGS_ALL += -ffp-contract=off
all: $(GCN_BIN)

$(GNN_LIB): $(GNN_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^
$(GCN_BIN): $(BUILD)/obj/cli/main_gcn.o $(CLI_LIB) $(GNN_LIB) $(STATIC_LIB)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $< $(CLI_LIB) $(GNN_LIB) $(STATIC_LIB) $(LDLIBS_ALL)
$(BUILD)/tests/test_gnn_%: $(BUILD)/obj/tests/test_gnn_%.o $(TEST_UTIL_OBJ) $(GNN_LIB) $(STATIC_LIB)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $< $(TEST_UTIL_OBJ) $(GNN_LIB) $(STATIC_LIB) $(CHECK_LIBS) $(LDLIBS_ALL)
$(BUILD)/tests/mpi_gnn_%: $(BUILD)/obj/tests/mpi_gnn_%.o $(TEST_UTIL_OBJ) $(GNN_LIB) $(STATIC_LIB)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $< $(TEST_UTIL_OBJ) $(GNN_LIB) $(STATIC_LIB) $(CHECK_LIBS) $(LDLIBS_ALL)

# ---- SimGrid SMPI (docs/scale.md) ----------------------------------------------
# make smpi: libtwoface, twoface-exec, twoface-calibrate, twoface-plan and
# twoface-gcn compiled with smpicc into build-smpi/, to run the real executor,
# planner and trainer on a simulated cluster (bench/smpi/run.sh, plan.sh, gcn.sh). SMPI 3.32 has no
# neighbourhood collectives, so this build defaults to the MPI_Ialltoall{v,w}
# exchange (executor/tf_exchange.h); SMPI's malloc interception is off (it
# redefines malloc before <stdlib.h>); the collective's warm-up is 2 exchanges
# (nothing to warm in a simulated MPI); smpirun sets none of the launcher
# variables twoface-plan looks for, so TF_PLAN_ALWAYS_MPI makes it plan on the
# simulated ranks; the collective packs every send (TF_COLL_PACK_ALWAYS,
# also the default build's default, fixed here whatever that default becomes)
# because SMPI gathers a derived datatype outside simulated time, while a
# copy is a timed CPU burst, as p2p's pack is. The collective's shared-memory
# transport is compiled out (TF_COLL_SHM_UNAVAILABLE): a simulated cluster has
# one rank per host, so it always takes the MPI exchange.
# Installs libsimgrid-dev when missing.
SMPI_BUILD ?= build-smpi
ifeq ($(SMPI),1)
CFLAGS_BASE += -DTF_EXCHANGE_DEFAULT_ALLTOALL -DSMPI_NO_OVERRIDE_MALLOC -DTF_COLL_WARM_MAX=2 -DTF_COLL_SHM_UNAVAILABLE \
               -DTF_PLAN_ALWAYS_MPI -DTF_SIM_SHARED_HEAP -DTF_COLL_PACK_DEFAULT=TF_COLL_PACK_ALWAYS -DTF_MPI_WAIT_BLOCKING
endif
.PHONY: smpi
smpi:
	@sh .ci/deps.sh $(DEPS_PKGS) libsimgrid-dev gnuplot-nox >/dev/null
	@$(MAKE) --no-print-directory BUILD=$(SMPI_BUILD) CC=smpicc SMPI=1 \
	  $(SMPI_BUILD)/bin/twoface-exec $(SMPI_BUILD)/bin/twoface-calibrate $(SMPI_BUILD)/bin/twoface-plan \
	  $(SMPI_BUILD)/bin/twoface-gcn
