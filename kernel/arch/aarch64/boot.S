/*
 * The boot stub: the only code that runs at physical addresses.
 *
 * QEMU (or any arm64 boot loader) enters _start at EL2 or EL1 with the
 * MMU off and x0 = the physical address of the device tree. The stub
 * drops to EL1, zeroes .bss, builds a one-table early map (boot_l1) that
 * maps the 1 GiB block holding the kernel and the one holding the DTB,
 * both at their physical address (through TTBR0) and at the direct-map
 * address KERNEL_VA_BASE + PA (through TTBR1: with 39-bit addresses the
 * same L1 index serves both), turns the MMU on and jumps to kernel_main
 * in the upper half. kernel_main then builds the real kernel map.
 *
 * Secondary cores enter at secondary_entry through PSCI CPU_ON with
 * x0 = their logical index; they reuse boot_l1 as the identity map and
 * the final kernel table published in kernel_ttbr1.
 */
#include <config.h>
#include <arch/mmu_defs.h>
#include <arch/kstack.h>

.section .text.boot, "ax"
.global _start
_start:
    /* arm64 Image header (Documentation/arm64/booting.rst layout). */
    b       primary_entry
    .long   0
    .quad   0x80000                 /* text_offset */
    .quad   __kernel_image_size     /* image_size, .bss included */
    .quad   0x2                     /* flags: little endian, 4K pages */
    /* res2: "K2SHADOW" in K2's shadow kernel (the main kernel checks it
     * before starting that image: core/k2.c), 0 otherwise */
    .quad   CONFIG_K2_SHADOW * 0x574f44414853324b
    .quad   0, 0
    .ascii  "ARM\x64"
    .long   0

primary_entry:
    mov     x19, x0                 /* DTB physical address */
    mrs     x1, CurrentEL           /* remember the entry level for the banner */
    lsr     x1, x1, #2
    adrp    x2, boot_entry_el
    str     x1, [x2, :lo12:boot_entry_el]
    add     x2, x2, :lo12:boot_entry_el
    dc      civac, x2
    bl      drop_to_el1

    /* The kernel is linked for one load address; refuse any other. */
    adr     x1, _start
    ldr     x2, =KERNEL_PHYS
    cmp     x1, x2
    b.ne    boot_hang

    /* Zero .bss (physical addresses: PC-relative). */
    adrp    x1, __bss_start
    add     x1, x1, :lo12:__bss_start
    adrp    x2, __bss_end
    add     x2, x2, :lo12:__bss_end
1:  cmp     x1, x2
    b.hs    2f
    stp     xzr, xzr, [x1], #16
    b       1b
2:
    /* Early map: the kernel's GiB and the DTB's GiB. */
    adrp    x20, boot_l1
    ldr     x3, =BOOT_BLOCK_ATTRS
    adr     x1, _start
    bl      map_gib
    mov     x1, x19
    bl      map_gib
    /* Walks are cacheable: push the table out of any stale lines. */
    mov     x1, x20
    add     x2, x20, #4096
3:  dc      civac, x1
    add     x1, x1, #64
    cmp     x1, x2
    b.lo    3b
    dsb     sy

    mov     x0, x20                 /* TTBR0 = TTBR1 = boot_l1 */
    mov     x1, x20
    bl      enable_mmu

    /* Now in the upper half, on cpu0's kernel stack. */
    ldr     x1, =kstack_region + KSTACK_SLOT
    mov     sp, x1
    mov     x0, x19
    ldr     x1, =kernel_main
    br      x1

/* map_gib: x20 = L1 table, x1 = physical address, x3 = attributes. */
map_gib:
    lsr     x4, x1, #30
    and     x4, x4, #511
    lsl     x5, x4, #30
    orr     x5, x5, x3
    str     x5, [x20, x4, lsl #3]
    ret

/* enable_mmu: x0 = TTBR0, x1 = TTBR1. Returns with the MMU on. */
enable_mmu:
    ldr     x2, =MAIR_VALUE
    msr     mair_el1, x2
    ldr     x2, =TCR_VALUE
    mrs     x3, id_aa64mmfr0_el1
    and     x4, x3, #0xf            /* PARange -> IPS */
    cmp     x4, #5
    mov     x5, #5
    csel    x4, x4, x5, ls
    orr     x2, x2, x4, lsl #32
    ubfx    x4, x3, #4, #4          /* ASIDBits: 2 = 16-bit ASIDs */
    cmp     x4, #2
    b.ne    1f
    mov     x5, #1
    orr     x2, x2, x5, lsl #36
1:  msr     tcr_el1, x2
    msr     ttbr0_el1, x0
    msr     ttbr1_el1, x1
    mov     x2, #(3 << 20)          /* CPACR_EL1.FPEN: no FP/SIMD traps */
    msr     cpacr_el1, x2
    isb
    tlbi    vmalle1
    dsb     nsh
    ldr     x2, =SCTLR_BOOT
    msr     sctlr_el1, x2
    isb
    ret

/* drop_to_el1: if entered at EL2, configure EL1 and return there. */
drop_to_el1:
    mrs     x0, CurrentEL
    lsr     x0, x0, #2
    cmp     x0, #2
    b.ne    1f
    mov     x0, #(1 << 31)          /* HCR_EL2.RW: EL1 is AArch64 */
    msr     hcr_el2, x0
    mov     x0, #3                  /* EL1 may use the physical counter/timer */
    msr     cnthctl_el2, x0
    msr     cntvoff_el2, xzr
    mrs     x0, id_aa64pfr0_el1     /* GIC system registers available? */
    ubfx    x0, x0, #24, #4
    cbz     x0, 2f
    mov     x0, #0x9                /* ICC_SRE_EL2: Enable | SRE */
    msr     S3_4_C12_C9_5, x0
2:  ldr     x0, =SCTLR_RES1
    msr     sctlr_el1, x0
    mov     x0, #0x3c5              /* EL1h, DAIF masked */
    msr     spsr_el2, x0
    msr     elr_el2, lr
    eret
1:  ret

boot_hang:
    wfe
    b       boot_hang

/* Secondary cores: x0 = logical index (PSCI context id). */
.global secondary_entry
secondary_entry:
    mov     x19, x0
    bl      drop_to_el1
    adrp    x0, boot_l1
    adrp    x1, kernel_ttbr1
    ldr     x1, [x1, :lo12:kernel_ttbr1]
    bl      enable_mmu
    ldr     x1, =kstack_region + KSTACK_SLOT
    mov     x2, #KSTACK_SLOT
    madd    x1, x19, x2, x1         /* the top of this core's kernel stack */
    mov     sp, x1
    mov     x0, x19
    ldr     x1, =secondary_main
    br      x1

.ltorg

.section .bss
.balign 4096
.global boot_l1
boot_l1:
    .space  4096

/*
 * Kernel stacks, emergency stacks and their guards: the layout is in
 * <arch/kstack.h>. Slots are aligned to their size, which the EL1
 * exception entry's overflow check relies on.
 */
.section .kstacks, "aw", %nobits
.balign KSTACK_SLOT
.global kstack_region
kstack_region:
    .space  KSTACK_REGION_SIZE

.section .data
.balign 8
.global kernel_ttbr1
kernel_ttbr1:
    .quad   0
.global boot_entry_el
boot_entry_el:
    .quad   0
