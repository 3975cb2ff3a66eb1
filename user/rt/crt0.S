/* Program entry: x0 = the boot or start information page, sp = the stack top. */
.section .text.start, "ax"
.global _start
_start:
    mov     x29, #0
    mov     x30, #0
    mov     x19, x0
    bl      rt_init
    mov     x0, x19
    bl      main
    bl      exit                    /* with main's result; does not return */
1:  b       1b

/* New threads start here with x0 -> { fn, arg } at the top of their stack. */
.global thread_entry
thread_entry:
    ldp     x1, x0, [x0]
    mov     x29, #0
    mov     x30, #0
    blr     x1
    mov     x0, #0
    svc     #2                      /* thread_exit(0) */
1:  b       1b
