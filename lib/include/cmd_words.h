/*
 * Split a command line into words in place: blanks separate them and
 * 'single quotes' keep one whole (without its quotes). Shared by the Linux
 * personality (running a command file) and the Linux side's /init of the
 * oracle tests, so both read a command line the same way.
 */
#ifndef PETREL_CMD_WORDS_H
#define PETREL_CMD_WORDS_H

/* Split `text` (changed in place) into at most `max` words in out[]; how many. */
static inline int cmd_words(char *text, char **out, int max)
{
    int n = 0;
    char *s = text;
    while (*s && n < max) {
        while (*s == ' ' || *s == '\t')
            s++;
        if (!*s)
            break;
        char *d = s;
        out[n++] = s;
        while (*s && *s != ' ' && *s != '\t') {
            if (*s != '\'') {
                *d++ = *s++;
                continue;
            }
            for (s++; *s && *s != '\''; )
                *d++ = *s++;
            if (*s)
                s++;
        }
        if (*s)
            s++;
        *d = 0;
    }
    return n;
}

#endif
