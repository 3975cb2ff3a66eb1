/*
 * Kernel console output. kprintf formats (lib/format.c) into a line
 * buffer and writes it under the console lock, so that lines from
 * different cores never interleave.
 */
#include "kernel.h"
#include "spinlock.h"
#include "format.h"
#include "k2.h"

static void (*console_putc)(char c);
static spinlock_t own_lock = SPINLOCK_INIT;
static spinlock_t *console_lock = &own_lock;

/* Take console lines under `l` from now on (before any output): K2's
 * kernels share a hardware spinlock word, so that with two kernels on one
 * UART a line from either is whole. */
void console_share_lock(spinlock_t *l)
{
    console_lock = l;
}

/* Route console output to a character sink (the UART driver). */
void console_set_output(void (*putc)(char c))
{
    console_putc = putc;
}

/* Write raw bytes, translating \n to \r\n. Caller holds no lock. */
void console_write(const char *s, size_t len)
{
    if (!console_putc)
        return;
    uint64_t flags = spin_lock_irqsave(console_lock);
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '\n')
            console_putc('\r');
        console_putc(s[i]);
    }
    spin_unlock_irqrestore(console_lock, flags);
}

int kvsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
    return fmt_vsnprintf(buf, size, fmt, ap);
}

int ksnprintf(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = kvsnprintf(buf, size, fmt, ap);
    va_end(ap);
    return n;
}

/* Print to the console; long output is cut at 512 bytes per call. */
int kprintf(const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = kvsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    console_write(buf, strnlen(buf, sizeof(buf)));
    return n;
}
