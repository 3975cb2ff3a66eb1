/* Creating, writing, reading, truncating and unlinking files in /tmp, with
 * every errno on the way (open's O_CREAT, O_EXCL, O_TRUNC, O_APPEND; write,
 * pwrite64 and holes; ftruncate and truncate; fsync; unlink of open files). */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "lxtest.h"

#define DIR "/tmp/fsfiles"

static void show_file(const char *what, const char *path)
{
    char buf[64] = { 0 };
    int fd = open(path, O_RDONLY);
    long n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
    for (long i = 0; i < n; i++)
        if (buf[i] == 0)
            buf[i] = '.';                       /* holes read as zeros */
    printf("%s: %ld [%s]\n", what, n, n > 0 ? buf : "");
    if (fd >= 0)
        close(fd);
}

static long size_of(const char *path)
{
    struct stat st;
    return stat(path, &st) ? -1 : (long)st.st_size;
}

int main(void)
{
    char buf[256];
    struct stat st;
    SHOW("mkdir " DIR, mkdir(DIR, 0755));
    SHOW("open a new file without O_CREAT", open(DIR "/a", O_RDONLY));
    int fd = open(DIR "/a", O_WRONLY | O_CREAT | O_EXCL, 0644);
    printf("create a: %s\n", fd >= 0 ? "ok" : errname(errno));
    SHOW("create a again with O_EXCL", open(DIR "/a", O_WRONLY | O_CREAT | O_EXCL, 0644));
    SHOW("write hello", write(fd, "hello", 5));
    SHOW("read from a write-only descriptor", read(fd, buf, 5));
    SHOW("fstat size", (fstat(fd, &st), st.st_size));
    printf("mode %o nlink %ld uid %d gid %d blocks %ld blksize %ld\n", st.st_mode, (long)st.st_nlink, st.st_uid,
           st.st_gid, (long)st.st_blocks, (long)st.st_blksize);
    SHOW("write world at 5", write(fd, " world", 6));
    SHOW("lseek end", lseek(fd, 0, SEEK_END));
    SHOW("fsync", fsync(fd));
    SHOW("fdatasync", fdatasync(fd));
    SHOW("close", close(fd));
    show_file("a reads", DIR "/a");

    fd = open(DIR "/a", O_WRONLY | O_APPEND);
    SHOW("append", write(fd, "!", 1));
    SHOW("lseek 0 then append again", (lseek(fd, 0, SEEK_SET), write(fd, "?", 1)));
    SHOW("position after an append", lseek(fd, 0, SEEK_CUR));
    SHOW("pwrite at 0 with O_APPEND (appends, as Linux)", pwrite(fd, "#", 1, 0));
    close(fd);
    show_file("after appends", DIR "/a");

    fd = open(DIR "/a", O_RDWR | O_TRUNC);
    SHOW("size after O_TRUNC", size_of(DIR "/a"));
    SHOW("pwrite at 10 (a hole before it)", pwrite(fd, "xyz", 3, 10));
    SHOW("size", size_of(DIR "/a"));
    SHOW("position unchanged by pwrite", lseek(fd, 0, SEEK_CUR));
    show_file("hole", DIR "/a");
    SHOW("pread 2 at 11", pread(fd, buf, 2, 11));
    printf("pread bytes: %.2s\n", buf);
    SHOW("pwrite at a negative offset", pwrite(fd, "x", 1, -1));
    SHOW("pread past the end", pread(fd, buf, 10, 100));
    SHOW("ftruncate to 4", ftruncate(fd, 4));
    show_file("truncated", DIR "/a");
    SHOW("ftruncate to 8 (zeros)", ftruncate(fd, 8));
    show_file("grown", DIR "/a");
    SHOW("ftruncate -1", ftruncate(fd, -1));
    SHOW("write at a position past the end", (lseek(fd, 12, SEEK_SET), write(fd, "E", 1)));
    show_file("write past the end", DIR "/a");
    close(fd);
    fd = open(DIR "/a", O_RDONLY);
    SHOW("ftruncate of a read-only descriptor", ftruncate(fd, 0));
    SHOW("write to a read-only descriptor", write(fd, "x", 1));
    close(fd);
    SHOW("truncate by path to 2", truncate(DIR "/a", 2));
    show_file("truncate", DIR "/a");
    SHOW("truncate a directory", truncate(DIR, 0));
    SHOW("truncate a missing file", truncate(DIR "/none", 0));
    SHOW("truncate -1", truncate(DIR "/a", -1));
    SHOW("ftruncate a bad descriptor", ftruncate(77, 0));
    SHOW("fsync a bad descriptor", fsync(77));
    int p[2];
    if (pipe(p) == 0) {
        SHOW("fsync a pipe", fsync(p[0]));
        SHOW("ftruncate a pipe", ftruncate(p[1], 0));
        close(p[0]);
        close(p[1]);
    }
    fd = open("/dev/null", O_WRONLY);
    SHOW("fsync /dev/null", fsync(fd));
    close(fd);

    /* Errors of open with O_CREAT. */
    SHOW("create in a missing directory", open(DIR "/no/b", O_WRONLY | O_CREAT, 0644));
    SHOW("create under a file", open(DIR "/a/b", O_WRONLY | O_CREAT, 0644));
    SHOW("create name/ (a trailing slash)", open(DIR "/b/", O_WRONLY | O_CREAT, 0644));
    SHOW("O_CREAT on a directory", open(DIR, O_RDONLY | O_CREAT, 0644));
    SHOW("O_CREAT|O_EXCL on a directory", open(DIR, O_RDONLY | O_CREAT | O_EXCL, 0644));
    SHOW("open a directory for writing", open(DIR, O_WRONLY));
    SHOW("O_CREAT|O_EXCL of /tmp/.", open("/tmp/.", O_RDONLY | O_CREAT | O_EXCL, 0644));
    fd = open(DIR "/m", O_WRONLY | O_CREAT, 04777);
    SHOW("mode of a new file, 04777 less the umask", (fstat(fd, &st), (long)(st.st_mode & 07777)));
    close(fd);
    SHOW("O_RDWR|O_CREAT on an existing file keeps it", (fd = open(DIR "/a", O_RDWR | O_CREAT, 0600), size_of(DIR "/a")));
    close(fd);

    /* An unlinked file stays readable through its descriptor. */
    fd = open(DIR "/u", O_RDWR | O_CREAT, 0644);
    SHOW("write u", write(fd, "still here", 10));
    int fd2 = open(DIR "/u", O_RDONLY);
    SHOW("unlink u", unlink(DIR "/u"));
    SHOW("stat u after unlink", stat(DIR "/u", &st));
    SHOW("fstat nlink after unlink", (fstat(fd, &st), (long)st.st_nlink));
    SHOW("read through the other descriptor", read(fd2, buf, 10));
    printf("read: %.10s\n", buf);
    SHOW("write after unlink", write(fd, "!", 1));
    SHOW("fstat size", (fstat(fd2, &st), (long)st.st_size));
    close(fd);
    SHOW("read after the writer closed", pread(fd2, buf, 11, 0));
    close(fd2);
    SHOW("unlink again", unlink(DIR "/u"));
    SHOW("create u again", (fd = open(DIR "/u", O_RDWR | O_CREAT | O_EXCL, 0644)) >= 0 ? size_of(DIR "/u") : -1);
    close(fd);

    /* A file of 300 KiB written in odd pieces reads back the same. */
    fd = open(DIR "/big", O_RDWR | O_CREAT | O_TRUNC, 0644);
    static char chunk[7001];
    long sum = 0, total = 0;
    for (int i = 0; i < 44; i++) {
        for (unsigned k = 0; k < sizeof(chunk); k++)
            chunk[k] = (char)(i * 7 + k);
        total += write(fd, chunk, sizeof(chunk));
    }
    lseek(fd, 0, SEEK_SET);
    long got;
    while ((got = read(fd, chunk, 4096)) > 0)
        for (long k = 0; k < got; k++)
            sum += (unsigned char)chunk[k];
    printf("big: wrote %ld, sum %ld, size %ld blocks %ld\n", total, sum, size_of(DIR "/big"),
           (fstat(fd, &st), (long)st.st_blocks));
    /* Mappings of a written file: a private one, and a shared read-only one. */
    unsigned char *m = mmap(NULL, 308044, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    long msum = 0;
    for (long k = 0; m != MAP_FAILED && k < 308044; k++)
        msum += m[k];
    printf("private mapping: same sum %d\n", m != MAP_FAILED && msum == sum);
    if (m != MAP_FAILED) {
        m[0] ^= 0xff;                           /* private: the file does not change */
        SHOW("the file's first byte unchanged", pread(fd, chunk, 1, 0) == 1 && (unsigned char)chunk[0] != m[0]);
        munmap(m, 308044);
    }
    m = mmap(NULL, 8192, PROT_READ, MAP_SHARED, fd, 4096);
    printf("shared read-only mapping at 4096: %d\n", m != MAP_FAILED && pread(fd, chunk, 8192, 4096) == 8192 &&
           !memcmp(m, chunk, 8192));
    if (m != MAP_FAILED)
        munmap(m, 8192);
    close(fd);
    SHOW("write from a bad buffer", (fd = open(DIR "/a", O_WRONLY), write(fd, (void *)16, 4)));
    SHOW("size unchanged", size_of(DIR "/a"));
    close(fd);

    /* An existing file of the archive, copied on first write. */
    fd = open("/etc/hello.txt", O_RDONLY);
    long len = read(fd, buf, sizeof(buf));
    close(fd);
    fd = open(DIR "/copy", O_WRONLY | O_CREAT, 0644);
    SHOW("copy of /etc/hello.txt", write(fd, buf, len) == len);
    close(fd);
    fd = open("/etc/hello.txt", O_RDWR);
    SHOW("overwrite an archive file's first byte", write(fd, "J", 1));
    close(fd);
    fd = open("/etc/hello.txt", O_RDONLY);
    char again[256];
    long len2 = read(fd, again, sizeof(again));
    close(fd);
    printf("archive file after the write: same length %d, first byte %c, rest same %d\n", len2 == len, again[0],
           len > 1 && !memcmp(again + 1, buf + 1, len - 1));
    fd = open("/etc/hello.txt", O_WRONLY);
    write(fd, buf, 1);
    close(fd);

    /* An archive file cut short, then grown (zeros), then restored. */
    fd = open("/data/sub/c.txt", O_RDWR);
    len = read(fd, buf, sizeof(buf));
    SHOW("ftruncate an archive file to 3", ftruncate(fd, 3));
    show_file("cut", "/data/sub/c.txt");
    SHOW("ftruncate it to 6", ftruncate(fd, 6));
    show_file("grown", "/data/sub/c.txt");
    SHOW("restored", (ftruncate(fd, 0), pwrite(fd, buf, len, 0) == len));
    close(fd);
    fd = open("/data/b.txt", O_RDWR);
    len = read(fd, buf, sizeof(buf));
    SHOW("truncate another to 0 and back", (ftruncate(fd, 0), pwrite(fd, buf, len, 0) == len));
    close(fd);

    const char *names[] = { "a", "m", "u", "big", "copy" };
    for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        snprintf(buf, sizeof(buf), DIR "/%s", names[i]);
        unlink(buf);
    }
    SHOW("rmdir " DIR, rmdir(DIR));
    return 0;
}
