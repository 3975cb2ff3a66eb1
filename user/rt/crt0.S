/* Program entry: x0 = the boot information page, sp = the stack top. */
.section .text.start, "ax"
.global _start
_start:
    mov     x29, #0
    mov     x30, #0
    bl      main
    svc     #2              /* thread_exit with main's result */
1:  b       1b
