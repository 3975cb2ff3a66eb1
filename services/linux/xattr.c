/*
 * Extended attributes, as Linux 6.1's tmpfs keeps them (the root,
 * /dev and /dev/shm are tmpfs there):
 *
 * - "security.*" and "trusted.*" attributes are kept with the node, any
 *   value of up to 64 KiB (XATTR_SIZE_MAX, E2BIG past it), listed newest
 *   first; a missing one is ENODATA; a name that is only the prefix is
 *   EINVAL; an empty or over-long name is ERANGE.
 * - "user.*" is not supported by 6.1's tmpfs (EOPNOTSUPP) on a regular
 *   file or directory, and refused on anything else before that, as the
 *   VFS does (EPERM to set or remove, ENODATA to get).
 * - "system.posix_acl_access" and "system.posix_acl_default" read as no
 *   ACL (ENODATA; EOPNOTSUPP on a symbolic link) and removing them does
 *   nothing; a value not in an ACL's form is EINVAL, and setting an ACL
 *   is not supported here (EOPNOTSUPP).
 * - Any other name, and every name on /proc, devpts, a pipe, a socket or
 *   an event file, is EOPNOTSUPP; their lists are empty.
 *
 * Every process is root here, so "trusted.*" is always allowed. The
 * attributes' bytes come from one budget (LX_XATTR_BYTES, ENOSPC past
 * it), apart from the files' contents.
 */
#include "lx.h"

#define XATTR_CREATE    1
#define XATTR_REPLACE   2
#define XATTR_NAME_MAX  255
#define XATTR_SIZE_MAX  65536
#define XATTR_LIST_MAX  65536
#define LX_ENODATA      61

struct lx_xattr {
    struct lx_xattr *next;
    uint32_t name_len, size;    /* the name (with its NUL) then the value follow */
    char data[];
};

static uint64_t xattr_bytes;

static uint64_t bytes_of(const struct lx_xattr *x)
{
    return sizeof(*x) + x->name_len + x->size;
}

void lx_xattrs_free(struct lx_node *n)
{
    while (n->xattrs) {
        struct lx_xattr *x = n->xattrs;
        n->xattrs = x->next;
        xattr_bytes -= bytes_of(x);
        svc_free(x, bytes_of(x));
    }
}

static int prefixed(const char *name, const char *prefix)
{
    return strncmp(name, prefix, strlen(prefix)) == 0;
}

static int acl_name(const char *name)
{
    return !strcmp(name, "system.posix_acl_access") || !strcmp(name, "system.posix_acl_default");
}

/* Read the name at uname: its length, or -ERANGE (empty, or longer than
 * XATTR_NAME_MAX) or -EFAULT. */
static int64_t name_in(struct lx_ctx *c, uint64_t uname, char *name)
{
    int64_t len = lx_copy_str(c, name, uname, XATTR_NAME_MAX + 1);
    if (len == -LX_ENAMETOOLONG || len == 0)
        return -LX_ERANGE;
    return len;
}

#define NO_NODE         INT32_MIN       /* a pipe, socket or event file: an inode without attributes */

/* The node an f* call works on (NO_NODE for a file without one), or -EBADF. */
static int32_t file_node(struct lx_ctx *c, uint64_t fd)
{
    struct lx_file *f = lx_fd_use(c->p, (uint32_t)fd);
    if (!f)
        return -LX_EBADF;
    return f->kind == LX_FILE_NODE ? f->node : NO_NODE;
}

/* Does the node keep attributes (tmpfs), or none at all (EOPNOTSUPP)? */
static int keeps(int32_t node)
{
    return node != NO_NODE && lx_node_fs(node) != LX_FS_PROC && lx_node_fs(node) != LX_FS_PTS &&
           lx_node_fs(node) != LX_FS_DATA;     /* (the disk's ext2 keeps none here yet) */
}

/* What the VFS and tmpfs say before a name is looked for: 0 (a kept
 * attribute), 1 (a POSIX ACL name), or a negated errno. */
static int64_t check(int32_t node, const char *name, int write)
{
    uint32_t kind = node == NO_NODE ? LX_S_IFIFO : lx_node(node)->mode & LX_S_IFMT;
    if (prefixed(name, "user.") && kind != LX_S_IFREG && kind != LX_S_IFDIR)
        return write ? -LX_EPERM : -LX_ENODATA;
    if (!keeps(node))
        return -LX_EOPNOTSUPP;
    if (acl_name(name))
        return kind == LX_S_IFLNK ? -LX_EOPNOTSUPP : 1;
    if (prefixed(name, "security.") || prefixed(name, "trusted."))
        return name[prefixed(name, "security.") ? 9 : 8] ? 0 : -LX_EINVAL;
    return -LX_EOPNOTSUPP;
}

static struct lx_xattr **find(struct lx_node *n, const char *name)
{
    for (struct lx_xattr **at = &n->xattrs; *at; at = &(*at)->next)
        if (!strcmp((*at)->data, name))
            return at;
    return NULL;
}

static int64_t do_get(struct lx_ctx *c, int32_t node, uint64_t uname, uint64_t uvalue, uint64_t size)
{
    char name[XATTR_NAME_MAX + 1];
    int64_t len = name_in(c, uname, name);
    if (len < 0)
        return len;
    if (size > XATTR_SIZE_MAX)
        size = XATTR_SIZE_MAX;
    int64_t err = check(node, name, 0);
    if (err)
        return err > 0 ? -LX_ENODATA : err;     /* (no ACL is set) */
    struct lx_xattr **at = find(lx_node(node), name);
    if (!at)
        return -LX_ENODATA;
    struct lx_xattr *x = *at;
    if (size == 0)
        return x->size;
    if (size < x->size)
        return size >= XATTR_SIZE_MAX ? -LX_E2BIG : -LX_ERANGE;
    if (lx_copy_out(c, uvalue, x->data + x->name_len, x->size))
        return -LX_EFAULT;
    return x->size;
}

static int64_t do_set(struct lx_ctx *c, int32_t node, uint64_t uname, uint64_t uvalue, uint64_t size, uint64_t flags)
{
    if (flags & ~(uint64_t)(XATTR_CREATE | XATTR_REPLACE))
        return -LX_EINVAL;
    char name[XATTR_NAME_MAX + 1];
    int64_t len = name_in(c, uname, name);
    if (len < 0)
        return len;
    if (size > XATTR_SIZE_MAX)
        return -LX_E2BIG;
    /* The value is read first, as Linux copies it before the VFS looks
     * at the name or the file. */
    uint64_t need = sizeof(struct lx_xattr) + (uint64_t)len + 1 + size;
    if (!lx_range_ok(uvalue, size))
        return -LX_EFAULT;
    struct lx_xattr *x = svc_alloc(need);
    if (!x)
        return -LX_ENOMEM;
    x->name_len = (uint32_t)len + 1;
    x->size = (uint32_t)size;
    memcpy(x->data, name, (uint64_t)len + 1);
    const uint8_t *value = (const uint8_t *)x->data + x->name_len;
    int64_t err = size && lx_copy_in(c, x->data + x->name_len, uvalue, size) ? -LX_EFAULT : 0;
    if (!err && acl_name(name) && keeps(node) && size &&        /* tmpfs reads an ACL's form first: */
        (size < 4 || value[0] != 2 || value[1] || value[2] || value[3] || (size - 4) % 8))  /* version 2, 8-byte entries */
        err = -LX_EINVAL;
    if (!err && (err = check(node, name, 1)) > 0)
        err = -LX_EOPNOTSUPP;                   /* (setting an ACL) */
    struct lx_node *n = lx_node(node);
    struct lx_xattr **at = err ? NULL : find(n, name);
    if (!err && at && (flags & XATTR_CREATE))
        err = -LX_EEXIST;
    if (!err && !at && (flags & XATTR_REPLACE))
        err = -LX_ENODATA;
    if (!err && xattr_bytes - (at ? bytes_of(*at) : 0) + need > LX_XATTR_BYTES)
        err = -LX_ENOSPC;
    if (err) {
        svc_free(x, need);
        return err;
    }
    xattr_bytes += need;
    if (at) {                                   /* replaced in its place */
        struct lx_xattr *old = *at;
        x->next = old->next;
        *at = x;
        xattr_bytes -= bytes_of(old);
        svc_free(old, bytes_of(old));
    } else {                                    /* the newest first */
        x->next = n->xattrs;
        n->xattrs = x;
    }
    n->ctime = lx_now();
    return 0;
}

static int64_t do_list(struct lx_ctx *c, int32_t node, uint64_t ulist, uint64_t size)
{
    if (size > XATTR_LIST_MAX)
        size = XATTR_LIST_MAX;
    if (!keeps(node))
        return 0;
    uint64_t total = 0;
    for (struct lx_xattr *x = lx_node(node)->xattrs; x; x = x->next) {
        if (size && total + x->name_len > size)
            return size >= XATTR_LIST_MAX ? -LX_E2BIG : -LX_ERANGE;
        if (size && lx_copy_out(c, ulist + total, x->data, x->name_len))
            return -LX_EFAULT;
        total += x->name_len;
    }
    return (int64_t)total;
}

static int64_t do_remove(struct lx_ctx *c, int32_t node, uint64_t uname)
{
    char name[XATTR_NAME_MAX + 1];
    int64_t len = name_in(c, uname, name);
    if (len < 0)
        return len;
    int64_t err = check(node, name, 1);
    if (err)
        return err > 0 ? 0 : err;               /* (no ACL to remove) */
    struct lx_node *n = lx_node(node);
    struct lx_xattr **at = find(n, name);
    if (!at)
        return -LX_ENODATA;
    struct lx_xattr *x = *at;
    *at = x->next;
    xattr_bytes -= bytes_of(x);
    svc_free(x, bytes_of(x));
    n->ctime = lx_now();
    return 0;
}

int64_t lx_sys_xattr(struct lx_ctx *c, uint64_t nr, const uint64_t *a)
{
    int32_t node;                               /* the file first (lookup, descriptor), as Linux */
    switch (nr) {
    case NR_fsetxattr: case NR_fgetxattr: case NR_flistxattr: case NR_fremovexattr:
        node = file_node(c, a[0]);
        break;
    default:                                    /* the l* forms do not follow a final link */
        node = lx_node_at_path(c, a[0], nr != NR_lsetxattr && nr != NR_lgetxattr && nr != NR_llistxattr &&
                                            nr != NR_lremovexattr);
        break;
    }
    if (node < 0 && node != NO_NODE)
        return node;
    switch (nr) {
    case NR_setxattr: case NR_lsetxattr: case NR_fsetxattr:
        return do_set(c, node, a[1], a[2], a[3], a[4]);
    case NR_getxattr: case NR_lgetxattr: case NR_fgetxattr:
        return do_get(c, node, a[1], a[2], a[3]);
    case NR_listxattr: case NR_llistxattr: case NR_flistxattr:
        return do_list(c, node, a[1], a[2]);
    default:
        return do_remove(c, node, a[1]);
    }
}
