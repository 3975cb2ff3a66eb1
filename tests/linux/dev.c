/* /dev/null, /dev/zero and the console descriptors. */
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <termios.h>
#include <unistd.h>
#include "lxtest.h"

int main(void)
{
    char buf[64];
    struct stat st;
    int null = open("/dev/null", O_RDWR), zero = open("/dev/zero", O_RDONLY);
    SHOW("write /dev/null", write(null, "discarded", 9));
    SHOW("write /dev/null from a null pointer", write(null, NULL, 9));
    SHOW("read /dev/null", read(null, buf, sizeof(buf)));
    SHOW("lseek /dev/null", lseek(null, 100, SEEK_SET));
    memset(buf, 'x', sizeof(buf));
    SHOW("read /dev/zero", read(zero, buf, sizeof(buf)));
    int zeros = 0;
    for (unsigned i = 0; i < sizeof(buf); i++)
        zeros += buf[i] == 0;
    printf("zero bytes: %d\n", zeros);
    SHOW("write /dev/zero (read-only)", write(zero, buf, 1));
    fstat(null, &st);
    printf("/dev/null: chr %d, major %u minor %u, mode %o\n", S_ISCHR(st.st_mode), major(st.st_rdev),
           minor(st.st_rdev), st.st_mode & 0777);
    stat("/dev/zero", &st);
    printf("/dev/zero: chr %d, major %u minor %u\n", S_ISCHR(st.st_mode), major(st.st_rdev), minor(st.st_rdev));
    fstat(1, &st);
    printf("stdout is a character device: %d\n", S_ISCHR(st.st_mode));
    printf("isatty(1): %d isatty(null): %d\n", isatty(1), isatty(null));
    SHOW("ioctl TCGETS on /dev/null", ioctl(null, TCGETS, buf));
    struct winsize ws = { 1, 1, 1, 1 };
    SHOW("ioctl TIOCGWINSZ on stdout", ioctl(1, TIOCGWINSZ, &ws));
    printf("window: %u rows %u cols\n", ws.ws_row, ws.ws_col);
    SHOW("lseek stdout", lseek(1, 0, SEEK_CUR));
    SHOW("write stdout", write(1, "eleven byte\n", 12));
    return 0;
}
