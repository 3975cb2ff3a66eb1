/* Unknown system calls return ENOSYS and the program goes on. */
#include <unistd.h>
#include <sys/syscall.h>
#include "lxtest.h"

int main(void)
{
    SHOW("syscall 404", syscall(404));
    SHOW("syscall 500", syscall(500));
    SHOW("syscall 100000", syscall(100000));
    SHOW("syscall 500 again", syscall(500));
    printf("still running\n");
    return 0;
}
