/* Basic fixed-width types for the freestanding kernel. */
#ifndef PETREL_TYPES_H
#define PETREL_TYPES_H

#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdarg.h>

typedef uint64_t paddr_t;       /* a physical address */
typedef uint64_t vaddr_t;       /* a virtual address */

#define PADDR_INVALID   ((paddr_t)~0ull)

#define ALIGN_UP(x, a)      (((x) + ((a) - 1)) & ~((__typeof__(x))(a) - 1))
#define ALIGN_DOWN(x, a)    ((x) & ~((__typeof__(x))(a) - 1))
#define IS_ALIGNED(x, a)    (((x) & ((__typeof__(x))(a) - 1)) == 0)
#define ARRAY_SIZE(a)       (sizeof(a) / sizeof((a)[0]))
#define MIN(a, b)           ((a) < (b) ? (a) : (b))
#define MAX(a, b)           ((a) > (b) ? (a) : (b))

#define KiB(x)  ((uint64_t)(x) << 10)
#define MiB(x)  ((uint64_t)(x) << 20)
#define GiB(x)  ((uint64_t)(x) << 30)

#define NORETURN    __attribute__((noreturn))
#define ALWAYS_INLINE inline __attribute__((always_inline))
#define NOINLINE    __attribute__((noinline))
#define likely(x)   __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#define UNUSED      __attribute__((unused))
#define PRINTF(a, b) __attribute__((format(printf, a, b)))
#define READ_ONCE(x)        (*(volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, v)    (*(volatile __typeof__(x) *)&(x) = (v))

#endif
