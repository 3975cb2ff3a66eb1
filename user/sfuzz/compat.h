/* TEMPORARY until main has space_set_limit/space_usage/space_kill. */
#ifndef SFUZZ_COMPAT_H
#define SFUZZ_COMPAT_H
#ifndef SYS_SPACE_KILL
#define E_LIMIT 15
enum { LIMIT_MEMORY = 0, LIMIT_THREADS, LIMIT_HANDLES, LIMIT_SPACES, LIMIT_KINDS };
#define LIMIT_QUERY_MAX 0x100u
static inline int64_t sys_space_set_limit(uint32_t s, uint32_t k, uint64_t v)
{
    register uint64_t x0 __asm__("x0") = s;
    register uint64_t x1 __asm__("x1") = k;
    register uint64_t x2 __asm__("x2") = v;
    __asm__ volatile("svc #23" : "+r"(x0) : "r"(x1), "r"(x2) : "memory");
    return (int64_t)x0;
}
static inline int64_t sys_space_usage(uint32_t s, uint32_t k)
{
    register uint64_t x0 __asm__("x0") = s;
    register uint64_t x1 __asm__("x1") = k;
    __asm__ volatile("svc #24" : "+r"(x0) : "r"(x1) : "memory");
    return (int64_t)x0;
}
static inline int64_t sys_space_kill(uint32_t s)
{
    register uint64_t x0 __asm__("x0") = s;
    __asm__ volatile("svc #25" : "+r"(x0) : : "memory");
    return (int64_t)x0;
}
#endif
#endif
