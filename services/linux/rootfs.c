/*
 * The root file system: a cpio archive ("newc", the Linux initramfs
 * format) in the boot image, read in place. At start the archive is
 * walked once into a table of nodes (names and contents stay in the
 * archive; the OKL4 paper's in-memory file system, section IV.A.1).
 * Directories a path implies are made even if the archive lacks their
 * entries, and /dev always holds null, zero and console.
 *
 * It is read-only in this step: a writable /tmp comes later.
 */
#include "lx.h"

static struct lx_node *nodes;
static int32_t nnodes, maxnodes;
static const uint8_t *archive;
static uint64_t archive_size;
static svc_handle archive_mem;

struct lx_node *lx_node(int32_t n)
{
    return n >= 0 && n < nnodes ? &nodes[n] : NULL;
}

const uint8_t *lx_fs_data(void) { return archive; }
svc_handle lx_fs_object(void) { return archive_mem; }

/* Eight hex digits; -1 if they are not. */
static int64_t hex8(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) {
        uint8_t c = p[i];
        unsigned d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
                     c >= 'A' && c <= 'F' ? c - 'A' + 10 : 16;
        if (d == 16)
            return -1;
        v = v << 4 | d;
    }
    return (int64_t)v;
}

/* The child of directory `dir` called name[0..len), or -1. */
static int32_t child(int32_t dir, const char *name, uint32_t len)
{
    for (int32_t c = nodes[dir].first_child; c >= 0; c = nodes[c].next_sibling)
        if (nodes[c].name_len == len && !memcmp(nodes[c].name, name, len))
            return c;
    return -1;
}

/* A new node under `dir` (a directory until its entry says otherwise). */
static int32_t add(int32_t dir, const char *name, uint32_t len)
{
    if (nnodes == maxnodes)
        return -LX_ENOMEM;
    int32_t n = nnodes++;
    nodes[n] = (struct lx_node){ name, len, dir, LX_S_IFDIR | 0755, LX_DEV_NONE, 0, 0, 0, -1, -1 };
    /* Appended, so a listing keeps the archive's order. */
    int32_t *link = &nodes[dir].first_child;
    while (*link >= 0)
        link = &nodes[*link].next_sibling;
    *link = n;
    return n;
}

/* The node for archive path name[0..len) (no leading "/"), made with its
 * parents if missing; or a negated errno. */
static int32_t place(const char *name, uint32_t len)
{
    int32_t dir = LX_ROOT;
    uint32_t i = 0;
    while (i < len) {
        while (i < len && name[i] == '/')
            i++;
        uint32_t j = i;
        while (j < len && name[j] != '/')
            j++;
        if (j == i)
            break;
        if (j - i > LX_NAME_MAX || (j - i == 1 && name[i] == '.') ||
            (j - i == 2 && name[i] == '.' && name[i + 1] == '.'))
            return j - i == 1 && j == len && dir == LX_ROOT ? LX_ROOT : -LX_EINVAL;     /* "." itself */
        if ((nodes[dir].mode & LX_S_IFMT) != LX_S_IFDIR)
            return -LX_ENOTDIR;
        int32_t c = child(dir, name + i, j - i);
        if (c < 0)
            c = add(dir, name + i, j - i);
        if (c < 0)
            return c;
        dir = c;
        i = j;
    }
    return dir;
}

static void device(const char *name, uint32_t dev)
{
    int32_t d = place("dev", 3);
    if (d < 0)
        return;
    int32_t n = place(name, (uint32_t)strlen(name));
    if (n >= 0) {
        nodes[n].mode = LX_S_IFCHR | (dev == LX_DEV_CONSOLE ? 0600 : 0666);
        nodes[n].dev = dev;
        nodes[n].size = 0;
    }
}

/* An upper bound of the nodes the archive makes: one per entry, one per
 * "/" in a name (a directory it may imply), the root, /dev and its three
 * devices; or -EINVAL for a malformed archive. */
static int32_t count_nodes(void)
{
    uint64_t n = 5, at = 0;
    while (at + 110 <= archive_size && n < (1u << 30)) {
        const uint8_t *h = archive + at;
        int64_t size = hex8(h + 6 + 8 * 6), namesize = hex8(h + 6 + 8 * 11);
        uint64_t data_at = (at + 110 + (uint64_t)namesize + 3) & ~3ull;
        if (memcmp(h, "070701", 6) != 0 || size < 0 || namesize <= 0 || data_at > archive_size ||
            (uint64_t)size > archive_size - data_at)
            return -LX_EINVAL;
        if (namesize >= 11 && !memcmp(archive + at + 110, "TRAILER!!!", 11))
            break;
        n++;
        for (int64_t i = 0; i < namesize; i++)
            n += archive[at + 110 + (uint64_t)i] == '/';
        at = (data_at + (uint64_t)size + 3) & ~3ull;
    }
    return (int32_t)n;
}

/* Walk the archive into the node table. */
int lx_fs_init(const char *name)
{
    struct petrel_bootfile bf;
    const void *data = NULL;
    uint32_t index = 0;
    while (svc_bootfile(index, &bf, &data) == 0 && strcmp(bf.name, name) != 0)
        index++;
    if (!data || strcmp(bf.name, name) != 0)
        return -LX_ENOENT;
    archive = data;
    archive_size = bf.size;
    archive_mem = svc_mem_bootfile(index);
    maxnodes = count_nodes();
    if (maxnodes < 0)
        return maxnodes;
    nodes = svc_alloc((uint64_t)maxnodes * sizeof(*nodes));
    if (!nodes)
        return -LX_ENOMEM;
    nodes[0] = (struct lx_node){ "", 0, 0, LX_S_IFDIR | 0755, LX_DEV_NONE, 0, 0, 0, -1, -1 };
    nnodes = 1;
    uint64_t at = 0;
    while (at + 110 <= archive_size) {
        const uint8_t *h = archive + at;
        int64_t f[13];
        if (memcmp(h, "070701", 6) != 0)
            return -LX_EINVAL;
        for (int i = 0; i < 13; i++)
            if ((f[i] = hex8(h + 6 + 8 * i)) < 0)
                return -LX_EINVAL;
        uint64_t mode = (uint64_t)f[1], mtime = (uint64_t)f[5], size = (uint64_t)f[6], namesize = (uint64_t)f[11];
        uint64_t name_at = at + 110, data_at = (name_at + namesize + 3) & ~3ull;
        if (namesize == 0 || name_at + namesize > archive_size || data_at > archive_size ||
            size > archive_size - data_at)
            return -LX_EINVAL;
        const char *nm = (const char *)archive + name_at;
        uint32_t len = (uint32_t)strnlen(nm, namesize);
        if (len == 10 && !memcmp(nm, "TRAILER!!!", 10))
            break;
        int32_t n = place(nm, len);
        if (n < 0)
            return n;
        if (n != LX_ROOT) {
            nodes[n].mode = (uint32_t)mode;
            nodes[n].size = (mode & LX_S_IFMT) == LX_S_IFDIR ? 0 : size;
            nodes[n].data_off = data_at;
            nodes[n].mtime = mtime;
        }
        at = (data_at + size + 3) & ~3ull;
    }
    device("dev/null", LX_DEV_NULL);
    device("dev/zero", LX_DEV_ZERO);
    device("dev/console", LX_DEV_CONSOLE);
    device("dev/tty", LX_DEV_TTY);
    return 0;
}

static int32_t resolve(int32_t dir, const char *path, uint64_t plen, int follow, int depth);

/* Follow symbolic link `n` found in directory `dir` (its target is read in place). */
static int32_t follow_link(int32_t dir, int32_t n, int depth)
{
    if (depth >= 40)
        return -LX_ELOOP;
    if (nodes[n].size == 0 || nodes[n].size >= LX_PATH_MAX)
        return -LX_ENOENT;
    return resolve(dir, (const char *)archive + nodes[n].data_off, nodes[n].size, 1, depth + 1);
}

/* Resolve path[0..plen) from `dir` (a directory node). */
static int32_t resolve(int32_t dir, const char *path, uint64_t plen, int follow, int depth)
{
    const char *p = path, *end = path + plen;
    int32_t cur = plen && path[0] == '/' ? LX_ROOT : dir;
    while (p < end) {
        while (p < end && *p == '/')
            p++;
        const char *e = p;
        while (e < end && *e != '/')
            e++;
        if (e == p)
            break;
        if (e - p > LX_NAME_MAX)
            return -LX_ENAMETOOLONG;
        if ((nodes[cur].mode & LX_S_IFMT) != LX_S_IFDIR)
            return -LX_ENOTDIR;
        int32_t next;
        if (e - p == 1 && p[0] == '.')
            next = cur;
        else if (e - p == 2 && p[0] == '.' && p[1] == '.')
            next = nodes[cur].parent;
        else if ((next = child(cur, p, (uint32_t)(e - p))) < 0)
            return -LX_ENOENT;
        /* A link is followed unless it is the last name, unfollowed, without a "/" after it. */
        if ((nodes[next].mode & LX_S_IFMT) == LX_S_IFLNK && (follow || e < end)) {
            next = follow_link(cur, next, depth);
            if (next < 0)
                return next;
        }
        cur = next;
        p = e;
    }
    /* "name/" must be a directory. */
    if (plen && path[plen - 1] == '/' && (nodes[cur].mode & LX_S_IFMT) != LX_S_IFDIR)
        return -LX_ENOTDIR;
    return cur;
}

int32_t lx_lookup(int32_t dir, const char *path, int follow)
{
    if (!nodes || !path[0])
        return -LX_ENOENT;
    uint64_t len = strnlen(path, LX_PATH_MAX);
    if (len >= LX_PATH_MAX)
        return -LX_ENAMETOOLONG;
    return resolve(dir, path, len, follow, 0);
}
