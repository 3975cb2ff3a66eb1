/*
 * A thousand processes alive at once: the parent forks 1,000 children
 * that each wait on a pipe, checks that every one of them is there (kill
 * 0, its group, its /proc directory), lets them go, and waits for each
 * with its own exit status; twice (after a smaller round that fills
 * Petrel's cache of /proc nodes, which is not a leak). On Petrel the personality's usage
 * (/proc/petrel) must come back after each round: every process record,
 * thread, file and memory object let go, and the pages under its records
 * no more than the tables that index them keep (128 KiB).
 */
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "lxtest.h"

#define N 1000
#define SLACK (128 * 1024)

static pid_t pids[N];

static int round_of(int r, int n)
{
    int hold[2];
    if (pipe(hold))
        return 0;
    int made = 0, err = 0;
    for (; made < n; made++) {
        pid_t pid = fork();
        if (pid == 0) {
            char b;
            close(hold[1]);
            int got = (int)read(hold[0], &b, 1);        /* end of file once the parent closes */
            _exit(got == 0 ? (int)(getpid() % 200) : 255);
        }
        if (pid < 0) {
            err = errno;
            break;
        }
        pids[made] = pid;
    }
    if (r)
        printf("round %d: forked %d children%s%s\n", r, made, made < n ? ", then " : "", made < n ? errname(err) : "");
    int there = 0, dirs = 0, groups = 0;
    for (int i = 0; i < made; i++) {
        char path[32];
        struct stat st;
        snprintf(path, sizeof(path), "/proc/%d", (int)pids[i]);
        there += kill(pids[i], 0) == 0;
        dirs += stat(path, &st) == 0 && S_ISDIR(st.st_mode);
        groups += getpgid(pids[i]) == getpgrp();
    }
    if (r)
        printf("round %d: alive %d, with /proc directories %d, in our group %d\n", r, there, dirs, groups);
    close(hold[0]);
    close(hold[1]);
    int reaped = 0, right = 0, status;
    for (int i = made - 1; i >= 0; i--) {           /* the newest first: any order must do */
        if (waitpid(pids[i], &status, 0) == pids[i]) {
            reaped++;
            right += WIFEXITED(status) && WEXITSTATUS(status) == (int)(pids[i] % 200);
        }
    }
    int none_left = waitpid(-1, &status, WNOHANG) < 0 && errno == ECHILD;
    if (r)
        printf("round %d: reaped %d, each with its own status %d, none left: %d\n", r, reaped, right, none_left);
    return made == n && there == n && reaped == n && right == n && none_left;
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    struct petrel_usage before, after1, after2;
    round_of(0, 120);               /* first: /proc's cache of nodes (procfs.c) is full from here on */
    petrel_usage_read(&before);
    int ok = round_of(1, N);
    int back1 = petrel_usage_back(&before, &after1, SLACK);
    ok &= round_of(2, N);
    int back2 = petrel_usage_back(&after1, &after2, SLACK);
    printf("the personality's usage back after each round: %d %d\n", back1, back2);
    return ok && back1 && back2 ? 0 : 1;
}
