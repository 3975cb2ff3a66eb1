/*
 * Machine code that hostile copies into spaces it builds by hand, where
 * no runtime runs: position independent, no stack, one argument in x0.
 * System call numbers come from the generated header.
 */
#include "hostile_int.h"

#define STR_(x) #x
#define STR(x) STR_(x)

__asm__(
    ".pushsection .rodata.blobs, \"a\"\n"
    ".balign 4\n"

    /* Attack 1: use the handle slot forged at address 24 (slot 1). */
    ".global forge_code, forge_code_end\n"
    "forge_code:\n"
    "    mov x0, #1\n"
    "    svc #" STR(SYS_HANDLE_INFO) "\n"
    "    mov x0, #1\n"
    "    svc #" STR(SYS_SYSTEM_OFF) "\n"
    "    mov x0, #0\n"
    "    svc #" STR(SYS_THREAD_EXIT) "\n"
    "forge_code_end:\n"

    /* Attack 2: look a handle up with no handle table at all. */
    ".global info5_code, info5_code_end\n"
    "info5_code:\n"
    "    mov x0, #5\n"
    "    svc #" STR(SYS_HANDLE_INFO) "\n"
    "    mov x0, #0\n"
    "    svc #" STR(SYS_THREAD_EXIT) "\n"
    "info5_code_end:\n"

    /* Attack 3: x0 is an endpoint handle. Each round reads the UTCB page
     * (it must still be mapped) and calls the endpoint with MR0 = the
     * round number, until the answer's MR0 is 1 or the call fails. */
    ".global round_code, round_code_end\n"
    "round_code:\n"
    "    mov x19, x0\n"
    "    mov x20, #0\n"
    "1:  mov x9, #" STR(STALE_VA) "\n"
    "    ldr x10, [x9]\n"
    "    mov x0, x19\n"
    "    movz x1, #1\n"                                     /* one word */
    "    movk x1, #" STR(LABEL_ROUND) ", lsl #16\n"
    "    mov x2, x20\n"
    "    svc #" STR(SYS_IPC_CALL) "\n"
    "    cbnz x0, 2f\n"
    "    cmp x2, #1\n"
    "    b.eq 2f\n"
    "    add x20, x20, #1\n"
    "    b 1b\n"
    "2:  mov x0, #0\n"
    "    svc #" STR(SYS_THREAD_EXIT) "\n"
    "round_code_end:\n"

    /* Attack 8: x0 is the address of a counter; count for ever. */
    ".global spin_code, spin_code_end\n"
    "spin_code:\n"
    "1:  ldr x1, [x0]\n"
    "    add x1, x1, #1\n"
    "    str x1, [x0]\n"
    "    b 1b\n"
    "spin_code_end:\n"
    ".popsection\n");
