/*
 * A small printf engine shared by the kernel and the user runtime:
 * %d %u %x %o %p %s %c %% with the l, ll and z length modifiers, a field
 * width, '0' padding and '-' for left alignment.
 */
#include "format.h"
#include "pstring.h"

struct out {
    char *buf;
    size_t size, len;
};

static void out_c(struct out *o, char c)
{
    if (o->len + 1 < o->size)
        o->buf[o->len] = c;
    o->len++;
}

/* Emit an unsigned number in base 8, 10 or 16 with width and padding. */
static void out_num(struct out *o, uint64_t v, unsigned base, int width, char pad, bool neg, bool left)
{
    char tmp[24];
    int n = 0;
    do {
        tmp[n++] = "0123456789abcdef"[v % base];
        v /= base;
    } while (v);
    if (neg)
        tmp[n++] = '-';
    int fill = width > n ? width - n : 0;
    if (!left)
        while (fill-- > 0)
            out_c(o, pad);
    while (n)
        out_c(o, tmp[--n]);
    if (left)
        while (fill-- > 0)
            out_c(o, ' ');
}

/* printf into buf (always NUL-terminated); returns the full length. */
int fmt_vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
    struct out o = { buf, size, 0 };
    for (; *fmt; fmt++) {
        if (*fmt != '%') {
            out_c(&o, *fmt);
            continue;
        }
        fmt++;
        bool left = false;
        char pad = ' ';
        int width = 0, lng = 0;
        if (*fmt == '-') { left = true; fmt++; }
        if (*fmt == '0') { pad = '0'; fmt++; }
        while (*fmt >= '0' && *fmt <= '9')
            width = width * 10 + (*fmt++ - '0');
        while (*fmt == 'l') { lng++; fmt++; }
        if (*fmt == 'z') { lng = 1; fmt++; }
        switch (*fmt) {
        case 'd': {
            int64_t v = lng ? va_arg(ap, int64_t) : va_arg(ap, int);
            out_num(&o, v < 0 ? -(uint64_t)v : (uint64_t)v, 10, width, pad, v < 0, left);
            break;
        }
        case 'u':
            out_num(&o, lng ? va_arg(ap, uint64_t) : va_arg(ap, unsigned), 10, width, pad, false, left);
            break;
        case 'x':
        case 'o':
            out_num(&o, lng ? va_arg(ap, uint64_t) : va_arg(ap, unsigned), *fmt == 'x' ? 16 : 8, width, pad, false,
                    left);
            break;
        case 'p':
            out_c(&o, '0');
            out_c(&o, 'x');
            out_num(&o, (uint64_t)va_arg(ap, void *), 16, 16, '0', false, false);
            break;
        case 's': {
            const char *s = va_arg(ap, const char *);
            if (!s)
                s = "(null)";
            int n = (int)strlen(s);
            if (!left)
                for (int i = n; i < width; i++)
                    out_c(&o, ' ');
            while (*s)
                out_c(&o, *s++);
            if (left)
                for (int i = n; i < width; i++)
                    out_c(&o, ' ');
            break;
        }
        case 'c':
            out_c(&o, (char)va_arg(ap, int));
            break;
        case '%':
            out_c(&o, '%');
            break;
        default:
            out_c(&o, '%');
            if (*fmt)
                out_c(&o, *fmt);
            else
                fmt--;
        }
    }
    if (size)
        buf[o.len < size ? o.len : size - 1] = '\0';
    return (int)o.len;
}

