/*
 * thread_copy: a created thread becomes a copy of another thread's user
 * state, so that a process-owning service can fork. The registers come
 * from the saved trapframe, TLS from the saved TPIDR_EL0 and the FP/SIMD
 * registers from the saved FP area: all of them are current in memory
 * whenever the source is not running (a thread that used FP in its slice
 * is saved when it is switched out, arch/aarch64/fpu.c).
 *
 * The copy's FP area is charged with its thread (thread_bytes counts one),
 * so this call allocates nothing new against any limit.
 */
#include "thread.h"
#include "object.h"
#include "errno.h"
#include "syscalls_gen.h"

#define PSTATE_NZCV     (0xfull << 28)

/* The thread behind handle h of the calling process with `rights`, or NULL with *err. */
static struct thread *thread_of(uint32_t h, uint32_t rights, int64_t *err)
{
    struct handle_slot *sl;
    int e = handle_get(current_thread()->space, h, OBJ_THREAD, rights, &sl);
    *err = e;
    return e ? NULL : list_entry(sl->obj, struct thread, obj);
}

int64_t sys_thread_copy(uint32_t dst_h, uint32_t src_h)
{
    int64_t err;
    struct thread *dst = thread_of(dst_h, R_MANAGE, &err);
    if (!dst)
        return err;
    struct thread *src = thread_of(src_h, R_READ, &err);
    if (!src)
        return err;
    if (dst == src)
        return -E_INVAL;
    if (dst->state != T_INACTIVE)
        return -E_STATE;
    if (src->state == T_RUNNING)
        return -E_STATE;
    return thread_copy_state(dst, src);
}

/* The same for a kernel-placed service, whose caller may be the source:
 * in its own kernel entry its user registers are all in its trapframe,
 * and its FP/SIMD registers are saved first (arch_fp_flush). */
int thread_copy_state(struct thread *dst, struct thread *src)
{
    if (dst == src)
        return -E_INVAL;
    if (dst->state != T_INACTIVE || src->state == T_DEAD || (src->state == T_RUNNING && src != current_thread()))
        return -E_STATE;
    if (src == current_thread()) {
        arch_fp_flush(src);
        src->tls = read_sysreg(tpidr_el0);     /* saved only when it is switched out */
    }
    int e = arch_fp_copy(dst, src);
    if (e)
        return e;
    uint64_t pstate = (dst->tf.pstate & ~PSTATE_NZCV) | (src->tf.pstate & PSTATE_NZCV);
    dst->tf = src->tf;
    dst->tf.pstate = pstate;            /* EL0t as created; only the condition flags come along */
    dst->tls = src->tls;
    return 0;
}
