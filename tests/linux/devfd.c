/*
 * /dev/fd, /dev/stdin, /dev/stdout and /proc/self/fd/N opened: a pipe's
 * ends reopened (reading and writing through them), the console, a
 * regular file as a new open file (its own offset), an unlinked file, a
 * socket (ENXIO), stat through the links.
 */
#include "lxtest.h"
#include <sys/socket.h>
#include <sys/stat.h>

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    char buf[64] = { 0 };
    int p[2];
    pipe(p);
    write(p[1], "through stdin", 13);
    int saved = dup(0);
    dup2(p[0], 0);
    int in = open("/dev/stdin", O_RDONLY);
    printf("open /dev/stdin (a pipe): %d\n", in >= 0);
    SHOW("read it", read(in, buf, sizeof(buf) - 1));
    printf("got: %s\n", buf);
    struct stat st;
    SHOW("fstat", fstat(in, &st));
    printf("a FIFO: %d\n", S_ISFIFO(st.st_mode));
    SHOW("stat /dev/stdin", stat("/dev/stdin", &st));
    printf("a FIFO: %d\n", S_ISFIFO(st.st_mode));
    dup2(saved, 0);
    close(saved);
    char path[32];
    snprintf(path, sizeof(path), "/dev/fd/%d", p[1]);
    int w = open(path, O_WRONLY);
    printf("open the write end by /dev/fd: %d\n", w >= 0);
    SHOW("write through it", write(w, "again", 5));
    close(p[1]);
    memset(buf, 0, sizeof(buf));
    SHOW("read from the first end", read(p[0], buf, 5));
    printf("got: %s\n", buf);
    close(w);
    close(in);
    SHOW("read: every writer gone", read(p[0], buf, 5));
    close(p[0]);

    int out = open("/dev/stdout", O_WRONLY);
    SHOW("write to /dev/stdout", write(out, "to stdout\n", 10));
    close(out);

    write_text("/tmp/devfd.txt", "0123456789");
    int f = open("/tmp/devfd.txt", O_RDONLY);
    read(f, buf, 4);
    snprintf(path, sizeof(path), "/proc/self/fd/%d", f);
    int g = open(path, O_RDONLY);
    memset(buf, 0, sizeof(buf));
    SHOW("a new open file of it reads from the start", read(g, buf, 3));
    printf("got: %s\n", buf);
    close(g);
    unlink("/tmp/devfd.txt");
    g = open(path, O_RDONLY);
    memset(buf, 0, sizeof(buf));
    SHOW("and after the file is unlinked", read(g, buf, 10));
    printf("got: %s\n", buf);
    close(g);
    close(f);
    int sv[2];
    socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
    snprintf(path, sizeof(path), "/dev/fd/%d", sv[0]);
    SHOW("open a socket's link", open(path, O_RDWR));
    SHOW("open a closed descriptor's", open("/dev/fd/50", O_RDONLY));
    SHOW("lstat /dev/stdin", lstat("/dev/stdin", &st));
    printf("a link: %d\n", S_ISLNK(st.st_mode));
    return 0;
}
