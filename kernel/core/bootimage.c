/*
 * Reader of the boot image (PBI): a 32-byte header ("PETRELBI", version,
 * count, total size), `count` 64-byte entries (name, offset, size,
 * flags) and page-aligned file data. Every entry is checked before use:
 * name terminated, data page aligned, after the entry table and inside
 * the image.
 */
#include "bootimage.h"
#include "kernel.h"

struct pbi_header {
    char magic[8];
    uint32_t version;
    uint32_t count;
    uint64_t total_size;
    uint64_t reserved;
};

struct pbi_entry {
    char name[BOOTIMAGE_NAME_MAX];
    uint64_t offset;
    uint64_t size;
    uint32_t flags;
    uint32_t reserved;
};

_Static_assert(sizeof(struct pbi_header) == 32, "PBI header");
_Static_assert(sizeof(struct pbi_entry) == 64, "PBI entry");

static const uint8_t *image;
static paddr_t image_pa;
static uint64_t image_size;

/* Check an image; on failure *why says what is wrong. */
int bootimage_check(const void *data, uint64_t size, const char **why)
{
    const struct pbi_header *h = data;
    *why = NULL;
    if (size < sizeof(*h))
        *why = "shorter than its header";
    else if (memcmp(h->magic, "PETRELBI", 8) != 0)
        *why = "bad magic";
    else if (h->version != 1)
        *why = "unsupported version";
    else if (h->total_size > size || h->total_size < sizeof(*h))
        *why = "total size larger than the image";
    else if (h->count > (h->total_size - sizeof(*h)) / sizeof(struct pbi_entry))
        *why = "entry table larger than the image";
    if (*why)
        return -E_BADFORMAT;

    uint64_t table_end = sizeof(*h) + (uint64_t)h->count * sizeof(struct pbi_entry);
    const struct pbi_entry *e = (const void *)(h + 1);
    for (uint32_t i = 0; i < h->count; i++, e++) {
        if (strnlen(e->name, BOOTIMAGE_NAME_MAX) == BOOTIMAGE_NAME_MAX || e->name[0] == '\0')
            *why = "entry name empty or unterminated";
        else if (!IS_ALIGNED(e->offset, 4096) || e->offset < table_end)
            *why = "entry data misaligned or inside the header";
        else if (e->offset > h->total_size || e->size > h->total_size - e->offset)
            *why = "entry data outside the image";
        if (*why)
            return -E_BADFORMAT;
    }
    return 0;
}

/* Take the image QEMU loaded as the initrd. */
int bootimage_open(paddr_t pa, uint64_t size)
{
    const char *why;
    int err = bootimage_check(phys_to_virt(pa), size, &why);
    if (err) {
        kprintf("bootimage: rejected: %s\n", why);
        return err;
    }
    image = phys_to_virt(pa);
    image_pa = pa;
    image_size = ((const struct pbi_header *)image)->total_size;
    return 0;
}

unsigned bootimage_count(void)
{
    return image ? ((const struct pbi_header *)image)->count : 0;
}

uint64_t bootimage_size(void) { return image_size; }

int bootimage_get(unsigned index, struct bootimage_file *f)
{
    if (index >= bootimage_count())
        return -E_NOENT;
    const struct pbi_entry *e = (const struct pbi_entry *)(image + sizeof(struct pbi_header)) + index;
    f->name = e->name;
    f->data = image + e->offset;
    f->pa = image_pa + e->offset;
    f->size = e->size;
    f->flags = e->flags;
    return 0;
}

int bootimage_find(const char *name, struct bootimage_file *f)
{
    for (unsigned i = 0; i < bootimage_count(); i++)
        if (bootimage_get(i, f) == 0 && strcmp(f->name, name) == 0)
            return 0;
    return -E_NOENT;
}
