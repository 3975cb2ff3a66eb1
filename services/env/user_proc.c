/*
 * The process environment (svc_proc.h) in user space: each call is the
 * system call of the same name on handles of the service's own table.
 * Handles are 32-bit values inside the 64-bit svc_handle.
 */
#include "petrel.h"
#include "svc_proc.h"

static svc_handle made(int64_t h, int *err)
{
    if (h < 0) {
        if (err)
            *err = (int)h;
        return 0;
    }
    return (svc_handle)h;
}

svc_handle svc_space_create(int *err)
{
    return made(sys_space_create(), err);
}

int svc_space_set_limit(svc_handle space, unsigned kind, uint64_t value)
{
    int64_t r = sys_space_set_limit((uint32_t)space, kind, value);     /* the usage, or an error */
    return r < 0 ? (int)r : 0;
}

int svc_space_kill(svc_handle space)
{
    return (int)sys_space_kill((uint32_t)space);
}

uint64_t svc_space_id(svc_handle space)
{
    int64_t id = sys_space_id((uint32_t)space);
    return id < 0 ? 0 : (uint64_t)id;
}

svc_handle svc_mem_create(uint64_t size, int *err)
{
    return made(sys_mem_create(size, MEM_PAGE_4K), err);
}

svc_handle svc_mem_bootfile(uint32_t index)
{
    return made(sys_mem_from_bootfile(root_handle(), index), NULL);
}

svc_handle svc_mem_clone(svc_handle mem, int *err)
{
    return made(sys_mem_clone((uint32_t)mem), err);
}

/* Map the pages of `mem` holding [offset, offset + len) here for a moment
 * and copy into them. */
int svc_mem_write(svc_handle mem, uint64_t offset, const void *src, uint64_t len)
{
    if (!len)
        return 0;
    uint64_t start = offset & ~4095ull, end = (offset + len + 4095) & ~4095ull;
    if (end <= start)
        return SVC_E_INVAL;
    uint64_t va = va_alloc(end - start, 4096);
    int64_t err = sys_mem_map(self_space(), (uint32_t)mem, va, start, end - start, R_READ | R_WRITE);
    if (err == 0) {
        memcpy((uint8_t *)va + (offset - start), src, len);
        sys_mem_unmap(self_space(), va);
    }
    va_free(va, end - start);
    return (int)err;
}

int svc_mem_map(svc_handle space, svc_handle mem, uint64_t va, uint64_t offset, uint64_t size, uint32_t rights)
{
    return (int)sys_mem_map((uint32_t)space, (uint32_t)mem, va, offset, size, rights);
}

int svc_mem_unmap(svc_handle space, uint64_t va, uint64_t size)
{
    return (int)sys_mem_unmap_range((uint32_t)space, va, size);
}

int svc_mem_protect(svc_handle space, uint64_t va, uint64_t size, uint32_t rights)
{
    return (int)sys_mem_protect((uint32_t)space, va, size, rights);
}

svc_handle svc_thread_create(svc_handle space, uint64_t utcb_va, int *err)
{
    return made(sys_thread_create((uint32_t)space, utcb_va), err);
}

/* Our endpoint is the one the supervisor granted as "service" (with the
 * right to send and to duplicate, so that it can be a fault handler). */
int svc_thread_fault_to_me(svc_handle thread, uint64_t badge)
{
    uint32_t ep = start_handle("service");
    int64_t h = ep ? sys_handle_dup(ep, R_WRITE, badge) : -E_BADHANDLE;
    if (h < 0)
        return (int)h;
    int64_t err = sys_thread_set_fault_handler((uint32_t)thread, (uint32_t)h);
    sys_handle_close((uint32_t)h);      /* the thread holds the endpoint now */
    return (int)err;
}

int svc_thread_copy(svc_handle t, svc_handle from)
{
    return (int)sys_thread_copy((uint32_t)t, (uint32_t)from);
}

int svc_thread_set_tls(svc_handle t, uint64_t value)
{
    return (int)sys_thread_set_tls((uint32_t)t, value);
}

int svc_thread_start(svc_handle thread, uint64_t pc, uint64_t sp, uint64_t arg)
{
    return (int)sys_thread_start((uint32_t)thread, pc, sp, arg);
}

void svc_console_write(const void *buf, uint64_t len)
{
    sys_debug_write(buf, len);
}

uint64_t svc_clock_ns(void)
{
    int64_t ns = sys_clock_ns();
    return ns < 0 ? 0 : (uint64_t)ns;
}
