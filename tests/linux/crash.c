/* A bad access ends the program with SIGSEGV and nothing else. */
#include <stdio.h>

int main(void)
{
    printf("about to crash\n");
    fflush(stdout);
    volatile int *bad = (volatile int *)8;
    __asm__ volatile("" : "+r"(bad));           /* an address the compiler cannot see */
    *bad = 1;
    printf("not reached\n");
    return 0;
}
