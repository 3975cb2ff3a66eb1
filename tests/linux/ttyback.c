/* The console's foreground group given back to group 0 of session 0, the
 * group of the native programs that started the first shell (what Debian's
 * dash does at exit when it was that shell: it restores the group it found
 * at start), then taken again. Run from the default system's shell
 * (linux/shell): Petrel's own arrangement, so not compared with Linux. */
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

int main(void)
{
    signal(SIGTTOU, SIG_IGN);                   /* (in the background after the first call, as dash is) */
    int to_zero = tcsetpgrp(0, 0);
    pid_t now = tcgetpgrp(0);
    int back = tcsetpgrp(0, getpgrp());
    printf("ttyback: group 0 %d (foreground %d), back %d\n", to_zero, (int)now, back);
    return 0;
}
