/*
 * The bandwidth loops, shared by the Petrel and the Linux benchmark
 * programs so that both run exactly the same instructions.
 *
 * uint64_t bw_read(const void *buf, uint64_t bytes)    sum of 64-bit words
 * void bw_copy(void *dst, const void *src, uint64_t bytes)
 * bytes: a multiple of 64.
 */
.text
.balign 16
.global bw_read
bw_read:
    mov     x2, #0
1:  ldp     x3, x4, [x0], #16
    ldp     x5, x6, [x0], #16
    ldp     x7, x8, [x0], #16
    ldp     x9, x10, [x0], #16
    add     x2, x2, x3
    add     x2, x2, x4
    add     x2, x2, x5
    add     x2, x2, x6
    add     x2, x2, x7
    add     x2, x2, x8
    add     x2, x2, x9
    add     x2, x2, x10
    subs    x1, x1, #64
    b.hi    1b
    mov     x0, x2
    ret

.balign 16
.global bw_copy
bw_copy:
1:  ldp     x3, x4, [x1], #16
    ldp     x5, x6, [x1], #16
    ldp     x7, x8, [x1], #16
    ldp     x9, x10, [x1], #16
    stp     x3, x4, [x0], #16
    stp     x5, x6, [x0], #16
    stp     x7, x8, [x0], #16
    stp     x9, x10, [x0], #16
    subs    x2, x2, #64
    b.hi    1b
    ret
