/*
 * AArch64 translation constants shared by boot.S and mmu.c.
 * 4 KiB granule, 39-bit virtual addresses, three levels (L1 1 GiB
 * blocks, L2 2 MiB blocks, L3 4 KiB pages), TTBR0 for user space,
 * TTBR1 for the kernel.
 */
#ifndef PETREL_MMU_DEFS_H
#define PETREL_MMU_DEFS_H

#ifdef __ASSEMBLER__
#define UL(x)   x
#else
#define UL(x)   x##UL
#endif

#define KERNEL_VA_BASE      0xFFFFFF8000000000  /* direct map of RAM: VA = base + PA */
#define DEVICE_VA_BASE      0xFFFFFFC000000000  /* device window: VA = base + PA */
#define KALIAS_VA_BASE      (DEVICE_VA_BASE + (UL(255) << 30))  /* one page a core: K2's cache maintenance */
#define USER_VA_TOP         0x0000008000000000  /* 512 GiB of user space */
#define VA_BITS             39

#define PAGE_SIZE           4096
#define PAGE_SHIFT          12

/* Descriptor bits. */
#define PTE_VALID           (UL(1) << 0)
#define PTE_TABLE           (UL(1) << 1)    /* at L1/L2: next-level table; at L3: page */
#define PTE_PAGE            (UL(1) << 1)
#define PTE_ATTR(i)         (UL(i) << 2)
#define PTE_AP_EL0          (UL(1) << 6)    /* EL0 may access */
#define PTE_AP_RO           (UL(1) << 7)    /* read only */
#define PTE_SH_INNER        (UL(3) << 8)
#define PTE_AF              (UL(1) << 10)
#define PTE_NG              (UL(1) << 11)   /* not global: tagged with the ASID */
#define PTE_CONT            (UL(1) << 52)
#define PTE_PXN             (UL(1) << 53)
#define PTE_UXN             (UL(1) << 54)
#define PTE_ADDR_MASK       0x0000FFFFFFFFF000

/* MAIR attribute indexes. */
#define MT_DEVICE_nGnRnE    0
#define MT_NORMAL           1
#define MT_DEVICE_nGnRE     2
#define MT_NORMAL_NC        3
#define MAIR_VALUE          0x4404FF00

/* T0SZ = T1SZ = 25 (39-bit), WBWA inner shareable walks, TG0 4K, TG1 4K. */
#define TCR_VALUE           (25 | (UL(1) << 8) | (UL(1) << 10) | (3 << 12) | (25 << 16) | \
                             (UL(1) << 24) | (UL(1) << 26) | (3 << 28) | (2 << 30))
#define TCR_AS              (UL(1) << 36)

/* SCTLR_EL1: RES1 bits of ARMv8.0 plus what Petrel turns on. */
#define SCTLR_RES1          0x30D00800
#define SCTLR_M             (UL(1) << 0)
#define SCTLR_C             (UL(1) << 2)
#define SCTLR_SA            (UL(1) << 3)
#define SCTLR_SA0           (UL(1) << 4)
#define SCTLR_I             (UL(1) << 12)
#define SCTLR_DZE           (UL(1) << 14)
#define SCTLR_UCT           (UL(1) << 15)
#define SCTLR_NTWI          (UL(1) << 16)
#define SCTLR_NTWE          (UL(1) << 18)
#define SCTLR_WXN           (UL(1) << 19)
#define SCTLR_UCI           (UL(1) << 26)
#define SCTLR_BOOT          (SCTLR_RES1 | SCTLR_M | SCTLR_C | SCTLR_SA | SCTLR_SA0 | \
                             SCTLR_I | SCTLR_DZE | SCTLR_UCT | SCTLR_NTWI | SCTLR_NTWE | SCTLR_UCI)

/* Early boot block: normal memory, EL1 read/write, executable at EL1. */
#define BOOT_BLOCK_ATTRS    (PTE_VALID | PTE_ATTR(MT_NORMAL) | PTE_SH_INNER | PTE_AF | PTE_UXN)

#endif
