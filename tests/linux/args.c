/* argc, argv, envp and the auxiliary vector as the program receives them. */
#include <elf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include "lxtest.h"

extern char **environ;

int main(int argc, char **argv)
{
    printf("argc: %d\n", argc);
    for (int i = 0; i < argc; i++)
        printf("argv[%d]: %s\n", i, argv[i]);
    printf("argv[argc] is NULL: %d\n", argv[argc] == NULL);
    for (char **e = environ; *e; e++)
        printf("env: %s\n", *e);
    printf("envp follows argv: %d\n", environ == argv + argc + 1);
    char **e = environ;
    while (*e)
        e++;
    uint64_t *aux = (uint64_t *)(e + 1);
    printf("auxv keys:");
    for (uint64_t *a = aux; a[0] != AT_NULL; a += 2)
        if (a[0] != AT_SYSINFO_EHDR)            /* the vDSO: Linux has one, Petrel not yet */
            printf(" %lu", (unsigned long)a[0]);
    printf("\n");
    printf("AT_PAGESZ: %lu\n", getauxval(AT_PAGESZ));
    printf("AT_PHENT: %lu\n", getauxval(AT_PHENT));
    const Elf64_Phdr *ph = (const Elf64_Phdr *)getauxval(AT_PHDR);
    unsigned long phnum = getauxval(AT_PHNUM), loads = 0;
    for (unsigned long i = 0; i < phnum; i++)
        loads += ph[i].p_type == PT_LOAD;
    printf("AT_PHDR lists the PT_LOAD segments: %lu\n", loads);
    printf("AT_BASE: %lu\n", getauxval(AT_BASE));
    extern char _start[];
    printf("AT_ENTRY is _start: %d\n", getauxval(AT_ENTRY) == (unsigned long)_start);
    printf("AT_UID %lu AT_EUID %lu AT_GID %lu AT_EGID %lu\n", getauxval(AT_UID), getauxval(AT_EUID),
           getauxval(AT_GID), getauxval(AT_EGID));
    printf("AT_SECURE: %lu\n", getauxval(AT_SECURE));
    printf("AT_CLKTCK: %lu\n", getauxval(AT_CLKTCK));
    printf("AT_EXECFN: %s\n", (const char *)getauxval(AT_EXECFN));
    printf("AT_PLATFORM: %s\n", (const char *)getauxval(AT_PLATFORM));
    const unsigned char *rnd = (const unsigned char *)getauxval(AT_RANDOM);
    unsigned sum = 0;
    for (int i = 0; i < 16; i++)
        sum |= rnd[i];
    printf("AT_RANDOM: 16 bytes, not all zero: %d\n", sum != 0);
    printf("AT_RANDOM lies between auxv and the strings: %d\n",
           (uintptr_t)rnd > (uintptr_t)aux && (uintptr_t)rnd < (uintptr_t)argv[0]);
    printf("AT_HWCAP has fp and asimd: %d ~%#lx\n", (getauxval(AT_HWCAP) & 3) == 3, getauxval(AT_HWCAP));
    printf("AT_HWCAP2: ~%#lx\n", getauxval(AT_HWCAP2));
    printf("AT_MINSIGSTKSZ: %lu\n", getauxval(AT_MINSIGSTKSZ));
    printf("argc is 16-byte aligned: %d\n", ((uintptr_t)(argv - 1) & 15) == 0);
    printf("strings in order: %d\n", argc < 2 || argv[1] == argv[0] + strlen(argv[0]) + 1);
    return argc > 1 ? atoi(argv[argc - 1]) : 0;
}
