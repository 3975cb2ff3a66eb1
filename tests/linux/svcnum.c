/*
 * Linux ignores the number in `svc #N`: x8 alone says which call it is.
 * A Linux program on Petrel therefore makes Linux calls whatever N it
 * uses, and never reaches Petrel's own system calls.
 */
#include "lxtest.h"

#define SVC(imm, nr, a0) ({                                                     \
        register long x8_ __asm__("x8") = (nr);                                 \
        register long x0_ __asm__("x0") = (a0);                                 \
        __asm__ volatile("svc #" #imm : "+r"(x0_) : "r"(x8_) : "memory");       \
        x0_; })

#define NR_getpid   172
#define NR_write    64
#define NR_none     404

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    long pid = getpid();
    printf("svc #0 getpid: %d\n", SVC(0, NR_getpid, 0) == pid);
    printf("svc #1 getpid: %d\n", SVC(1, NR_getpid, 0) == pid);
    printf("svc #2 getpid: %d\n", SVC(2, NR_getpid, 0) == pid);
    printf("svc #45 getpid: %d\n", SVC(45, NR_getpid, 0) == pid);
    printf("svc #0x1234 getpid: %d\n", SVC(0x1234, NR_getpid, 0) == pid);
    printf("svc #0xffff getpid: %d\n", SVC(0xffff, NR_getpid, 0) == pid);
    printf("svc #3 unknown call: %ld\n", SVC(3, NR_none, 0));
    printf("svc #7 write to a bad descriptor: %ld\n", SVC(7, NR_write, -1));
    return 0;
}
