/*
 * Boot arguments: the words of /chosen/bootargs, "key" or "key=value",
 * separated by spaces. The kernel keeps a copy; policy such as which
 * tests to run reads them here.
 */
#include "kernel.h"

static char args[512];

/* Keep a copy of the boot arguments (cut at 511 bytes). */
void cmdline_init(const char *s)
{
    size_t n = s ? strnlen(s, sizeof(args) - 1) : 0;
    memcpy(args, s ? s : "", n);
    args[n] = '\0';
}

const char *cmdline(void)
{
    return args;
}

/* Find the word for key; returns its start and sets *val and *vlen. */
static const char *find(const char *key, const char **val, size_t *vlen)
{
    size_t klen = strlen(key);
    for (const char *p = args; *p; ) {
        while (*p == ' ')
            p++;
        const char *w = p;
        while (*p && *p != ' ')
            p++;
        if ((size_t)(p - w) >= klen && strncmp(w, key, klen) == 0 &&
            (w[klen] == '=' || w + klen == p)) {
            *val = w[klen] == '=' ? w + klen + 1 : p;
            *vlen = (size_t)(p - *val);
            return w;
        }
    }
    return NULL;
}

bool cmdline_has(const char *word)
{
    const char *v;
    size_t n;
    return find(word, &v, &n) != NULL;
}

/* Copy the value of key=value into val; false if absent or too long. */
bool cmdline_get(const char *key, char *val, size_t size)
{
    const char *v;
    size_t n;
    if (!find(key, &v, &n) || n + 1 > size)
        return false;
    memcpy(val, v, n);
    val[n] = '\0';
    return true;
}

/* A decimal or 0x-hex value of key, or dflt if absent or malformed. */
uint64_t cmdline_get_u64(const char *key, uint64_t dflt)
{
    char buf[24];
    if (!cmdline_get(key, buf, sizeof(buf)) || !buf[0])
        return dflt;
    uint64_t v = 0;
    unsigned base = 10;
    const char *p = buf;
    if (p[0] == '0' && p[1] == 'x') {
        base = 16;
        p += 2;
    }
    for (; *p; p++) {
        unsigned d;
        if (*p >= '0' && *p <= '9') d = (unsigned)(*p - '0');
        else if (base == 16 && *p >= 'a' && *p <= 'f') d = (unsigned)(*p - 'a' + 10);
        else return dflt;
        v = v * base + d;
    }
    return v;
}
