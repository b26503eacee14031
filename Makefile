# SPDX-License-Identifier: MIT
#
# dvx top-level Makefile.
#
# One make process reads every directory's Kbuild fragment (obj-y, obj-$(CONFIG_X),
# tools-y, tests-y, bench-y) and builds everything out of tree under $(O).
#
#   make defconfig            write $(O)/.config from configs/defconfig (auto-detected)
#   make foo_defconfig        same from configs/foo_defconfig
#   make [all]                libdvx.a, tools, tests, benchmarks and plugins
#                             (libnccl-net-dvx.so, docs/nccl.md)
#   make check                build and run every test, print the runner's summary;
#                             JUNIT=dir also leaves dir/<binary>.xml (JUnit) per binary
#   make sanitize             the suite under ASan+UBSan, the threaded tests under TSan
#   make check-procs          the P2P transport's suites and the soak with ranks as
#                             processes on the software NIC's wire: forked and under
#                             mpirun with 4 and 8, the soak ending with a rank killed
#                             (scripts/check-procs.sh)
#   make soak                 the long soak: SOAK_OPS (10^7) operations with random faults,
#                             8 ranks, strict, overlapping faults (tests/soak, SOAK_SEED=)
#   make soak-procs           P2P, messaging and the host transport together as processes
#                             on the wire: SOAK_OPS operations, faults, a rank killed,
#                             reorder mode with a random seed (SOAK_REORDER=)
#                             (tests/soak/test_soak_procs.c; short in make check)
#   make fuzz                 coverage-guided libFuzzer harnesses (tests/fuzz/lf/, clang,
#                             build folder $(O)-fuzz): replay tests/fuzz/regress, fuzz each
#                             for FUZZ_RUNS executions (10^6), FUZZ_SECONDS (600) at most,
#                             print a table that names a harness the cap stopped
#                             (scripts/fuzz.sh)
#   make fuzz-ci              the same for FUZZ_SECONDS=10 each, no count (CI)
#   make fuzzers              only build the harnesses into $(O)/fuzz/ (needs CC=clang and
#                             SAN=fuzzer-no-link,...; scripts/fuzz.sh passes both)
#   make gpu-check            the GPU tests only (fail, not skip, without a GPU)
#   make check-install        install to a scratch prefix, build and run an example
#                             against it (shared and fully static), move it, again
#   make check-man            the man pages (man/): installed, one per installed tool,
#                             render without warnings, agree with --help (scripts/check-man.sh)
#   make install              PREFIX=/usr/local DESTDIR= : headers, libdvx.a, dvx.pc,
#                             libnccl-net-dvx.so,
#                             libdvx-test.a, dvx-test.pc,
#                             tools, man pages, docs, examples, LICENSE
#   make uninstall            remove what install installed
#   make clean | distclean    remove the objects | the whole $(O)
#   make savedefconfig        write $(O)/defconfig from $(O)/.config
#   make help                 this text
# Variables: O=dir (build folder, default build), V=1 (show commands), C=1 (check each
# library object compiled with sparse; its warnings fail the build), SAN=address,...
# (sanitizer build), EXTRA_CFLAGS=, PREFIX=, DESTDIR=, TESTS="a b" (run only these
# test binaries; a name that matches no binary is an error), DVX_TEST_TIMEOUT=s,
# JUNIT=dir (make check, gpu-check: a JUnit XML file per test binary, the console as
# without it; scripts/run-tests.sh, scripts/check-junit.sh),
# FUZZ_RUNS=n (executions per harness; 0: time only), FUZZ_SECONDS=s (per harness, the
# cap), FUZZ_HARNESSES="a b" (run only these harnesses), FUZZ_FULL=1 (every object of a
# harness with comparison tracing, its carriers too).

MAKEFLAGS += -rR --no-print-directory
.SUFFIXES:
.DELETE_ON_ERROR:
.SECONDEXPANSION:

srctree := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
O ?= build
objtree := $(abspath $(O))

ifeq ($(V),1)
Q :=
quiet = @true
else
Q := @
quiet = @printf '  %-8s %s\n' '$(1)' '$(patsubst $(objtree)/%,%,$(patsubst $(srctree)/%,%,$(2)))'
endif

PREFIX ?= /usr/local
DESTDIR ?=
CUDA_HOME ?= /usr/local/cuda

CC ?= cc
ifeq ($(origin CC),default)
CC := cc
endif
AR := ar
CXX ?= c++
ifeq ($(origin CXX),default)
CXX := c++
endif
NVCC ?= $(CUDA_HOME)/bin/nvcc
PKG_CONFIG ?= pkg-config

# ---------------------------------------------------------------------------
# Configuration: $(O)/.config -> $(O)/include/generated/autoconf.h

KCONFIG := $(objtree)/.config
AUTOCONF := $(objtree)/include/generated/autoconf.h

config-targets := defconfig %_defconfig savedefconfig
no-config-targets := clean distclean help fuzz fuzz-ci
ifneq ($(filter-out $(config-targets) $(no-config-targets),$(if $(MAKECMDGOALS),$(MAKECMDGOALS),all)),)
ifeq ($(wildcard $(KCONFIG)),)
$(info dvx: no $(O)/.config yet, running 'make defconfig' first)
$(shell $(srctree)/scripts/kconfig.sh defconfig $(srctree)/configs/defconfig $(objtree) >&2)
endif
endif
-include $(KCONFIG)

# ---------------------------------------------------------------------------
# Flags

WARN := -Wall -Wextra -Werror -Wundef -Wstrict-prototypes -Wmissing-prototypes \
	-Wshadow -Wpointer-arith -Wcast-align -Wwrite-strings -Wno-unused-parameter \
	-Wvla -Wimplicit-fallthrough
OPT ?= -O2 -g
# Sanitizer builds: make SAN=address,undefined O=build-asan check
ifneq ($(SAN),)
OPT += -fsanitize=$(SAN) -fno-omit-frame-pointer
LDSAN := -fsanitize=$(SAN)
endif
DVX_CPPFLAGS := -I$(objtree)/include -I$(srctree)/include -include $(AUTOCONF) -D_GNU_SOURCE
DVX_CFLAGS := -std=c11 $(OPT) $(WARN) -fno-common -pthread $(EXTRA_CFLAGS)

CUDA_CPPFLAGS := -I$(CUDA_HOME)/include
DPDK_CFLAGS := $(shell $(PKG_CONFIG) --cflags libdpdk 2>/dev/null)

LDLIBS := -pthread -ldl
PC_REQUIRES :=		# what dvx.pc's Requires.private names (scripts/gen-pc.sh)
ifeq ($(CONFIG_DVX_RDMA),y)
LDLIBS += $(shell $(PKG_CONFIG) --libs libibverbs libmlx5 2>/dev/null || echo -libverbs -lmlx5)
PC_REQUIRES += libibverbs libmlx5
endif
ifeq ($(CONFIG_DVX_DPDK),y)
LDLIBS += -lrte_eal	# the tests link hal/dpdk.c; users who call dvx_dpdk_enable() link DPDK
endif
# MPI (the bootstrap's MPI adapter): the first of these pkg-config names that exists
ifeq ($(CONFIG_DVX_MPI),y)
MPI_PC := $(firstword $(foreach p,mpi-c ompi-c mpich,$(shell $(PKG_CONFIG) --exists $(p) 2>/dev/null && echo $(p))))
MPI_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(MPI_PC) 2>/dev/null)
MPI_LIBS := $(shell $(PKG_CONFIG) --libs $(MPI_PC) 2>/dev/null)
LDLIBS += $(MPI_LIBS)	# dvx.pc does not name it: a program that calls the adapter links MPI
endif
CMOCKA_LIBS := $(shell $(PKG_CONFIG) --libs cmocka 2>/dev/null || echo -lcmocka)

# sparse (make C=1): every library object compiled in this run is also checked by
# sparse, whose warnings fail the build: the dvx_be* types are bitwise to it
# (dvx/byteorder.h), so arithmetic on a big-endian value or mixing it with a CPU-order
# one is an error. Casts between them say so with DVX_FORCE.
CHECK ?= sparse
CHECKFLAGS := -D__linux__ -D__x86_64__ -m64 -Wbitwise -Wno-decl -Wno-cast-truncate \
	-Wsparse-error -fdiagnostic-prefix=sparse
sparse-run = $(call quiet,CHECK,$(2))$(newline)	$(Q)$(CHECK) $(CHECKFLAGS) $(DVX_CPPFLAGS) \
	$(filter-out -W% -f% -O% -g% -march% -mtune%,$(call obj-flags,$(1))) $(2)
define newline


endef

# ---------------------------------------------------------------------------
# Kbuild fragments

lib-dirs := hal mlx5 gpu core
other-dirs := tools tests bench

# $(call read-kbuild,dir): read dir/Kbuild; objects land in objs-<dir>, subdirectories
# named as "sub/" in obj-y are read recursively.
define read-kbuild
obj-y :=
obj-n :=
obj- :=
ccflags-y :=
subdir-objs :=
include $(srctree)/$(1)/Kbuild
objs-$(1) := $$(addprefix $(objtree)/$(1)/,$$(filter %.o,$$(obj-y)))
ccflags-$(1) := $$(ccflags-y)
subdirs-$(1) := $$(patsubst %/,$(1)/%,$$(filter %/,$$(obj-y)))
$$(foreach s,$$(subdirs-$(1)),$$(eval $$(call read-kbuild,$$(s))))
all-lib-objs += $$(objs-$(1))
endef

all-lib-objs :=
$(foreach d,$(lib-dirs),$(eval $(call read-kbuild,$(d))))

# tools/Kbuild: tools-y += name ; name-objs := a.o b.o (relative to tools/)
tools-y :=
include $(srctree)/tools/Kbuild
tool-bins := $(addprefix $(objtree)/tools/,$(tools-y))

# tests/Kbuild: tests-y += name ; name-srcs := tree-relative sources it links ;
# name-wrap := symbols to --wrap ; name-libs := extra libraries
tests-y :=
gpu-tests-y :=	# tests that need a real GPU (also in tests-y); 'make gpu-check' runs them
fuzz-y :=	# libFuzzer harnesses (tests/fuzz/Kbuild): name-srcs as for tests
include $(srctree)/tests/Kbuild
test-bins := $(addprefix $(objtree)/tests/,$(tests-y))
fuzz-bins := $(addprefix $(objtree)/fuzz/,$(fuzz-y))

# bench/Kbuild: bench-y += name ; name-srcs := tree-relative sources
bench-y :=
include $(srctree)/bench/Kbuild
bench-bins := $(addprefix $(objtree)/bench/,$(bench-y))

# plugins/: libraries other programs load. libnccl-net-dvx.so, NCCL's network plugin
# (plugins/nccl, docs/nccl.md), links a PIC build of the library ($(O)/pic/) statically:
# it needs no libdvx.so at run time and exports only NCCL's four tables.
PLUGIN_NCCL := $(objtree)/plugins/nccl/libnccl-net-dvx.so
plugin-nccl-objs := $(addprefix $(objtree)/plugins/nccl/,net.o handle.o sw.o gdr.o copier.o exports.o)
# dvx-copier: the plugin's copies into GPU memory in a process of their own
# (plugins/nccl/copier.h), spawned from beside the plugin or $(PREFIX)/libexec/dvx/
COPIER := $(objtree)/plugins/nccl/dvx-copier
PICLIB := $(objtree)/pic/libdvx-pic.a
pic-objs := $(patsubst $(objtree)/%,$(objtree)/pic/%,$(all-lib-objs))
plugins-y := $(if $(filter y,$(CONFIG_DVX_SIM)),$(PLUGIN_NCCL) $(COPIER))

LIB := $(objtree)/libdvx.a
# libdvx-test.a: what users' own test suites link beside libdvx.a (testing/: the
# mock hal, the ConnectX-7 mock model, fault sweeps, the host transport's interface mock;
# docs/testing.md)
TESTLIB := $(objtree)/libdvx-test.a
# the mock hal (hal/mock/Kbuild) is a test double: built into libdvx-test.a only, never
# into the appliance archive (scripts/check-exports.sh --product holds that)
obj-y :=
include $(srctree)/hal/mock/Kbuild
mock-objs := $(addprefix $(objtree)/hal/mock/,$(obj-y))
testlib-objs := $(addprefix $(objtree)/testing/,cx7.o sweep.o ht_mock.o) $(mock-objs)
# built and installed only with the mock it serves (CONFIG_DVX_MOCK)
testlib-y := $(if $(filter y,$(CONFIG_DVX_MOCK)),$(TESTLIB) $(objtree)/dvx-test.pc)

# ---------------------------------------------------------------------------
# Rules

.PHONY: all lib tools tests bench plugins check check-procs sanitize soak soak-procs fuzz fuzz-ci fuzzers gpu-check check-install check-man install uninstall clean distclean help \
	defconfig savedefconfig FORCE

all: lib tools tests bench plugins

lib: $(LIB) $(objtree)/dvx.pc $(testlib-y)
tools: $(tool-bins)
tests: $(test-bins)
bench: $(bench-bins)
plugins: $(plugins-y)

dir-of = $(patsubst $(objtree)/%/,%,$(dir $(1)))
# flags for an object: the ccflags-y of the Kbuild that named it, and CFLAGS_<file>.o
obj-flags = $(ccflags-$(call dir-of,$(1))) $(CFLAGS_$(notdir $(1)))

$(objtree)/%.o: $(srctree)/%.c $(AUTOCONF)
	$(call quiet,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(DVX_CPPFLAGS) $(DVX_CFLAGS) $(call obj-flags,$@) -MMD -MP -MF $(@:.o=.d) -c -o $@ $<
	$(if $(and $(filter 1,$(C)),$(filter $(lib-c-objs) $(mock-objs) $(testlib-objs),$@)),$(call sparse-run,$@,$<))

$(AUTOCONF): $(KCONFIG) $(srctree)/scripts/kconfig.sh
	$(call quiet,GEN,$@)
	$(Q)$(srctree)/scripts/kconfig.sh autoconf $(KCONFIG) $(objtree)

# The library may not allocate: no object from mlx5/ or core/ may reference an
# allocator, and each layer includes only the layers below it.
$(objtree)/.alloc-check: $(filter $(objtree)/mlx5/% $(objtree)/core/%,$(all-lib-objs)) \
		$(srctree)/scripts/check-alloc.sh
	$(call quiet,CHECK,no hidden allocation)
	$(Q)$(srctree)/scripts/check-alloc.sh $(filter %.o,$^)
	$(Q)touch $@

layer-srcs = $(shell find $(addprefix $(srctree)/,$(lib-dirs) include tools tests bench testing plugins) \
	-name '*.[ch]' -o -name '*.cu' -o -name '*.cuh' 2>/dev/null)
$(objtree)/.layer-check: $(srctree)/scripts/check-layers.sh $(srctree)/scripts/check-fields.sh \
		$$(layer-srcs)
	$(call quiet,CHECK,layering)
	$(Q)$(srctree)/scripts/check-layers.sh $(srctree)
	$(Q)$(srctree)/scripts/check-fields.sh $(srctree)
	$(Q)mkdir -p $(@D) && touch $@

# No file cycles: inside each folder, no loop of files calling each other (nm of the
# objects; scripts/check-cycles.sh), for the library and for the tools.
lib-c-objs = $(filter-out %.cu.o,$(all-lib-objs))
$(objtree)/.cycle-check: $$(lib-c-objs) $(srctree)/scripts/check-cycles.sh
	$(call quiet,CHECK,no file cycles)
	$(Q)$(srctree)/scripts/check-cycles.sh $(lib-c-objs)
	$(Q)touch $@
tool-objs = $(sort $(foreach t,$(tools-y),$(addprefix $(objtree)/tools/,$($(t)-objs))))
$(objtree)/.cycle-check-tools: $$(tool-objs) $(srctree)/scripts/check-cycles.sh
	$(call quiet,CHECK,no file cycles in tools)
	$(Q)$(srctree)/scripts/check-cycles.sh $(tool-objs)
	$(Q)touch $@

# Every public function (dvx_* in include/dvx/**/*.h, *.cuh) carries a kernel-doc comment
# and takes at most 8 parameters (operations are data: docs/layout.md, Style), and the
# naming table of docs/layout.md holds (scripts/check-names.sh).
kdoc-hdrs = $(shell find $(srctree)/include/dvx -name '*.h' -o -name '*.cuh' 2>/dev/null)
$(objtree)/.kdoc-check: $(srctree)/scripts/check-kdoc.sh $(srctree)/scripts/check-names.sh $$(kdoc-hdrs)
	$(call quiet,CHECK,kernel-doc$(comma) parameters and names)
	$(Q)$(srctree)/scripts/check-kdoc.sh $(if $(filter 1,$(V)),-v) -p 8 $(srctree)
	$(Q)$(srctree)/scripts/check-names.sh $(srctree)
	$(Q)mkdir -p $(@D) && touch $@

$(LIB): $(all-lib-objs) $(objtree)/.alloc-check $(objtree)/.layer-check $(objtree)/.kdoc-check \
		$(objtree)/.cycle-check \
		$(srctree)/scripts/check-exports.sh
	$(call quiet,AR,$@)
	$(Q)rm -f $@
	$(Q)$(AR) rcs $@ $(all-lib-objs)
	$(Q)$(srctree)/scripts/check-exports.sh --product $@

$(TESTLIB): $(testlib-objs) $(objtree)/.layer-check $(objtree)/.kdoc-check \
		$(srctree)/scripts/check-exports.sh
	$(call quiet,AR,$@)
	$(Q)rm -f $@
	$(Q)$(AR) rcs $@ $(testlib-objs)
	$(Q)$(srctree)/scripts/check-exports.sh $@

# tools
$(tool-bins): $(objtree)/tools/%: $$(addprefix $(objtree)/tools/,$$($$*-objs)) $(LIB) \
		$(objtree)/.cycle-check-tools
	$(call quiet,LD,$@)
	$(Q)$(CC) $(DVX_CFLAGS) $(LDSAN) -o $@ $(filter %.o,$^) $(LIB) $($*-libs) $(LDLIBS)

# tests: every test lists the tree-relative sources it links (its own and the
# production units under test); nothing else of the library comes along.
src-to-obj = $(patsubst %.cu,$(objtree)/%.cu.o,$(patsubst %.c,$(objtree)/%.o,$(1)))
$(test-bins): $(objtree)/tests/%: $$(call src-to-obj,$$($$*-srcs)) $(objtree)/.layer-check \
		$(objtree)/.kdoc-check
	$(call quiet,LD,$@)
	$(Q)$(CC) $(DVX_CFLAGS) $(LDSAN) -o $@ $(filter %.o,$^) \
		$(addprefix -Wl$(comma)--wrap=,$($*-wrap)) $($*-libs) $(CMOCKA_LIBS) $(LDLIBS)

# libFuzzer harnesses: like tests, linked with -fsanitize=fuzzer (libFuzzer's main);
# their objects and the library sources they list are built with $(SAN), which
# scripts/fuzz.sh sets to fuzzer-no-link,address,undefined (clang only): edge counters,
# comparison tracing, indirect calls and stack depth for libFuzzer. The sources a
# harness's name-carrier-srcs names (tests/fuzz/Kbuild: the software NIC and the layers
# that only carry the peer's bytes to the code under test, never decide on them) are
# built once more into $(O)/carrier/ with the same sanitizers but only the edge counters
# ($(FUZZ_CARRIER_COV)): their comparisons are not traced, which cost the harnesses
# whose every input runs the software NIC a third of their time (bench/RESULTS.md).
# FUZZ_FULL=1: every source of every harness fully instrumented, as before.
FUZZ_CARRIER_COV ?= -fsanitize-coverage=inline-8bit-counters,pc-table
carrier-cflags = $(filter-out -fsanitize=$(SAN),$(DVX_CFLAGS)) \
	$(if $(subst fuzzer-no-link,,$(SAN)),-fsanitize=$(subst fuzzer-no-link$(comma),,$(SAN))) \
	$(if $(findstring fuzzer-no-link,$(SAN)),$(FUZZ_CARRIER_COV))
fuzz-carrier = $(if $(filter 1,$(FUZZ_FULL)),,$(filter $($(1)-carrier-srcs),$($(1)-srcs)))
fuzz-objs = $(call src-to-obj,$(filter-out $(call fuzz-carrier,$(1)),$($(1)-srcs))) \
	$(patsubst $(objtree)/%,$(objtree)/carrier/%,$(call src-to-obj,$(call fuzz-carrier,$(1))))
$(objtree)/carrier/%.o: $(srctree)/%.c $(AUTOCONF)
	$(call quiet,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(DVX_CPPFLAGS) $(carrier-cflags) $(call obj-flags,$(objtree)/$*.o) -MMD -MP \
		-MF $(@:.o=.d) -c -o $@ $<
$(fuzz-bins): $(objtree)/fuzz/%: $$(call fuzz-objs,$$*) $(objtree)/.layer-check \
		$(objtree)/.kdoc-check
	$(call quiet,LD,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(DVX_CFLAGS) $(LDSAN) -fsanitize=fuzzer -o $@ $(filter %.o,$^) $($*-libs) $(LDLIBS)

fuzzers: $(fuzz-bins)

$(bench-bins): $(objtree)/bench/%: $$(call src-to-obj,$$($$*-srcs)) $(LIB)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(DVX_CFLAGS) $(LDSAN) -o $@ $(filter %.o,$^) $(LIB) $($*-libs) $(LDLIBS)

# the library once more as position-independent code, for the plugins
$(objtree)/pic/%.o: $(srctree)/%.c $(AUTOCONF)
	$(call quiet,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(DVX_CPPFLAGS) $(DVX_CFLAGS) -fPIC $(CFLAGS_$(notdir $@)) -MMD -MP -MF $(@:.o=.d) -c -o $@ $<
$(objtree)/pic/%.cu.o: $(objtree)/%.cu.c
	$(call quiet,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(DVX_CFLAGS) -fPIC -c -o $@ $<
$(PICLIB): $(pic-objs) $(objtree)/.alloc-check $(objtree)/.layer-check
	$(call quiet,AR,$@)
	$(Q)rm -f $@
	$(Q)$(AR) rcs $@ $(pic-objs)
$(objtree)/plugins/%.o: $(srctree)/plugins/%.c $(AUTOCONF)
	$(call quiet,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(DVX_CPPFLAGS) $(DVX_CFLAGS) -fPIC -fvisibility=hidden -MMD -MP -MF $(@:.o=.d) -c -o $@ $<
$(PLUGIN_NCCL): $(plugin-nccl-objs) $(PICLIB) $(srctree)/plugins/nccl/exports.map
	$(call quiet,LD,$@)
	$(Q)$(CC) $(DVX_CFLAGS) $(LDSAN) -shared -fPIC -o $@ $(plugin-nccl-objs) $(PICLIB) \
		-Wl,--version-script=$(srctree)/plugins/nccl/exports.map -Wl,--no-undefined \
		-Wl,--as-needed $(LDLIBS)
$(COPIER): $(objtree)/plugins/nccl/copier_main.o $(PICLIB)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(DVX_CFLAGS) $(LDSAN) -o $@ $< $(PICLIB) -Wl,--as-needed $(LDLIBS)
# nccl-net-test and nccl-net-bench dlopen() the plugin, which spawns the copier
$(objtree)/tests/nccl-net-test $(objtree)/bench/nccl-net-bench: $(PLUGIN_NCCL) $(COPIER)
$(objtree)/tests/copier-test: $(COPIER)

comma := ,

# nvcc: the mlx5 headers must compile as CUDA (host and device passes).
ifeq ($(CONFIG_DVX_GPU),y)
NVCC_ARCH := -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90
$(objtree)/tests/nvcc-headers-test: $(srctree)/tests/nvcc/headers-test.cu $(AUTOCONF) \
		$$(wildcard $(srctree)/include/dvx/*.h $(srctree)/include/dvx/*/*.h \
			$(srctree)/include/dvx/*/*.cuh)
	$(call quiet,NVCC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(NVCC) -std=c++17 $(NVCC_ARCH) -fatbin -DDVX_NVCC_DEVICE_PASS -I$(srctree)/include \
		-Werror all-warnings -o $@.fatbin $<
	$(Q)$(NVCC) -std=c++17 -c -I$(srctree)/include \
		-Xcompiler -Wall,-Wextra,-Werror,-Wno-unused-parameter -Werror all-warnings \
		-o $@.host.o $<
	$(Q)$(CXX) -std=c++17 -x c++ -O2 -Wall -Wextra -Werror -Wno-unused-parameter \
		-I$(srctree)/include -o $@ $<
else
$(objtree)/tests/nvcc-headers-test: $(objtree)/tests/nvcc/no-nvcc.o
	$(call quiet,LD,$@)
	$(Q)$(CC) -o $@ $<
endif

# CUDA sources, in the library (obj-y += x.cu.o), tests and benchmarks (x.cu in
# name-srcs): x.cu -> x.cu.fatbin (nvcc, device code for sm_80 and sm_90) -> x.cu.c
# (a C array named dvx_fatbin_<path>, scripts/embed-blob.sh) -> x.cu.o, loaded at run
# time with the driver API (dvx_gpu_module_load). Without CONFIG_DVX_GPU the blob is
# empty and loading it answers -ENOSYS.
cu-sym = dvx_fatbin_$(subst -,_,$(subst /,_,$(1)))
NVCC_FLAGS ?= -O3
$(objtree)/%.cu.fatbin: $(srctree)/%.cu $(AUTOCONF)
ifeq ($(CONFIG_DVX_GPU),y)
	$(call quiet,NVCC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(NVCC) -std=c++17 $(NVCC_FLAGS) $(NVCC_ARCH) -fatbin -I$(objtree)/include \
		-I$(srctree)/include -Werror all-warnings -MD -MP -MF $(@:.fatbin=.d) -MT $@ -o $@ $<
else
	$(call quiet,GEN,$@ (empty: no nvcc))
	$(Q)mkdir -p $(@D) && : > $@
endif
.PRECIOUS: $(objtree)/%.cu.fatbin $(objtree)/%.cu.c
$(objtree)/%.cu.c: $(objtree)/%.cu.fatbin $(srctree)/scripts/embed-blob.sh
	$(call quiet,EMBED,$@)
	$(Q)$(srctree)/scripts/embed-blob.sh $(call cu-sym,$*) $< $@
$(objtree)/%.cu.o: $(objtree)/%.cu.c
	$(call quiet,CC,$@)
	$(Q)$(CC) $(DVX_CFLAGS) -c -o $@ $<

# JUNIT=dir: the runner also leaves a JUnit XML file per test binary in dir
junit-env = $(if $(JUNIT),DVX_JUNIT_DIR='$(abspath $(JUNIT))')

# GPU tests only; with DVX_GPU_REQUIRED=1 a test that finds no GPU fails instead of skipping
gpu-check: $(addprefix $(objtree)/tests/,$(gpu-tests-y))
	$(Q)DVX_GPU_REQUIRED=1 $(junit-env) $(srctree)/scripts/run-tests.sh $(objtree) $(gpu-tests-y)

$(objtree)/dvx.pc: $(srctree)/scripts/gen-pc.sh $(srctree)/include/dvx/version.h $(KCONFIG)
	$(call quiet,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(srctree)/scripts/gen-pc.sh '$(strip $(PC_REQUIRES))' '-pthread -ldl' \
		"$$(sed -n 's/^#define DVX_VERSION "\(.*\)"/\1/p' $(srctree)/include/dvx/version.h)" > $@
$(objtree)/dvx-test.pc: $(srctree)/scripts/gen-pc.sh $(srctree)/include/dvx/version.h
	$(call quiet,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(srctree)/scripts/gen-pc.sh --test \
		"$$(sed -n 's/^#define DVX_VERSION "\(.*\)"/\1/p' $(srctree)/include/dvx/version.h)" > $@

# the suites that run again in the software NIC's seeded reorder mode (DVX_SIM_REORDER,
# docs/sim-datapath.md), once per seed of REORDER_SEEDS: 1 and 4 are the seeds that found
# the clear-to-send bug (msg-ranks-test, msg-edges-test; docs/testing.md)
reorder-tests := p2p-test p2p-procs-test win-test msg-test msg-ranks-test msg-model-test \
	msg-edges-test msg-procs-test msg-offload-test ht-test ht-cb-test ht-cache-test ht-fault-test \
	ht-recover-test ht-procs-test mp-e2e-test soak-test soak-procs-test fuzz-test \
	nccl-net-test
REORDER_SEEDS ?= 1 4

# the messaging suites again with every context asking for the CTS receiver offload
# (DVX_MSG_TEST_OFFLOAD=1, docs/msg.md; the cases that test the FIFO clear-to-send itself
# keep it), in order and in reorder mode seed 4
offload-tests := msg-test msg-ranks-test msg-edges-test msg-procs-test

# (the reorder passes first, so the run ends with the whole suite's summary)
check: tests tools bench $(objtree)/tests/nvcc-headers-test
	$(Q)t=; for b in $(filter $(reorder-tests),$(tests-y)); do \
		case " $${TESTS:-$$b} " in *" $$b "*) t="$$t $$b" ;; esac; \
	done; \
	for s in $(REORDER_SEEDS); do \
		[ -n "$$t" ] || break; \
		echo "reorder mode: DVX_SIM_REORDER=$$s"; \
		TESTS= DVX_SIM_REORDER=$$s $(srctree)/scripts/run-tests.sh $(objtree) $$t || exit 1; \
	done
	$(Q)t=; for b in $(filter $(offload-tests),$(tests-y)); do \
		case " $${TESTS:-$$b} " in *" $$b "*) t="$$t $$b" ;; esac; \
	done; \
	for s in 0 4; do \
		[ -n "$$t" ] || break; \
		echo "CTS offload: DVX_MSG_TEST_OFFLOAD=1 DVX_SIM_REORDER=$$s"; \
		TESTS= DVX_MSG_TEST_OFFLOAD=1 DVX_SIM_REORDER=$$s \
			$(srctree)/scripts/run-tests.sh $(objtree) $$t || exit 1; \
	done
	$(Q)$(junit-env) $(srctree)/scripts/run-tests.sh $(objtree) $(tests-y) nvcc-headers-test

# the P2P suites with ranks as processes on the wire, forked and under mpirun
check-procs: tests
	$(Q)$(srctree)/scripts/check-procs.sh $(objtree)

# the suite under ASan+UBSan, and the multi-threaded tests under TSan (scripts/sanitize.sh);
# build folders $(O)-asan and $(O)-tsan
sanitize:
	$(Q)$(srctree)/scripts/sanitize.sh $(objtree)

# the long soak (tests/soak): >= SOAK_OPS transport operations with random faults,
# 8 ranks, up to 64 messages of <= 4 KiB per peer and round, strict and overlapping
# in the software NIC's reorder mode with a random seed (printed; SOAK_REORDER=<seed> replays
# one, SOAK_REORDER=0 runs in order)
SOAK_OPS ?= 10000000
SOAK_SEED ?= 0x50a4
SOAK_REORDER ?=
soak: $(objtree)/tests/soak-test
	$(Q)r='$(SOAK_REORDER)'; [ -n "$$r" ] || r=$$(od -An -N4 -tu4 /dev/urandom | tr -d ' '); \
	echo "soak: DVX_SIM_REORDER=$$r"; \
	DVX_SIM_REORDER=$$r DVX_SOAK_OPS=$(SOAK_OPS) DVX_SOAK_SEED=$(SOAK_SEED) DVX_SOAK_RANKS=8 \
		DVX_SOAK_MSGS=64 DVX_SOAK_MAXLEN=4096 $(objtree)/tests/soak-test

# the process soak (tests/soak/test_soak_procs.c): P2P, messaging and the host transport
# together, SOAK_PROCS_RANKS ranks as processes on the wire, >= SOAK_OPS operations with
# faults, the last rank killed at the end; in the reorder mode with a random seed, as
# make soak (SOAK_REORDER=<seed> replays one, SOAK_REORDER=0 runs in order)
SOAK_PROCS_RANKS ?= 4
soak-procs: $(objtree)/tests/soak-procs-test
	$(Q)r='$(SOAK_REORDER)'; [ -n "$$r" ] || r=$$(od -An -N4 -tu4 /dev/urandom | tr -d ' '); \
	echo "soak-procs: DVX_SIM_REORDER=$$r"; \
	DVX_SIM_REORDER=$$r DVX_SOAK_OPS=$(SOAK_OPS) DVX_SOAK_RANKS=$(SOAK_PROCS_RANKS) \
		$(objtree)/tests/soak-procs-test

# coverage-guided fuzzing with libFuzzer (scripts/fuzz.sh; build folder $(O)-fuzz)
# make fuzz: 10^6 executions per harness (issue 30), at most 600 s each; fuzz-ci: 10 s each
FUZZ_RUNS ?= 1000000
FUZZ_SECONDS ?= 600
FUZZ_FULL ?= 0
fuzz:
	$(Q)FUZZ_RUNS=$(FUZZ_RUNS) FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_FULL=$(FUZZ_FULL) \
		$(srctree)/scripts/fuzz.sh $(objtree)
fuzz-ci:
	$(Q)FUZZ_RUNS=$(if $(filter command line environment,$(origin FUZZ_RUNS)),$(FUZZ_RUNS),0) \
		FUZZ_SECONDS=$(if $(filter command line environment,$(origin FUZZ_SECONDS)),$(FUZZ_SECONDS),10) \
		FUZZ_FULL=$(FUZZ_FULL) $(srctree)/scripts/fuzz.sh $(objtree)

# man pages (man/): section 1 for the tools, 7 for the library (scripts/check-man.sh)
man1-pages := $(wildcard $(srctree)/man/*.1)
man7-pages := $(wildcard $(srctree)/man/*.7)

install: lib tools plugins
	$(call quiet,INSTALL,$(DESTDIR)$(PREFIX))
	$(Q)install -d $(DESTDIR)$(PREFIX)/include/dvx $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/bin
	$(Q)cd $(srctree)/include && find dvx \( -name '*.h' -o -name '*.cuh' \) -exec install -D -m 644 {} $(DESTDIR)$(PREFIX)/include/{} \;
	$(Q)install -m 644 $(LIB) $(DESTDIR)$(PREFIX)/lib/libdvx.a
	$(Q)install -m 644 $(objtree)/dvx.pc $(DESTDIR)$(PREFIX)/lib/pkgconfig/dvx.pc
	$(if $(testlib-y),$(Q)install -m 644 $(TESTLIB) $(DESTDIR)$(PREFIX)/lib/libdvx-test.a)
	$(if $(testlib-y),$(Q)install -m 644 $(objtree)/dvx-test.pc $(DESTDIR)$(PREFIX)/lib/pkgconfig/dvx-test.pc)
	$(Q)install -m 755 $(tool-bins) $(DESTDIR)$(PREFIX)/bin/
	$(if $(plugins-y),$(Q)install -m 755 $(PLUGIN_NCCL) $(DESTDIR)$(PREFIX)/lib/)
	$(if $(plugins-y),$(Q)install -D -m 755 $(COPIER) $(DESTDIR)$(PREFIX)/libexec/dvx/dvx-copier)
	$(Q)install -d $(DESTDIR)$(PREFIX)/share/doc/dvx
	$(Q)install -m 644 $(srctree)/LICENSE $(srctree)/README.md $(srctree)/docs/*.md \
		$(DESTDIR)$(PREFIX)/share/doc/dvx/
	$(Q)install -d $(DESTDIR)$(PREFIX)/share/doc/dvx/examples
	$(Q)install -m 644 $(srctree)/examples/*.c $(srctree)/examples/*.cu $(DESTDIR)$(PREFIX)/share/doc/dvx/examples/
	$(Q)install -d $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/man/man7
	$(Q)install -m 644 $(man1-pages) $(DESTDIR)$(PREFIX)/share/man/man1/
	$(Q)install -m 644 $(man7-pages) $(DESTDIR)$(PREFIX)/share/man/man7/

# install to a scratch prefix and build an example against it (scripts/check-install.sh)
check-install: lib tools
	+$(Q)$(srctree)/scripts/check-install.sh $(objtree)

# the man pages: installed, one per installed tool, no warnings, as --help says
check-man: lib tools
	+$(Q)$(srctree)/scripts/check-man.sh $(objtree)

uninstall:
	$(Q)rm -rf $(DESTDIR)$(PREFIX)/include/dvx $(DESTDIR)$(PREFIX)/lib/libdvx.a \
		$(DESTDIR)$(PREFIX)/lib/libdvx-test.a $(DESTDIR)$(PREFIX)/lib/pkgconfig/dvx-test.pc \
		$(DESTDIR)$(PREFIX)/lib/pkgconfig/dvx.pc $(addprefix $(DESTDIR)$(PREFIX)/bin/,$(tools-y)) \
		$(DESTDIR)$(PREFIX)/lib/libnccl-net-dvx.so $(DESTDIR)$(PREFIX)/libexec/dvx \
		$(DESTDIR)$(PREFIX)/share/doc/dvx \
		$(addprefix $(DESTDIR)$(PREFIX)/share/man/man1/,$(notdir $(man1-pages))) \
		$(addprefix $(DESTDIR)$(PREFIX)/share/man/man7/,$(notdir $(man7-pages)))

defconfig:
	$(Q)$(srctree)/scripts/kconfig.sh defconfig $(srctree)/configs/defconfig $(objtree)
%_defconfig:
	$(Q)$(srctree)/scripts/kconfig.sh defconfig $(srctree)/configs/$@ $(objtree)
savedefconfig:
	$(Q)$(srctree)/scripts/kconfig.sh savedefconfig $(KCONFIG) $(objtree)

clean:
	$(Q)rm -rf $(objtree)/hal $(objtree)/mlx5 $(objtree)/gpu $(objtree)/core \
		$(objtree)/tools $(objtree)/tests $(objtree)/bench $(objtree)/fuzz $(LIB) $(objtree)/dvx.pc \
		$(objtree)/testing $(TESTLIB) $(objtree)/dvx-test.pc \
		$(objtree)/.alloc-check $(objtree)/.layer-check $(objtree)/.kdoc-check \
		$(objtree)/pic $(objtree)/plugins
distclean:
	$(Q)rm -rf $(objtree)

help:
	@sed -n '3,/^[^#]/{/^#/p}' $(srctree)/Makefile | sed 's/^# \{0,1\}//'

-include $(shell find $(objtree) -name '*.d' 2>/dev/null)
