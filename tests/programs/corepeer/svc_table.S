/* svc_table: entry n (1..127) is `svc #n; ret`, 8 bytes each, so the fuzz
 * mode can make any call number with arguments in x0..x5. */
.section .text
.balign 8
.global svc_table
svc_table:
    .set n, 0
    .rept 128
    .if n == 0
    brk #0
    .else
    svc #n
    .endif
    ret
    .set n, n + 1
    .endr
