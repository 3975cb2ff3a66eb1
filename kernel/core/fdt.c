/*
 * Flattened device tree (DTB) reader.
 *
 * The device tree comes from outside the kernel, so fdt_open() checks
 * every byte the lookups will touch before any of them runs: header
 * fields in range, blocks inside the blob, every token known, names
 * terminated, property lengths inside the structure block, property
 * name offsets inside the strings block, balanced nodes no deeper than
 * FDT_MAX_DEPTH, a single root and a final FDT_END. A blob that passes
 * can be walked without further bounds checks; one that fails is
 * rejected with fdt->error saying why.
 */
#include "fdt.h"
#include "kernel.h"

#define FDT_MAGIC       0xd00dfeed
#define FDT_BEGIN_NODE  1
#define FDT_END_NODE    2
#define FDT_PROP        3
#define FDT_NOP         4
#define FDT_END         9
#define FDT_HEADER_SIZE 40

enum { H_MAGIC, H_TOTALSIZE, H_OFF_STRUCT, H_OFF_STRINGS, H_OFF_RSVMAP,
       H_VERSION, H_LAST_COMP, H_BOOT_CPU, H_SIZE_STRINGS, H_SIZE_STRUCT };

static uint32_t hdr(const void *blob, int field)
{
    return be32((const uint8_t *)blob + 4 * field);
}

/* Record why the blob is bad and return the error. */
static int bad(struct fdt *fdt, const char *why)
{
    fdt->error = why;
    return -E_BADFORMAT;
}

/* Return the header's totalsize, or 0 if the magic is wrong. */
uint32_t fdt_header_size(const void *blob)
{
    if (hdr(blob, H_MAGIC) != FDT_MAGIC)
        return 0;
    return hdr(blob, H_TOTALSIZE);
}

/* Length of a NUL-terminated string within [s, s+max), or -1 if none. */
static int64_t bounded_strlen(const char *s, uint64_t max)
{
    for (uint64_t i = 0; i < max; i++)
        if (s[i] == '\0')
            return (int64_t)i;
    return -1;
}

/* Check the memory reservation block: 16-byte entries up to a 0,0 pair. */
static int check_rsvmap(struct fdt *fdt, uint32_t off)
{
    if (!IS_ALIGNED(off, 8) || off < FDT_HEADER_SIZE)
        return bad(fdt, "memory reservation block misaligned");
    for (;;) {
        if ((uint64_t)off + 16 > fdt->size)
            return bad(fdt, "memory reservation block unterminated");
        uint64_t addr = fdt_read_cells(fdt->blob + off, 2);
        uint64_t size = fdt_read_cells(fdt->blob + off + 8, 2);
        if (addr == 0 && size == 0)
            return 0;
        off += 16;
    }
}

/* Walk the structure block once, checking every token. */
static int check_structure(struct fdt *fdt)
{
    uint32_t off = 0, end = fdt->struct_size;
    int depth = 0;
    bool seen_root = false;

    for (;;) {
        if (off + 4 > end)
            return bad(fdt, "structure block ends without FDT_END");
        uint32_t tok = be32(fdt->structs + off);
        off += 4;
        switch (tok) {
        case FDT_BEGIN_NODE: {
            if (depth == 0 && seen_root)
                return bad(fdt, "more than one root node");
            int64_t n = bounded_strlen((const char *)fdt->structs + off, end - off);
            if (n < 0)
                return bad(fdt, "node name unterminated");
            off += ALIGN_UP((uint32_t)n + 1, 4);
            if (off > end)
                return bad(fdt, "node name runs past the structure block");
            if (++depth > FDT_MAX_DEPTH)
                return bad(fdt, "nodes nested too deep");
            seen_root = true;
            break;
        }
        case FDT_END_NODE:
            if (depth == 0)
                return bad(fdt, "unbalanced FDT_END_NODE");
            depth--;
            break;
        case FDT_PROP: {
            if (depth == 0)
                return bad(fdt, "property outside any node");
            if (off + 8 > end)
                return bad(fdt, "property header truncated");
            uint32_t len = be32(fdt->structs + off);
            uint32_t nameoff = be32(fdt->structs + off + 4);
            off += 8;
            if (len > end - off)
                return bad(fdt, "property value runs past the structure block");
            if (nameoff >= fdt->strings_size ||
                bounded_strlen(fdt->strings + nameoff, fdt->strings_size - nameoff) < 0)
                return bad(fdt, "property name outside the strings block");
            off += ALIGN_UP(len, 4);
            if (off > end)
                return bad(fdt, "property padding runs past the structure block");
            break;
        }
        case FDT_NOP:
            break;
        case FDT_END:
            if (depth != 0)
                return bad(fdt, "FDT_END inside a node");
            if (!seen_root)
                return bad(fdt, "no root node");
            return 0;
        default:
            return bad(fdt, "unknown structure token");
        }
    }
}

/* Validate a device tree blob of at most len bytes and prepare lookups. */
int fdt_open(struct fdt *fdt, const void *blob, size_t len)
{
    memset(fdt, 0, sizeof(*fdt));
    fdt->blob = blob;
    if (len < FDT_HEADER_SIZE)
        return bad(fdt, "shorter than a header");
    if (hdr(blob, H_MAGIC) != FDT_MAGIC)
        return bad(fdt, "bad magic");
    if (hdr(blob, H_VERSION) < 17 || hdr(blob, H_LAST_COMP) > 17)
        return bad(fdt, "unsupported version (need 17)");
    uint32_t total = hdr(blob, H_TOTALSIZE);
    if (total < FDT_HEADER_SIZE || total > len)
        return bad(fdt, "totalsize larger than the blob");
    fdt->size = total;

    uint64_t so = hdr(blob, H_OFF_STRUCT), ss = hdr(blob, H_SIZE_STRUCT);
    uint64_t to = hdr(blob, H_OFF_STRINGS), ts = hdr(blob, H_SIZE_STRINGS);
    if (!IS_ALIGNED(so, 4) || !IS_ALIGNED(ss, 4))
        return bad(fdt, "structure block misaligned");
    if (so < FDT_HEADER_SIZE || so + ss > total)
        return bad(fdt, "structure block outside the blob");
    if (to < FDT_HEADER_SIZE || to + ts > total)
        return bad(fdt, "strings block outside the blob");
    fdt->structs = fdt->blob + so;
    fdt->struct_size = (uint32_t)ss;
    fdt->strings = (const char *)fdt->blob + to;
    fdt->strings_size = (uint32_t)ts;

    int err = check_rsvmap(fdt, hdr(blob, H_OFF_RSVMAP));
    if (err)
        return err;
    return check_structure(fdt);
}

/* Offset just past the token at off (the blob is already validated). */
static uint32_t skip_token(const struct fdt *fdt, uint32_t off)
{
    uint32_t tok = be32(fdt->structs + off);
    if (tok == FDT_BEGIN_NODE)
        return off + 4 + ALIGN_UP((uint32_t)strlen((const char *)fdt->structs + off + 4) + 1, 4);
    if (tok == FDT_PROP)
        return off + 12 + ALIGN_UP(be32(fdt->structs + off + 4), 4);
    return off + 4;
}

/* The root node: the first FDT_BEGIN_NODE. */
int fdt_root(const struct fdt *fdt)
{
    uint32_t off = 0;
    while (be32(fdt->structs + off) == FDT_NOP)
        off += 4;
    return (int)off;
}

/*
 * The next node after `node` in document order. *depth (if given) is
 * changed by the levels moved: +1 for a child, 0 for a sibling, -1 for
 * a sibling of the parent, and so on. Returns -1 at the end.
 */
int fdt_next_node(const struct fdt *fdt, int node, int *depth)
{
    int level = 1;
    uint32_t off = skip_token(fdt, (uint32_t)node);
    for (;;) {
        uint32_t tok = be32(fdt->structs + off);
        if (tok == FDT_BEGIN_NODE) {
            if (depth)
                *depth += level;
            return (int)off;
        }
        if (tok == FDT_END)
            return -1;
        if (tok == FDT_END_NODE)
            level--;
        off = skip_token(fdt, off);
    }
}

/* The first child of node, or -1. */
int fdt_first_child(const struct fdt *fdt, int node)
{
    int depth = 0;
    int n = fdt_next_node(fdt, node, &depth);
    return (n >= 0 && depth == 1) ? n : -1;
}

/* The next sibling of node, or -1. */
int fdt_next_sibling(const struct fdt *fdt, int node)
{
    int depth = 0;
    for (int n = fdt_next_node(fdt, node, &depth); n >= 0; n = fdt_next_node(fdt, n, &depth)) {
        if (depth == 0)
            return n;
        if (depth < 0)
            return -1;
    }
    return -1;
}

/* The parent of node, or -1 for the root. */
int fdt_parent(const struct fdt *fdt, int node)
{
    int stack[FDT_MAX_DEPTH + 1];
    int depth = 0;
    int n = fdt_root(fdt);
    stack[0] = n;
    while (n >= 0 && n != node) {
        n = fdt_next_node(fdt, n, &depth);
        if (n < 0 || depth < 0 || depth > FDT_MAX_DEPTH)
            return -1;
        stack[depth] = n;
    }
    return (n == node && depth > 0) ? stack[depth - 1] : -1;
}

/* A node's name, unit address included ("pl011@9000000"). */
const char *fdt_node_name(const struct fdt *fdt, int node)
{
    return (const char *)fdt->structs + node + 4;
}

/* Does a node name match one path component ("cpu" matches "cpu@0")? */
static bool name_matches(const char *name, const char *comp, size_t len)
{
    bool comp_has_unit = false;
    for (size_t i = 0; i < len; i++)
        comp_has_unit |= comp[i] == '@';
    if (strncmp(name, comp, len) != 0)
        return false;
    return name[len] == '\0' || (name[len] == '@' && !comp_has_unit);
}

/* Find a node by absolute path, or -1. */
int fdt_path(const struct fdt *fdt, const char *path)
{
    int node = fdt_root(fdt);
    while (*path == '/')
        path++;
    while (*path && node >= 0) {
        size_t len = 0;
        while (path[len] && path[len] != '/')
            len++;
        int child = fdt_first_child(fdt, node);
        while (child >= 0 && !name_matches(fdt_node_name(fdt, child), path, len))
            child = fdt_next_sibling(fdt, child);
        node = child;
        path += len;
        while (*path == '/')
            path++;
    }
    return node;
}

/* A property's value and length, or NULL if the node lacks it. */
const void *fdt_prop(const struct fdt *fdt, int node, const char *name, uint32_t *len)
{
    uint32_t off = skip_token(fdt, (uint32_t)node);
    for (;;) {
        uint32_t tok = be32(fdt->structs + off);
        if (tok == FDT_PROP) {
            uint32_t plen = be32(fdt->structs + off + 4);
            const char *pname = fdt->strings + be32(fdt->structs + off + 8);
            if (strcmp(pname, name) == 0) {
                if (len)
                    *len = plen;
                return fdt->structs + off + 12;
            }
        } else if (tok != FDT_NOP) {
            return NULL;
        }
        off = skip_token(fdt, off);
    }
}

/* Does the node's "compatible" string list contain compat? */
bool fdt_compatible(const struct fdt *fdt, int node, const char *compat)
{
    uint32_t len;
    const char *p = fdt_prop(fdt, node, "compatible", &len);
    if (!p)
        return false;
    for (uint32_t i = 0; i < len; ) {
        size_t n = strnlen(p + i, len - i);
        if (n == strlen(compat) && strncmp(p + i, compat, n) == 0)
            return true;
        i += (uint32_t)n + 1;
    }
    return false;
}

/* The first node after `after` (-1: from the start) compatible with compat. */
int fdt_find_compatible(const struct fdt *fdt, int after, const char *compat)
{
    int node = after < 0 ? fdt_root(fdt) : fdt_next_node(fdt, after, NULL);
    for (; node >= 0; node = fdt_next_node(fdt, node, NULL))
        if (fdt_compatible(fdt, node, compat))
            return node;
    return -1;
}

/* Read a one-cell property. */
bool fdt_prop_u32(const struct fdt *fdt, int node, const char *name, uint32_t *out)
{
    uint32_t len;
    const void *p = fdt_prop(fdt, node, name, &len);
    if (!p || len != 4)
        return false;
    *out = be32(p);
    return true;
}

/* A big-endian number of 1 or 2 cells. */
uint64_t fdt_read_cells(const void *p, unsigned cells)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < cells; i++)
        v = (v << 32) | be32((const uint8_t *)p + 4 * i);
    return v;
}

/* The index-th (address, size) pair of the node's "reg". */
bool fdt_reg(const struct fdt *fdt, int node, unsigned index, uint64_t *addr, uint64_t *size)
{
    uint32_t ac = 2, sc = 1, len;
    int parent = fdt_parent(fdt, node);
    if (parent >= 0) {
        fdt_prop_u32(fdt, parent, "#address-cells", &ac);
        fdt_prop_u32(fdt, parent, "#size-cells", &sc);
    }
    if (ac < 1 || ac > 2 || sc > 2)
        return false;
    const uint8_t *p = fdt_prop(fdt, node, "reg", &len);
    uint32_t stride = 4 * (ac + sc);
    if (!p || (uint64_t)(index + 1) * stride > len)
        return false;
    p += index * stride;
    *addr = fdt_read_cells(p, ac);
    *size = sc ? fdt_read_cells(p + 4 * ac, sc) : 0;
    return true;
}

/* Number of nodes in the tree. */
int fdt_count_nodes(const struct fdt *fdt)
{
    int count = 0;
    for (int n = fdt_root(fdt); n >= 0; n = fdt_next_node(fdt, n, NULL))
        count++;
    return count;
}
