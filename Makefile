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
KINC     = -Ilib/include -Ikernel/include -Ikernel/include/uapi -I$(O)/gen/kernel -Ikernel/arch/aarch64/include -Ikernel/plat/qemu-virt
KCFLAGS  = $(CFLAGS_COMMON) $(KINC) -mcmodel=small -mstrict-align
KLDS     = kernel/arch/aarch64/kernel.ld

kobjs = $(patsubst %,$(O)/$(1)/%.o,$(2))

GEN       = $(O)/gen
GENSRC    = $(GEN)/kernel/syscall_table.c
GENHDRS   = $(GEN)/kernel/syscalls_gen.h $(GEN)/user/petrel_syscalls.h
KOBJ      = $(call kobjs,kernel,$(KSRC)) $(O)/kernel/gen/syscall_table.c.o
KTOBJ     = $(call kobjs,kernel-test,$(KSRC) $(KTSRC)) $(O)/kernel-test/gen/syscall_table.c.o

# ---------------------------------------------------------------- user
UPROGS   = $(filter-out rt,$(notdir $(patsubst %/main.c,%,$(wildcard user/*/main.c))))
URTSRC   = $(wildcard user/rt/*.c user/rt/*.S) $(wildcard lib/*.c)
UCFLAGS  = $(CFLAGS_COMMON) -Ilib/include -Iuser/rt/include -Ikernel/include/uapi -I$(O)/gen/user -mcmodel=small
ULDS     = user/rt/user.ld
URTOBJ   = $(patsubst %,$(O)/user/rt-obj/%.o,$(URTSRC))
UELFS    = $(patsubst %,$(O)/user/%.elf,$(UPROGS))

# ---------------------------------------------------------------- Linux baseline
# The Linux side of the benchmarks: static AArch64 musl programs.
LINUX_CC = aarch64-linux-musl-gcc
LINUX_BENCH = $(O)/bench/linux/init $(O)/bench/linux/null

.PHONY: all kernel kernel-test user clean linux-bench
.SECONDARY:
all: kernel kernel-test user linux-bench
linux-bench: $(LINUX_BENCH)

$(O)/bench/linux/init: bench/linux/bench.c bench/common/bwloops.S bench/common/bench.h
	@mkdir -p $(dir $@)
	@echo "  MUSLCC  $@"
	$(Q)$(LINUX_CC) -static -O2 -Wall -Werror -o $@ bench/linux/bench.c bench/common/bwloops.S -lpthread

$(O)/bench/linux/null: bench/linux/null.c
	@mkdir -p $(dir $@)
	@echo "  MUSLCC  $@"
	$(Q)$(LINUX_CC) -static -O2 -Wall -Werror -o $@ $<
kernel: $(O)/kernel/kernel.bin
kernel-test: $(O)/kernel-test/kernel.bin
user: $(UELFS)

# The system call interface: one description, generated C and docs.
$(GENSRC) $(GENHDRS) docs/reference/syscalls.md &: idl/syscalls.toml tools/petrel/syscallgen.py
	@echo "  GEN     $(GEN) docs/reference/syscalls.md"
	$(Q)PYTHONPATH=tools python3 -m petrel.syscallgen idl/syscalls.toml $(GEN) docs/reference/syscalls.md

$(O)/kernel/gen/%.c.o: $(GEN)/kernel/%.c
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(KCFLAGS) -DCONFIG_KTEST=0 -c $< -o $@

$(O)/kernel-test/gen/%.c.o: $(GEN)/kernel/%.c
	@mkdir -p $(dir $@)
	@echo "  CC      $< (test)"
	$(Q)$(CC) $(KCFLAGS) -DCONFIG_KTEST=1 -c $< -o $@

$(O)/kernel/kernel.elf: $(KOBJ) $(KLDS)
	@echo "  LD      $@"
	$(Q)$(LD) -T $(KLDS) -nostdlib -o $@ $(KOBJ)

$(O)/kernel-test/kernel.elf: $(KTOBJ) $(KLDS)
	@echo "  LD      $@"
	$(Q)$(LD) -T $(KLDS) -nostdlib -o $@ $(KTOBJ)

%/kernel.bin: %/kernel.elf
	@echo "  OBJCOPY $@"
	$(Q)$(OBJCOPY) -O binary $< $@

$(O)/kernel/%.c.o: %.c | $(GENHDRS)
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(KCFLAGS) -DCONFIG_KTEST=0 -c $< -o $@

$(O)/kernel/%.S.o: %.S
	@mkdir -p $(dir $@)
	@echo "  AS      $<"
	$(Q)$(CC) $(KCFLAGS) -DCONFIG_KTEST=0 -c $< -o $@

$(O)/kernel-test/%.c.o: %.c | $(GENHDRS)
	@mkdir -p $(dir $@)
	@echo "  CC      $< (test)"
	$(Q)$(CC) $(KCFLAGS) -DCONFIG_KTEST=1 -c $< -o $@

$(O)/kernel-test/%.S.o: %.S
	@mkdir -p $(dir $@)
	@echo "  AS      $< (test)"
	$(Q)$(CC) $(KCFLAGS) -DCONFIG_KTEST=1 -c $< -o $@

$(O)/user/rt-obj/%.c.o: %.c | $(GENHDRS)
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(UCFLAGS) -c $< -o $@

$(O)/user/rt-obj/%.S.o: %.S
	@mkdir -p $(dir $@)
	@echo "  AS      $<"
	$(Q)$(CC) $(UCFLAGS) -c $< -o $@

$(O)/user/obj/%.c.o: %.c | $(GENHDRS)
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(UCFLAGS) -c $< -o $@

$(O)/user/obj/%.S.o: %.S
	@mkdir -p $(dir $@)
	@echo "  AS      $<"
	$(Q)$(CC) $(UCFLAGS) -c $< -o $@

.SECONDEXPANSION:
$(O)/user/%.elf: $$(addprefix $(O)/user/obj/,$$(addsuffix .o,$$(wildcard user/$$*/*.c user/$$*/*.S))) $(URTOBJ) $(ULDS)
	@echo "  LD      $@"
	$(Q)$(LD) -T $(ULDS) -nostdlib -o $@ $(filter %.o,$^)

clean:
	rm -rf $(O)

-include $(shell find $(O) -name '*.d' 2>/dev/null)
