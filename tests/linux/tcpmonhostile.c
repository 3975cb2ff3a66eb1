/*
 * A hostile reader of Petrel's /proc/net/tcpmon (services/linux/tcpmon.c;
 * Linux has no such file: run on Petrel only, tests/guest/cases.toml
 * monitor/hostile). Reads into unmapped and read-only memory (EFAULT, the
 * personality goes on), of 0 bytes and of a gigabyte, pread and lseek on
 * it, writes to it, as many opens as the process may have (EMFILE, then
 * all closed), four threads reading one open file at once while TCP
 * traffic fills the rings, and a child that dies holding it open: the
 * personality holds afterwards what it held before (/proc/petrel), and
 * the log still reads whole lines.
 */
#define _GNU_SOURCE
#include "lxtest.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>

#define LOG "/proc/net/tcpmon"

static void traffic(int port)
{
    int l = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(0x7f000001) };
    setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 4))
        exit(3);
    for (int i = 0; i < 20; i++) {
        int c = socket(AF_INET, SOCK_STREAM, 0);
        if (connect(c, (struct sockaddr *)&a, sizeof(a)))
            exit(4);
        int s = accept(l, NULL, NULL);
        char buf[4096] = { 0 };
        for (int k = 0; k < 16; k++)
            if (write(c, buf, sizeof(buf)) != sizeof(buf) || read(s, buf, sizeof(buf)) <= 0)
                exit(5);
        close(c);
        close(s);
    }
    close(l);
}

static int reader_fd;
static volatile int bad_line;

static void *reader(void *arg)
{
    (void)arg;
    char buf[777];
    for (int i = 0; i < 200; i++) {
        long n = read(reader_fd, buf, sizeof(buf));
        if (n < 0)
            bad_line = 1;
    }
    return NULL;
}

/* Every line of a fresh read of the log: a header, whole lines. */
static int whole_lines(void)
{
    int fd = open(LOG, O_RDONLY);
    static char text[1 << 20];
    long got = 0, n;
    while ((n = read(fd, text + got, sizeof(text) - 1 - got)) > 0)
        got += n;
    close(fd);
    text[got] = 0;
    return got > 0 && text[got - 1] == '\n' && !strncmp(text, "#       time", 12);
}

int main(void)
{
    struct petrel_usage before, after;
    petrel_usage_read(&before);
    traffic(9400);
    int fd = open(LOG, O_RDONLY);
    char *ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    errno = 0;
    printf("bad buffer: %ld %s\n", (long)read(fd, (void *)16, 4096), errname(errno));
    errno = 0;
    printf("read-only buffer: %ld %s\n", (long)read(fd, ro, 4096), errname(errno));
    errno = 0;
    printf("kernel address: %ld %s\n", (long)read(fd, (void *)0xffffff8040080000ul, 100), errname(errno));
    printf("zero bytes: %ld\n", (long)read(fd, ro, 0));
    static char big[64];
    long n = read(fd, big, 1ul << 30);      /* (a gigabyte asked into 64 bytes: EFAULT or what fits) */
    printf("a gigabyte into 64 bytes: %s\n", n < 0 ? errname(errno) : "some");
    errno = 0;
    printf("write: %ld %s\n", (long)write(fd, "x", 1), errname(errno));
    char b[100];
    printf("pread: %s, lseek: %s\n", pread(fd, b, sizeof(b), 12345) >= 0 ? "ok" : errname(errno),
           lseek(fd, 999, SEEK_SET) >= 0 ? "ok" : errname(errno));
    close(fd);
    munmap(ro, 4096);

    /* As many opens as the process may have, each read once (each a reader of its own). */
    struct rlimit lim = { 256, 256 };
    setrlimit(RLIMIT_NOFILE, &lim);
    int fds[300], opened = 0, err = 0;
    for (int i = 0; i < 300; i++) {
        fds[i] = open(LOG, O_RDONLY);
        if (fds[i] < 0) {
            err = errno;
            break;
        }
        read(fds[i], b, 1);
        opened++;
    }
    printf("opens until %s: %s\n", errname(err), opened > 200 ? "more than 200" : "few");
    for (int i = 0; i < opened; i++)
        close(fds[i]);

    /* Four threads on one open file while the rings fill. */
    reader_fd = open(LOG, O_RDONLY);
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&th[i], NULL, reader, NULL);
    traffic(9401);
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    close(reader_fd);
    printf("four readers at once: %s\n", bad_line ? "an error" : "fine");

    /* A child that dies holding a reader. */
    pid_t child = fork();
    if (child == 0) {
        int c = open(LOG, O_RDONLY);
        read(c, b, 10);
        _exit(0);
    }
    waitpid(child, NULL, 0);
    printf("the log reads whole lines: %d\n", whole_lines());
    printf("what the personality holds is as before: %d\n", petrel_usage_back(&before, &after, 65536));
    return 0;
}
