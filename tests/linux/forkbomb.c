/* Many processes: fork until the system says no or 200 are alive (both
 * Linux and Petrel let root have far more; what bounds Petrel's is the
 * system description's spaces and memory), then everything still works: the children end,
 * are waited for, and a new fork succeeds. Each child has its copy of 40
 * separate mappings (the personality holds a memory object for each). */
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "lxtest.h"

#define MAX 200
#define MAPS 40

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    char *maps[MAPS];
    int mapped = 0;
    for (int i = 0; i < MAPS; i++) {
        maps[i] = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (maps[i] != MAP_FAILED) {
            maps[i][4096] = (char)i;
            mapped++;
        }
    }
    printf("mapped %d regions\n", mapped);
    int hold[2];
    pipe(hold);
    int n = 0, err = 0;
    for (; n < MAX; n++) {
        pid_t pid = fork();
        if (pid == 0) {
            char b;
            close(hold[1]);
            read(hold[0], &b, 1);               /* until the parent lets go */
            int good = 1;
            for (int i = 0; i < MAPS; i++)
                good &= maps[i][4096] == (char)i;
            _exit(good);
        }
        if (pid < 0) {
            err = errno;
            break;
        }
    }
    printf("forked ~%d children, then %s\n", n, n == MAX ? "stopped" : errname(err));
    printf("stopped by the limit or at %d: %d\n", MAX, n == MAX || err == EAGAIN);
    close(hold[1]);
    int reaped = 0, st;
    while (wait(&st) > 0)
        reaped += WEXITSTATUS(st);
    printf("every child ended, saw its mappings and was waited for: %d\n", reaped == n);
    pid_t pid = fork();
    if (pid == 0)
        _exit(5);
    waitpid(pid, &st, 0);
    printf("a fork afterwards: status %d\n", WEXITSTATUS(st));
    return 0;
}
