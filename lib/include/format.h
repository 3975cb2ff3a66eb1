/* The printf engine shared by kernel and user runtime (lib/format.c). */
#ifndef PETREL_FORMAT_H
#define PETREL_FORMAT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

/* Format into buf (always NUL-terminated if size > 0); returns the full length. */
int fmt_vsnprintf(char *buf, size_t size, const char *fmt, va_list ap);

#endif
