# Petrel build: the kernel, the test kernel and the user programs.
#
#   make O=build            everything (kernel, kernel-test, user programs)
#   make O=build kernel     build/kernel/kernel.{elf,bin}
#   make O=build kernel-test  the kernel with in-kernel self tests
#
# Out of tree (everything lands under $(O)) and incremental (clang's
# dependency files). `./petrel build` is the usual front end.

O       ?= build
V       ?= 0
Q        = $(if $(filter 1,$(V)),,@)

CC       = clang
LD       = ld.lld
OBJCOPY  = llvm-objcopy

TARGET   = --target=aarch64-none-elf -mcpu=cortex-a53
WARN     = -Wall -Wextra -Werror -Wno-unused-parameter -Wstrict-prototypes \
           -Wmissing-prototypes -Wshadow -Wundef
CFLAGS_COMMON = $(TARGET) -std=c11 -ffreestanding -fno-builtin -fno-stack-protector \
           -fno-pic -fno-common -mgeneral-regs-only -O2 -g $(WARN) -MMD -MP

# ---------------------------------------------------------------- kernel
KDIRS    = kernel/core kernel/arch/aarch64 kernel/plat/qemu-virt lib
KSRC     = $(foreach d,$(KDIRS),$(wildcard $(d)/*.c $(d)/*.S))
KTSRC    = $(wildcard kernel/tests/*.c)
KINC     = -Ilib/include -Ikernel/include -Ikernel/include/uapi -I$(O)/gen/kernel \
           -Iservices/include -I$(O)/gen/services -Ikernel/arch/aarch64/include -Ikernel/plat/qemu-virt
# A kernel stack frame never exceeds a page, so none can step over the guard
# below a kernel stack (arch/kstack.h). The kernel leaves x18 alone, so the
# light call's entry need not save it (vectors.S).
KCFLAGS  = $(CFLAGS_COMMON) $(KINC) -ffixed-x18 -fomit-frame-pointer -mcmodel=small -mstrict-align -Wframe-larger-than=4096 -Wvla
KLDS     = kernel/arch/aarch64/kernel.ld
# Every kernel object is rebuilt when KCFLAGS change (the rule is after
# `all`): the light call's entry relies on no kernel code using x18, so no
# object may keep older flags.
KFLAGS_STAMP = $(O)/kernel/kcflags.txt

kobjs = $(patsubst %,$(O)/$(1)/%.o,$(2))

GEN       = $(O)/gen
# Services: idl/<interface>.toml, implemented once in services/<interface>/.
IDLS      = $(wildcard idl/*.toml)
SERVICES  = $(filter-out env include common,$(notdir $(wildcard services/*)))
# services/common: the code services share (a device's driver), linked
# with each service in user space and once into the kernel.
SVC_COMMON = $(wildcard services/common/*.c)
# Every service is built for both placements (tools/petrel/systems.py
# places each where its system description says).
KSERVICES = $(SERVICES)
SVC_GEN   = $(foreach s,$(notdir $(basename $(filter-out idl/syscalls.toml idl/tracepoints.toml,$(IDLS)))),$(GEN)/services/$(s)_if.h)
SVC_KSRC  = $(foreach s,$(KSERVICES),$(wildcard services/$(s)/*.c)) $(SVC_COMMON)
GENSRC    = $(GEN)/kernel/syscall_table.c
SYSHDRS   = $(GEN)/kernel/syscalls_gen.h $(GEN)/user/petrel_syscalls.h
GENHDRS   = $(SYSHDRS) $(GEN)/kernel/autoconf.h $(GEN)/services/trace_points.h
PYTHON   ?= python3
# The interfaces whose proxies services' code calls (services/linux/inet.c
# calls net): compiled into the kernel too, each method through the
# kernel's svc_client_call (the <name>_kclient.c proxies).
KCLIENTS  = net blk ext2fs input display inputd
KSVCOBJ   = $(call kobjs,kernel,$(SVC_KSRC)) $(patsubst %,$(O)/kernel/gen/%_server.c.o,$(KSERVICES)) \
            $(patsubst %,$(O)/kernel/gen/%_kclient.c.o,$(KCLIENTS))
KTSVCOBJ  = $(call kobjs,kernel-test,$(SVC_KSRC)) $(patsubst %,$(O)/kernel-test/gen/%_server.c.o,$(KSERVICES)) \
            $(patsubst %,$(O)/kernel-test/gen/%_kclient.c.o,$(KCLIENTS))
KOBJ      = $(call kobjs,kernel,$(KSRC)) $(O)/kernel/gen/syscall_table.c.o $(O)/kernel/gen/ksvc_table.c.o $(KSVCOBJ)
KTOBJ     = $(call kobjs,kernel-test,$(KSRC) $(KTSRC)) $(O)/kernel-test/gen/syscall_table.c.o \
            $(O)/kernel-test/gen/ksvc_table.c.o $(KTSVCOBJ)
# K2's shadow kernel (docs/design/k2.md): the same tree in a second pass,
# the configuration's values with K2_SHADOW=y and one core, built for size
# and linked at the start of its own local region (K2_SHADOW_PHYS; the
# main kernel's kernel.bin is the usual build).
K2_SHADOW_PHYS = 0x41000000
K2OVERRIDES = K2_SHADOW=y MAX_CPUS=1
K2CFLAGS  = -I$(GEN)/k2 $(filter-out -O2,$(KCFLAGS)) -Os
K2OBJ     = $(call kobjs,k2,$(KSRC)) $(O)/k2/gen/syscall_table.c.o $(O)/k2/gen/ksvc_table.c.o \
            $(call kobjs,k2,$(SVC_KSRC)) $(patsubst %,$(O)/k2/gen/%_server.c.o,$(KSERVICES)) \
            $(patsubst %,$(O)/k2/gen/%_kclient.c.o,$(KCLIENTS))

# ---------------------------------------------------------------- user
# Native programs: what ships in user/ (the runtime user/rt is not one), the
# guest tests' programs in tests/programs/, the benchmarks' in bench/programs/.
# Each directory with a main.c is a program, built as $(O)/user/<name>.elf.
UDIRS    = user tests/programs bench/programs
UPROGDIRS = $(filter-out user/rt,$(patsubst %/main.c,%,$(wildcard $(addsuffix /*/main.c,$(UDIRS)))))
UPROGS   = $(notdir $(UPROGDIRS))
UDUPS    = $(strip $(foreach n,$(sort $(UPROGS)),$(if $(word 2,$(filter $(n),$(UPROGS))),$(n))))
ifneq ($(UDUPS),)
$(error programs share a name (each builds $(O)/user/<name>.elf): $(filter $(addprefix %/,$(UDUPS)),$(UPROGDIRS)))
endif
# The sources of program $(1): its directory's C and assembly files.
usrc     = $(wildcard $(foreach d,$(UDIRS),$(d)/$(1)/*.c $(d)/$(1)/*.S))
# A program that serves objects (native object RPC) names their interfaces
# in a file `serves` in its directory: it links their skeletons and the
# user environment of services (svc_serve).
userves  = $(firstword $(wildcard $(foreach d,$(UDIRS),$(d)/$(1)/serves)))
usvcobj  = $(if $(call userves,$(1)),$(patsubst %,$(O)/user/svc-obj/%_server.c.o,$(shell cat $(call userves,$(1)))) \
           $(O)/user/svc-obj/env/user_env.c.o $(O)/user/svc-obj/env/user_proc.c.o)
URTSRC   = $(wildcard user/rt/*.c user/rt/*.S) $(wildcard lib/*.c)
URTGEN   = $(foreach s,$(notdir $(basename $(filter-out idl/syscalls.toml idl/tracepoints.toml,$(IDLS)))),$(O)/user/rt-obj/gen/$(s)_client.c.o)
UCFLAGS  = $(CFLAGS_COMMON) -fomit-frame-pointer -Ilib/include -Iuser/rt/include -Ikernel/include/uapi -I$(O)/gen/user \
           -Iservices/include -I$(O)/gen/services -ffunction-sections -fdata-sections -mcmodel=small
# Unused code is dropped, so a program's symbols show which service proxies it
# calls (the system description check of tools/petrel/systems.py reads them).
ULDFLAGS = --gc-sections
ULDS     = user/rt/user.ld
URTOBJ   = $(patsubst %,$(O)/user/rt-obj/%.o,$(URTSRC)) $(URTGEN)
USVCELFS = $(patsubst %,$(O)/services/%.elf,$(SERVICES))
UELFS    = $(patsubst %,$(O)/user/%.elf,$(UPROGS))

# ---------------------------------------------------------------- Linux baseline
# The Linux side of the benchmarks: static AArch64 musl programs.
LINUX_CC = aarch64-linux-musl-gcc
LINUX_BENCH = $(O)/bench/linux/init $(O)/bench/linux/null

# The Linux oracle tests: static musl programs (tests/linux/NAME.c ->
# build/linux/bin/NAME; init.c -> build/linux/init) and the root archive
# that holds them, Petrel's root file system and Linux's initramfs.
LINUX_TESTS = $(filter-out init,$(notdir $(basename $(wildcard tests/linux/*.c))))
# The Binder programs' headers (the tests include them beside lxtest.h).
BINDER_HDRS = services/include/binder_uapi.h bench/linux/binder_rtt.h
LINUX_ROOT = $(O)/linux/rootfs.cpio
# args is also built as a static-PIE program (args-pie). Debian's musl-gcc
# wrapper links static-PIE with the wrong start file, so it is linked by hand:
# musl's self-relocating rcrt1.o, no dynamic linker.
LINUX_PIE = $(O)/linux/bin/args-pie
MUSL_LIB = /usr/lib/aarch64-linux-musl
LIBGCC = $(shell aarch64-linux-gnu-gcc -print-libgcc-file-name 2>/dev/null)
# dynamic.c is also built against Debian's arm64 glibc, dynamically (its
# interpreter /lib/ld-linux-aarch64.so.1) and statically, and against musl
# dynamically (/lib/ld-musl-aarch64.so.1); rootfs.py puts the interpreters
# and libc.so.6 from the installed cross packages into the archive.
# threads.c and threadchurn.c are also built against glibc (its pthreads use
# clone3, robust lists and rseq), dynamically; exec.c too (its posix_spawn shares the
# parent's memory with CLONE_VM | CLONE_VFORK and reports errors through it),
# and vforkmem.c (musl's vfork is a fork on arm64, glibc's shares memory).
LINUX_OTHER_LIBC = $(O)/linux/bin/dynamic-glibc $(O)/linux/bin/dynamic-glibc-static $(O)/linux/bin/dynamic-musl \
                   $(O)/linux/bin/threads-glibc $(O)/linux/bin/threadchurn-glibc $(O)/linux/bin/exec-glibc $(O)/linux/bin/vforkmem-glibc

.PHONY: all kernel kernel-test k2 user clean linux-bench linux-root data
.SECONDEXPANSION:
.SECONDARY:
all: kernel kernel-test k2 user linux-bench linux-root data docs/reference/linux-syscalls.md

$(KFLAGS_STAMP): FORCE
	@mkdir -p $(dir $@)
	@echo '$(KCFLAGS)' | cmp -s - $@ || echo '$(KCFLAGS)' > $@
.PHONY: FORCE
FORCE:

# Data files system descriptions put in boot images ([[file]]): 1 MiB whose
# byte i is (i * 7 + i / 4096) mod 256, for the long-request tests and bench.
data: $(O)/data/pattern-1m.bin
$(O)/data/pattern-1m.bin:
	@mkdir -p $(dir $@)
	$(Q)$(PYTHON) -c "import sys; sys.stdout.buffer.write(bytes((i * 7 + i // 4096) % 256 for i in range(1 << 20)))" > $@
linux-bench: $(LINUX_BENCH)
linux-root: $(LINUX_ROOT)

$(O)/linux/bin/%: tests/linux/%.c tests/linux/lxtest.h tests/linux/lxdev.h $(BINDER_HDRS)
	@mkdir -p $(dir $@)
	@echo "  MUSLCC  $@"
	$(Q)$(LINUX_CC) -static -O2 -Wall -Werror -o $@ $<

# paint (the android-demo system's Linux program) draws as user/notes does: lib/include/draw.h.
$(O)/linux/bin/paint: tests/linux/paint.c tests/linux/lxtest.h tests/linux/lxdev.h lib/include/draw.h
	@mkdir -p $(dir $@)
	@echo "  MUSLCC  $@"
	$(Q)$(LINUX_CC) -static -O2 -Wall -Werror -Ilib/include -o $@ $<

$(O)/linux/bin/%-pie: tests/linux/%.c tests/linux/lxtest.h tests/linux/lxdev.h $(BINDER_HDRS)
	@mkdir -p $(dir $@)
	@echo "  MUSLCC  $@ (static-PIE)"
	$(Q)$(LINUX_CC) -fPIE -O2 -Wall -Werror -c -o $@.o $<
	$(Q)aarch64-linux-gnu-ld -static -pie --no-dynamic-linker -z text -o $@ $(MUSL_LIB)/rcrt1.o \
	    $(MUSL_LIB)/crti.o $(dir $(LIBGCC))crtbeginS.o $@.o $(MUSL_LIB)/libc.a $(LIBGCC) $(MUSL_LIB)/libc.a \
	    $(dir $(LIBGCC))crtendS.o $(MUSL_LIB)/crtn.o
	$(Q)rm -f $@.o

$(O)/linux/bin/%-glibc: tests/linux/%.c tests/linux/lxtest.h tests/linux/lxdev.h $(BINDER_HDRS)
	@mkdir -p $(dir $@)
	@echo "  GLIBCC  $@ (dynamic)"
	$(Q)aarch64-linux-gnu-gcc -O2 -Wall -Werror -o $@ $<

$(O)/linux/bin/%-glibc-static: tests/linux/%.c tests/linux/lxtest.h tests/linux/lxdev.h $(BINDER_HDRS)
	@mkdir -p $(dir $@)
	@echo "  GLIBCC  $@ (static)"
	$(Q)aarch64-linux-gnu-gcc -static -O2 -Wall -Werror -o $@ $<

$(O)/linux/bin/%-musl: tests/linux/%.c tests/linux/lxtest.h tests/linux/lxdev.h $(BINDER_HDRS)
	@mkdir -p $(dir $@)
	@echo "  MUSLCC  $@ (dynamic)"
	$(Q)$(LINUX_CC) -O2 -Wall -Werror -o $@ $<

# lxbench: the Linux system call benchmarks (./petrel bench's lx_* rows),
# in the root archive so that the same binary runs on Linux and Petrel.
$(O)/linux/bin/lxbench: bench/linux/lxbench.c bench/common/bench.h $(BINDER_HDRS)
	@mkdir -p $(dir $@)
	@echo "  MUSLCC  $@"
	$(Q)$(LINUX_CC) -static -O2 -Wall -Werror -o $@ $<

# lxpar: the parallel speed-up rows (lx_parallel_speedup, wall mode with
# two cores or more): the same work in N threads or N processes.
$(O)/linux/bin/lxpar: bench/linux/lxpar.c
	@mkdir -p $(dir $@)
	@echo "  MUSLCC  $@"
	$(Q)$(LINUX_CC) -static -O2 -Wall -Werror -o $@ $< -lpthread

# lxscale: the system call scaling rows (lx_syscall_scaling, wall mode with
# two cores or more): N processes on their own cores, each making calls.
$(O)/linux/bin/lxscale: bench/linux/lxscale.c
	@mkdir -p $(dir $@)
	@echo "  MUSLCC  $@"
	$(Q)$(LINUX_CC) -static -O2 -Wall -Werror -o $@ $<

# picture: the deterministic picture the application benchmarks' JPEG and
# TIFF rows start from (bench/apps/apps.sh), beside lxbench.
$(O)/linux/bin/picture: bench/linux/picture.c
	@mkdir -p $(dir $@)
	@echo "  MUSLCC  $@"
	$(Q)$(LINUX_CC) -static -O2 -Wall -Werror -o $@ $<

$(O)/linux/init: tests/linux/init.c lib/include/cmd_words.h
	@mkdir -p $(dir $@)
	@echo "  MUSLCC  $@"
	$(Q)$(LINUX_CC) -static -O2 -Wall -Werror -Ilib/include -o $@ $<

# Debian's busybox (fetched by ./petrel setup into .cache/busybox) goes in
# as /bin/busybox with /bin/sh and other applets linked to it.
$(LINUX_ROOT): $(patsubst %,$(O)/linux/bin/%,$(LINUX_TESTS)) $(LINUX_PIE) $(LINUX_OTHER_LIBC) $(O)/linux/bin/lxbench \
        $(O)/linux/bin/lxpar $(O)/linux/bin/lxscale $(O)/linux/bin/picture $(O)/linux/init \
        $(shell find tests/linux/root) \
        $(wildcard .cache/busybox/busybox) $(wildcard .cache/debian/*/VERSION) \
        tools/petrel/rootfs.py tools/petrel/cpio.py tools/petrel/busybox.py tools/petrel/debian.py Makefile
	@echo "  CPIO    $@"
	$(Q)PYTHONPATH=tools $(PYTHON) -m petrel.rootfs $@

$(O)/bench/linux/init: bench/linux/bench.c bench/common/bwloops.S bench/common/bench.h $(BINDER_HDRS)
	@mkdir -p $(dir $@)
	@echo "  MUSLCC  $@"
	$(Q)$(LINUX_CC) -static -O2 -Wall -Werror -o $@ bench/linux/bench.c bench/common/bwloops.S -lpthread

$(O)/bench/linux/null: bench/linux/null.c
	@mkdir -p $(dir $@)
	@echo "  MUSLCC  $@"
	$(Q)$(LINUX_CC) -static -O2 -Wall -Werror -o $@ $<
kernel: $(O)/kernel/kernel.bin
kernel-test: $(O)/kernel-test/kernel.bin
k2: $(O)/k2/shadow.bin
user: $(UELFS) $(USVCELFS)

# Kernel options: kernel/Kconfig + build/.config (from configs/defconfig).
$(GEN)/kernel/autoconf.h: kernel/Kconfig configs/defconfig $(wildcard $(O)/.config) tools/petrel/kconfig.py
	@echo "  KCONFIG $(O)/.config"
	$(Q)PYTHONPATH=tools $(PYTHON) -m petrel.kconfig header kernel/Kconfig $(O)/.config configs/defconfig $@

# The shadow kernel's options: the same configuration, K2's overrides.
$(GEN)/k2/autoconf.h: kernel/Kconfig configs/defconfig $(wildcard $(O)/.config) tools/petrel/kconfig.py Makefile
	@echo "  KCONFIG $@"
	$(Q)PYTHONPATH=tools $(PYTHON) -m petrel.kconfig header kernel/Kconfig $(O)/.config configs/defconfig $@ $(K2OVERRIDES)

# The system call interface: one description, generated C and docs.
$(GENSRC) $(SYSHDRS) docs/reference/syscalls.md &: idl/syscalls.toml tools/petrel/syscallgen.py
	@echo "  GEN     $(GEN) docs/reference/syscalls.md"
	$(Q)PYTHONPATH=tools python3 -m petrel.syscallgen idl/syscalls.toml $(GEN) docs/reference/syscalls.md

# The tracepoints: one table, the emitters and docs (CONFIG_TRACE=n empties the emitters).
$(GEN)/services/trace_points.h docs/reference/tracepoints.md &: idl/tracepoints.toml $(GEN)/kernel/autoconf.h tools/petrel/tracegen.py
	@echo "  GEN     $(GEN)/services/trace_points.h docs/reference/tracepoints.md"
	$(Q)PYTHONPATH=tools python3 -m petrel.tracegen idl/tracepoints.toml $(GEN)/kernel/autoconf.h $(GEN)/services/trace_points.h docs/reference/tracepoints.md

# The Linux personality's system call table, as a reference page.
docs/reference/linux-syscalls.md: services/linux/lx.h $(wildcard services/linux/*.c) tools/petrel/lxsyscalls.py
	@echo "  GEN     $@"
	$(Q)PYTHONPATH=tools python3 -m petrel.lxsyscalls $@

# The kernel's table of the services present (services/<name>/ with idl/<name>.toml).
$(GEN)/kernel/ksvc_table.c: $(patsubst %,idl/%.toml,$(KSERVICES)) tools/petrel/idlc.py Makefile | $(SVC_GEN)
	@echo "  IDLC    $@"
	$(Q)PYTHONPATH=tools python3 -m petrel.idlc --kernel-table $@ $(GEN)/services $(patsubst %,idl/%.toml,$(KSERVICES))

# Service interfaces: proxies, skeletons and headers from idl/<name>.toml.
$(GEN)/services/%_if.h $(GEN)/services/%_server.c $(GEN)/services/%_client.c $(GEN)/services/%_kclient.c &: idl/%.toml tools/petrel/idlc.py
	@echo "  IDLC    idl/$*.toml"
	$(Q)PYTHONPATH=tools python3 -m petrel.idlc $(GEN)/services idl/$*.toml

$(O)/kernel/gen/%_server.c.o: $(GEN)/services/%_server.c $(KFLAGS_STAMP) | $(GENHDRS) $(SVC_GEN)
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(KCFLAGS) -DCONFIG_KTEST=0 -c $< -o $@

$(O)/kernel/gen/%_kclient.c.o: $(GEN)/services/%_kclient.c $(KFLAGS_STAMP) | $(GENHDRS) $(SVC_GEN)
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(KCFLAGS) -DCONFIG_KTEST=0 -c $< -o $@

$(O)/kernel-test/gen/%_server.c.o: $(GEN)/services/%_server.c $(KFLAGS_STAMP) | $(GENHDRS) $(SVC_GEN)
	@mkdir -p $(dir $@)
	@echo "  CC      $< (test)"
	$(Q)$(CC) $(KCFLAGS) -DCONFIG_KTEST=1 -c $< -o $@

$(O)/kernel-test/gen/%_kclient.c.o: $(GEN)/services/%_kclient.c $(KFLAGS_STAMP) | $(GENHDRS) $(SVC_GEN)
	@mkdir -p $(dir $@)
	@echo "  CC      $< (test)"
	$(Q)$(CC) $(KCFLAGS) -DCONFIG_KTEST=1 -c $< -o $@

$(O)/user/rt-obj/gen/%_client.c.o: $(GEN)/services/%_client.c | $(GENHDRS) $(SVC_GEN)
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(UCFLAGS) -c $< -o $@

# A user-placed service: its sources, its skeleton, the user environment.
$(O)/user/svc-obj/%_server.c.o: $(GEN)/services/%_server.c | $(GENHDRS) $(SVC_GEN)
	@mkdir -p $(dir $@)
	@echo "  CC      $< (user)"
	$(Q)$(CC) $(UCFLAGS) -c $< -o $@

$(O)/user/svc-obj/%/main.o: services/env/user_main.c | $(GENHDRS) $(SVC_GEN)
	@mkdir -p $(dir $@)
	@echo "  CC      $< ($*)"
	$(Q)$(CC) $(UCFLAGS) -DSERVICE_ENTRY=$*_service -DSERVICE_FAST=$*_fastentry \
	    -DSERVICE_FAULT_FAST=$*_fault_fast -DSERVICE_FAULT_SHARED=$*_fault_shared -c $< -o $@

$(O)/user/svc-obj/env/%.c.o: services/env/%.c | $(GENHDRS) $(SVC_GEN)
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(UCFLAGS) -c $< -o $@

$(O)/user/svc-obj/src/%.c.o: %.c | $(GENHDRS) $(SVC_GEN)
	@mkdir -p $(dir $@)
	@echo "  CC      $< (user)"
	$(Q)$(CC) $(UCFLAGS) -c $< -o $@

$(O)/services/%.elf: $$(addprefix $(O)/user/svc-obj/src/,$$(addsuffix .o,$$(wildcard services/$$*/*.c) $(SVC_COMMON))) \
        $(O)/user/svc-obj/$$*_server.c.o $(O)/user/svc-obj/$$*/main.o $(O)/user/svc-obj/env/user_env.c.o \
        $(O)/user/svc-obj/env/user_proc.c.o \
        $(URTOBJ) $(ULDS)
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(LD) -T $(ULDS) -nostdlib $(ULDFLAGS) -o $@ $(filter %.o,$^)

$(O)/kernel/gen/%.c.o: $(GEN)/kernel/%.c $(KFLAGS_STAMP) | $(GENHDRS) $(SVC_GEN)
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(KCFLAGS) -DCONFIG_KTEST=0 -c $< -o $@

$(O)/kernel-test/gen/%.c.o: $(GEN)/kernel/%.c $(KFLAGS_STAMP) | $(GENHDRS) $(SVC_GEN)
	@mkdir -p $(dir $@)
	@echo "  CC      $< (test)"
	$(Q)$(CC) $(KCFLAGS) -DCONFIG_KTEST=1 -c $< -o $@

$(O)/kernel/kernel.elf: $(KOBJ) $(KLDS)
	@echo "  LD      $@"
	$(Q)$(LD) -T $(KLDS) -nostdlib -o $@ $(KOBJ)

$(O)/kernel-test/kernel.elf: $(KTOBJ) $(KLDS)
	@echo "  LD      $@"
	$(Q)$(LD) -T $(KLDS) -nostdlib -o $@ $(KTOBJ)

$(O)/k2/shadow.elf: $(K2OBJ) $(KLDS)
	@echo "  LD      $@"
	$(Q)$(LD) -T $(KLDS) --defsym=K2_SHADOW_PHYS=$(K2_SHADOW_PHYS) -nostdlib -o $@ $(K2OBJ)

$(O)/k2/shadow.bin: $(O)/k2/shadow.elf
	@echo "  OBJCOPY $@"
	$(Q)$(OBJCOPY) -O binary $< $@

$(O)/k2/gen/%_server.c.o: $(GEN)/services/%_server.c $(KFLAGS_STAMP) $(GEN)/k2/autoconf.h | $(GENHDRS) $(SVC_GEN)
	@mkdir -p $(dir $@)
	@echo "  CC      $< (shadow)"
	$(Q)$(CC) $(K2CFLAGS) -DCONFIG_KTEST=0 -c $< -o $@

$(O)/k2/gen/%_kclient.c.o: $(GEN)/services/%_kclient.c $(KFLAGS_STAMP) $(GEN)/k2/autoconf.h | $(GENHDRS) $(SVC_GEN)
	@mkdir -p $(dir $@)
	@echo "  CC      $< (shadow)"
	$(Q)$(CC) $(K2CFLAGS) -DCONFIG_KTEST=0 -c $< -o $@

$(O)/k2/gen/%.c.o: $(GEN)/kernel/%.c $(KFLAGS_STAMP) $(GEN)/k2/autoconf.h | $(GENHDRS) $(SVC_GEN)
	@mkdir -p $(dir $@)
	@echo "  CC      $< (shadow)"
	$(Q)$(CC) $(K2CFLAGS) -DCONFIG_KTEST=0 -c $< -o $@

$(O)/k2/%.c.o: %.c $(KFLAGS_STAMP) $(GEN)/k2/autoconf.h | $(GENHDRS) $(SVC_GEN)
	@mkdir -p $(dir $@)
	@echo "  CC      $< (shadow)"
	$(Q)$(CC) $(K2CFLAGS) -DCONFIG_KTEST=0 -c $< -o $@

$(O)/k2/%.S.o: %.S $(KFLAGS_STAMP) $(GEN)/k2/autoconf.h | $(GENHDRS) $(SVC_GEN)
	@mkdir -p $(dir $@)
	@echo "  AS      $< (shadow)"
	$(Q)$(CC) $(K2CFLAGS) -DCONFIG_KTEST=0 -c $< -o $@

%/kernel.bin: %/kernel.elf
	@echo "  OBJCOPY $@"
	$(Q)$(OBJCOPY) -O binary $< $@

$(O)/kernel/%.c.o: %.c $(KFLAGS_STAMP) | $(GENHDRS) $(SVC_GEN)
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(KCFLAGS) -DCONFIG_KTEST=0 -c $< -o $@

$(O)/kernel/%.S.o: %.S $(KFLAGS_STAMP) | $(GENHDRS) $(SVC_GEN)
	@mkdir -p $(dir $@)
	@echo "  AS      $<"
	$(Q)$(CC) $(KCFLAGS) -DCONFIG_KTEST=0 -c $< -o $@

$(O)/kernel-test/%.c.o: %.c $(KFLAGS_STAMP) | $(GENHDRS) $(SVC_GEN)
	@mkdir -p $(dir $@)
	@echo "  CC      $< (test)"
	$(Q)$(CC) $(KCFLAGS) -DCONFIG_KTEST=1 -c $< -o $@

$(O)/kernel-test/%.S.o: %.S $(KFLAGS_STAMP) | $(GENHDRS) $(SVC_GEN)
	@mkdir -p $(dir $@)
	@echo "  AS      $< (test)"
	$(Q)$(CC) $(KCFLAGS) -DCONFIG_KTEST=1 -c $< -o $@

$(O)/user/rt-obj/%.c.o: %.c | $(GENHDRS) $(SVC_GEN)
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(UCFLAGS) -c $< -o $@

$(O)/user/rt-obj/%.S.o: %.S | $(GENHDRS) $(SVC_GEN)
	@mkdir -p $(dir $@)
	@echo "  AS      $<"
	$(Q)$(CC) $(UCFLAGS) -c $< -o $@

$(O)/user/obj/%.c.o: %.c | $(GENHDRS) $(SVC_GEN)
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(UCFLAGS) -c $< -o $@

$(O)/user/obj/%.S.o: %.S | $(GENHDRS) $(SVC_GEN)
	@mkdir -p $(dir $@)
	@echo "  AS      $<"
	$(Q)$(CC) $(UCFLAGS) -c $< -o $@

$(O)/user/%.elf: $$(addprefix $(O)/user/obj/,$$(addsuffix .o,$$(call usrc,$$*))) $$(call usvcobj,$$*) $(URTOBJ) $(ULDS)
	@echo "  LD      $@"
	$(Q)$(LD) -T $(ULDS) -nostdlib $(ULDFLAGS) -o $@ $(filter %.o,$^)

clean:
	rm -rf $(O)

-include $(shell find $(O) -name '*.d' 2>/dev/null)
