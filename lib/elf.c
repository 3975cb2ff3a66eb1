/* ELF64 checks shared by the kernel and the user runtime (lib/include/pelf.h). */
#include "pelf.h"
#include "pstring.h"
#include "petrel_abi.h"

int elf_check_header(const struct elf64_ehdr *eh, uint64_t size)
{
    if (size < sizeof(*eh) || memcmp(eh->ident, "\177ELF", 4) != 0)
        return -E_BADFORMAT;
    if (eh->ident[4] != 2 || eh->ident[5] != 1)        /* 64-bit, little endian */
        return -E_BADFORMAT;
    if (eh->type != ET_EXEC || eh->machine != EM_AARCH64)
        return -E_BADFORMAT;
    if (eh->phentsize != sizeof(struct elf64_phdr) || eh->phoff > size ||
        (uint64_t)eh->phnum * sizeof(struct elf64_phdr) > size - eh->phoff)
        return -E_BADFORMAT;
    return 0;
}

bool elf_segment_in_file(const struct elf64_phdr *p, uint64_t size)
{
    return p->filesz <= p->memsz && p->offset <= size && p->filesz <= size - p->offset;
}
