/* Process groups and sessions: setsid, setpgid, getpgid, getsid and
 * their errors (a session leader, a child in another session, a child
 * that has called execve, a group in no session of ours, processes that
 * are not there), zombies that still have their group. Run without
 * arguments; it runs itself ("sessions wait") for the exec case. */
#include <stdlib.h>
#include <sys/wait.h>
#include "lxtest.h"

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc > 1) {                             /* exec'd: say so, then wait for the parent */
        char b;
        write(4, "e", 1);
        read(3, &b, 1);
        return 0;
    }
    pid_t me = getpid();
    printf("getsid(0) == getsid(pid): %d\n", getsid(0) == getsid(me));
    printf("getpgid(0) == getpgrp(): %d\n", getpgid(0) == getpgrp());
    SHOW("setpgid(0, -1)", setpgid(0, -1));
    SHOW("setpgid of nobody", setpgid(99999, 0));
    SHOW("setpgid(-1, 0)", setpgid(-1, 0));
    SHOW("getpgid of nobody", getpgid(99999));
    SHOW("getsid of nobody", getsid(99999));
    SHOW("getpgid(-1)", getpgid(-1));
    SHOW("getsid(-1)", getsid(-1));

    /* A new session: it leads its session and its group. */
    SHOW("setsid returns the pid", setsid() == me);
    printf("session %d group %d\n", getsid(0) == me, getpgrp() == me);
    SHOW("setsid again (a group leader)", setsid());
    SHOW("setpgid(0, 0) as a session leader", setpgid(0, 0));
    SHOW("setpgid(0, pid) as a session leader", setpgid(0, me));
    SHOW("setpgid(pid, pid) as a session leader", setpgid(me, me));

    /* Children: in the caller's group, moved to groups of its session. */
    int hold[2];
    pipe(hold);
    pid_t kids[3];
    for (int i = 0; i < 3; i++) {
        if ((kids[i] = fork()) == 0) {
            char b;
            close(hold[1]);
            read(hold[0], &b, 1);
            _exit(0);
        }
    }
    printf("children start in the caller's group: %d\n", getpgid(kids[0]) == me && getpgid(kids[1]) == me);
    printf("and its session: %d\n", getsid(kids[0]) == me);
    SHOW("setpgid(child, 0): its own group", setpgid(kids[0], 0));
    printf("  its group: %d\n", getpgid(kids[0]) == kids[0]);
    SHOW("setpgid(child, the first child's group)", setpgid(kids[1], kids[0]));
    printf("  its group: %d\n", getpgid(kids[1]) == kids[0]);
    SHOW("setpgid(child, a group that is not there)", setpgid(kids[2], 99999));
    SHOW("setpgid(child, back to the caller's)", setpgid(kids[1], me));
    printf("  its group: %d\n", getpgid(kids[1]) == me);
    SHOW("setpgid(child, its own pid)", setpgid(kids[2], kids[2]));
    SHOW("setpgid of itself into a child's group", setpgid(0, kids[0]));

    /* A grandchild is not the caller's to move. */
    int gp[2], ga[2];
    pipe(gp);
    pipe(ga);
    pid_t mid = fork();
    if (mid == 0) {
        pid_t g = fork();
        if (g == 0) {
            char b;
            read(ga[0], &b, 1);
            _exit(0);
        }
        write(gp[1], &g, sizeof(g));
        int st;
        waitpid(g, &st, 0);
        _exit(0);
    }
    pid_t grandchild = 0;
    read(gp[0], &grandchild, sizeof(grandchild));
    SHOW("setpgid of a grandchild", setpgid(grandchild, grandchild));
    printf("getpgid of a grandchild works: %d\n", getpgid(grandchild) == me);
    write(ga[1], "x", 1);
    int st;
    waitpid(mid, &st, 0);

    /* A child in a session of its own. */
    int said[2];
    pipe(said);
    pid_t other = fork();
    if (other == 0) {
        char b;
        close(hold[1]);
        setsid();
        write(said[1], "s", 1);
        read(hold[0], &b, 1);
        _exit(0);
    }
    char b;
    read(said[0], &b, 1);
    printf("the child's session is its own: %d\n", getsid(other) == other);
    SHOW("setpgid of a child in another session", setpgid(other, 0));
    SHOW("setpgid of a child into a group of another session", setpgid(kids[2], other));

    /* A child that has called execve. */
    int go[2], done[2];
    pipe(go);
    pipe(done);
    pid_t execd = fork();
    if (execd == 0) {
        dup2(go[0], 3);
        dup2(done[1], 4);
        char *args[] = { "sessions", "wait", NULL };
        execve("/bin/sessions", args, NULL);
        _exit(99);
    }
    read(done[0], &b, 1);
    SHOW("setpgid of a child after its execve", setpgid(execd, execd));
    SHOW("setpgid of it to 0", setpgid(execd, 0));
    printf("  its group unchanged: %d\n", getpgid(execd) == me);
    write(go[1], "x", 1);
    waitpid(execd, &st, 0);

    /* A zombie keeps its group and session until it is waited for. */
    int zp[2];
    pipe(zp);
    pid_t z = fork();
    if (z == 0) {
        read(zp[0], &b, 1);
        _exit(0);
    }
    setpgid(z, z);
    write(zp[1], "x", 1);
    siginfo_t si;
    waitid(P_PID, z, &si, WEXITED | WNOWAIT);
    SHOW("getpgid of a zombie is its group", getpgid(z) == z);
    SHOW("getsid of a zombie", getsid(z) == me);
    waitpid(z, &st, 0);
    SHOW("once waited for", getpgid(z));

    close(hold[1]);
    for (int i = 0; i < 3; i++)
        waitpid(kids[i], &st, 0);
    waitpid(other, &st, 0);
    SHOW("all children waited for", wait(&st));
    return 0;
}
