/*
 * Intrusive balanced tree of non-overlapping virtual address ranges (an
 * AVL tree, lib/vatree.c), shared by the kernel (its mappings) and the
 * Linux personality (each process's mapped ranges). The caller embeds a struct vanode in
 * its own record, sets start and size, and finds the record again with
 * vanode_entry. Every operation is O(log n), iterative and allocation
 * free; the caller provides the locking.
 *
 * A range is [start, start + size) with size > 0; it may end exactly at
 * the top of the address space (start + size == 2^64), never wrap.
 */
#ifndef PETREL_VATREE_H
#define PETREL_VATREE_H

#include <stddef.h>
#include <stdint.h>

struct vanode {
    struct vanode *left, *right, *parent;
    uint64_t start;
    uint64_t size;
    int8_t height;          /* of the subtree rooted here; a leaf is 1 */
};

struct vatree {
    struct vanode *root;
    uint64_t count;
};

#define vanode_entry(p, type, member) ((type *)((char *)(p) - offsetof(type, member)))

void vatree_init(struct vatree *t);

/* What vatree_insert returns for an overlap (the kernel's -E_BUSY). */
#define VATREE_OVERLAP (-7)

/* Insert n (start and size set by the caller): 0, or VATREE_OVERLAP if its range
 * overlaps a node already in the tree, or is empty or wraps (the tree is
 * then unchanged).
 * Adjacent ranges do not overlap. */
int vatree_insert(struct vatree *t, struct vanode *n);

/* Remove n, which must be in t. */
void vatree_remove(struct vatree *t, struct vanode *n);

/* The node whose range contains va, or NULL. */
struct vanode *vatree_find(const struct vatree *t, uint64_t va);

/* The lowest-start node overlapping [va, va + size), or NULL (always NULL
 * for size 0; a range running past the top is cut at the top). */
struct vanode *vatree_first_overlap(const struct vatree *t, uint64_t va, uint64_t size);

/* In address order: the lowest node (NULL if empty), and the one after n
 * (NULL at the end). */
struct vanode *vatree_first(const struct vatree *t);
struct vanode *vatree_next(const struct vanode *n);

#endif
