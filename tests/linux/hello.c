/* The smallest Linux program: stdio to the console, a raw write, stderr. */
#include <stdio.h>
#include <unistd.h>

int main(void)
{
    printf("hello, world\n");
    fflush(stdout);
    write(1, "raw write\n", 10);
    fprintf(stderr, "to stderr\n");
    puts("bye");
    return 0;
}
