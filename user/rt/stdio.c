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

bool bootarg(const struct petrel_bootinfo *bi, const char *key, char *val, size_t size)
{
    size_t klen = strlen(key);
    const char *p = bi->cmdline;
    while (*p) {
        while (*p == ' ')
            p++;
        const char *w = p;
        while (*p && *p != ' ')
            p++;
        if ((size_t)(p - w) > klen && strncmp(w, key, klen) == 0 && w[klen] == '=') {
            size_t n = (size_t)(p - w) - klen - 1;
            if (n + 1 > size)
                return false;
            memcpy(val, w + klen + 1, n);
            val[n] = '\0';
            return true;
        }
    }
    return false;
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
