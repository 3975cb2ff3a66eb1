/* Kernel-wide helpers: console output, panic, assertions, strings. */
#ifndef PETREL_KERNEL_H
#define PETREL_KERNEL_H

#include "types.h"
#include "errno.h"
#include "config.h"

struct trapframe;

/* Formatted output to the kernel console (printk.c, formats of lib/format.c). */
int kprintf(const char *fmt, ...) PRINTF(1, 2);
int kvsnprintf(char *buf, size_t size, const char *fmt, va_list ap);
int ksnprintf(char *buf, size_t size, const char *fmt, ...) PRINTF(3, 4);
void console_set_output(void (*putc)(char c));
void console_write(const char *s, size_t len);

/* panic.c: print the reason (and the frame, if any) and stop QEMU with a
 * non-zero status. Never returns. */
NORETURN void panic(const char *fmt, ...) PRINTF(1, 2);
NORETURN void panic_frame(const struct trapframe *tf, const char *fmt, ...) PRINTF(2, 3);

#define ASSERT(c) do { if (!(c)) panic("assertion failed: %s (%s:%d)", #c, __FILE__, __LINE__); } while (0)

#include "pstring.h"     /* lib/string.c */

/* cmdline.c: the boot arguments from /chosen/bootargs. */
void cmdline_init(const char *args);
const char *cmdline(void);
bool cmdline_has(const char *word);                 /* "word" or "word=..." */
bool cmdline_get(const char *key, char *val, size_t size);
uint64_t cmdline_get_u64(const char *key, uint64_t dflt);

/* Physical <-> kernel virtual (direct map). */
#define KERNEL_DIRECT_BASE  0xFFFFFF8000000000ull
static inline void *phys_to_virt(paddr_t pa) { return (void *)(pa + KERNEL_DIRECT_BASE); }
static inline paddr_t virt_to_phys(const void *va) { return (paddr_t)va - KERNEL_DIRECT_BASE; }

/* Linker symbols. */
extern char __kernel_start[], __text_end[], __rodata_end[], __data_end[], __kernel_end[];

#endif
