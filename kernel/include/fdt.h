/*
 * Flattened device tree reader. fdt_open validates the whole blob once
 * (header, every token, every length, every name offset, nesting depth),
 * so the lookups after it can walk the structure block without bounds
 * worries. Node handles are offsets into the structure block.
 */
#ifndef PETREL_FDT_H
#define PETREL_FDT_H

#include "types.h"

#define FDT_MAX_DEPTH   32

struct fdt {
    const uint8_t *blob;
    uint32_t size;          /* totalsize from the header */
    const uint8_t *structs;
    uint32_t struct_size;
    const char *strings;
    uint32_t strings_size;
    const char *error;      /* why fdt_open failed */
};

/* Validate blob (at most len readable bytes). 0 or -E_BADFORMAT. */
int fdt_open(struct fdt *fdt, const void *blob, size_t len);
/* The size the header claims, or 0 if the header itself is unusable. */
uint32_t fdt_header_size(const void *blob);

int fdt_root(const struct fdt *fdt);
int fdt_next_node(const struct fdt *fdt, int node, int *depth);
int fdt_first_child(const struct fdt *fdt, int node);
int fdt_next_sibling(const struct fdt *fdt, int node);
int fdt_parent(const struct fdt *fdt, int node);
const char *fdt_node_name(const struct fdt *fdt, int node);
int fdt_path(const struct fdt *fdt, const char *path);   /* "/chosen", "/cpus" */
const void *fdt_prop(const struct fdt *fdt, int node, const char *name, uint32_t *len);
bool fdt_compatible(const struct fdt *fdt, int node, const char *compat);
int fdt_find_compatible(const struct fdt *fdt, int after, const char *compat);
bool fdt_prop_u32(const struct fdt *fdt, int node, const char *name, uint32_t *out);
/* The index-th (address, size) pair of a node's "reg", in its parent's cells. */
bool fdt_reg(const struct fdt *fdt, int node, unsigned index, uint64_t *addr, uint64_t *size);
uint64_t fdt_read_cells(const void *p, unsigned cells);
int fdt_count_nodes(const struct fdt *fdt);

static inline uint32_t be32(const void *p)
{
    const uint8_t *b = p;
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

#endif
