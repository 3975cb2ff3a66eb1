/* Console output and small helpers of the user runtime. */
#include "petrel.h"
#include "format.h"

int snprintf(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = fmt_vsnprintf(buf, size, fmt, ap);
    va_end(ap);
    return n;
}

/* Format and write to the console (cut at 512 bytes). */
int printf(const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = fmt_vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    sys_debug_write(buf, strnlen(buf, sizeof(buf)));
    return n;
}

int puts(const char *s)
{
    sys_debug_write(s, strlen(s));
    sys_debug_write("\n", 1);
    return 0;
}

static unsigned tap_count;

void tap_ok(bool ok, const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    fmt_vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    printf("%s %u - %s\n", ok ? "ok" : "not ok", ++tap_count, buf);
}

void tap_plan(void)
{
    printf("1..%u\n", tap_count);
}
