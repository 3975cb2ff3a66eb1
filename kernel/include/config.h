/*
 * Build-time kernel configuration. Each option is a plain constant so
 * that code tests it with `if`, never with #ifdef inside a function.
 */
#ifndef PETREL_CONFIG_H
#define PETREL_CONFIG_H

#ifndef CONFIG_KTEST
#define CONFIG_KTEST        0   /* in-kernel self tests, run with bootarg "ktest" */
#endif
#define CONFIG_MAX_CPUS     8   /* cores the kernel will bring up */
#define CONFIG_HZ           100 /* timer ticks per second (bootarg hz= overrides) */
#define CONFIG_KSTACK_SIZE  16384
#define CONFIG_MAX_MEM_REGIONS 16

#endif
