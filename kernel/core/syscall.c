/*
 * System call dispatch. A Petrel call is `svc #N` with N > 0 (N is the
 * call number, read from the syndrome), arguments in x0..x5 and the
 * result in x0: a value >= 0 or a negated error code. Every argument is
 * checked; a bad one gets an error, never a panic.
 */
#include "thread.h"
#include "vm.h"
#include "petrel_abi.h"
#include <arch/trapframe.h>

#define DEBUG_WRITE_MAX 4096

/* Copy len bytes from user address src, page by page; -E_FAULT if any is unreadable. */
int copy_from_user(void *dst, vaddr_t src, size_t len)
{
    uint8_t *d = dst;
    while (len) {
        if (src + len < src)
            return -E_FAULT;
        const uint8_t *p = vm_user_ptr(src, false);
        if (!p)
            return -E_FAULT;
        size_t chunk = MIN(len, 4096 - (src & 4095));
        memcpy(d, p, chunk);
        d += chunk, src += chunk, len -= chunk;
    }
    return 0;
}

/* debug_write(buf, len): write to the kernel console. */
static int64_t sys_debug_write(vaddr_t buf, uint64_t len)
{
    char tmp[256];
    if (len > DEBUG_WRITE_MAX)
        return -E_INVAL;
    for (uint64_t done = 0; done < len; ) {
        size_t n = MIN(len - done, sizeof(tmp));
        if (copy_from_user(tmp, buf + done, n))
            return -E_FAULT;
        console_write(tmp, n);
        done += n;
    }
    return (int64_t)len;
}

int64_t syscall_dispatch(unsigned number, struct trapframe *tf)
{
    switch (number) {
    case PETREL_SYS_DEBUG_WRITE:
        return sys_debug_write(tf->x[0], tf->x[1]);
    case PETREL_SYS_EXIT:
        thread_exit((int)tf->x[0]);
    case PETREL_SYS_YIELD:
    case PETREL_SYS_NULL:
        return 0;
    default:
        return -E_NOSYS;
    }
}
