/*
 * The address-range tree: an intrusive AVL tree of disjoint ranges,
 * ordered by start address.
 *
 * Why AVL rather than red-black: the tree is searched far more often than
 * it changes (every page fault and every map's overlap check searches;
 * only map and unmap change it), and an AVL tree is the shallower of the
 * two: height below 1.44 log2(n + 2), against 2 log2(n + 1) for
 * red-black, so 100,000 mappings are at most 23 levels deep instead of
 * 33. Its extra rotations on removal cost nothing that matters here. Its
 * invariant is also the easier one to check: a stored height equal to
 * one more than the taller child's, and child heights differing by at
 * most one.
 *
 * Invariants, for every node n:
 *   - every range in n's left subtree ends at or before n->start, and
 *     every range in its right subtree starts at or after n's end (so an
 *     in-order walk gives the ranges in address order, disjoint);
 *   - n->height = 1 + max(height(left), height(right)), an empty subtree
 *     having height 0, and the two differ by at most one;
 *   - n->left->parent == n and n->right->parent == n; the root's parent
 *     is NULL.
 *
 * Ranges are compared by their last byte (start + size - 1), so one may
 * end at the top of the address space without overflow. Because the
 * ranges are disjoint and sorted, the last bytes are sorted too, which
 * lets a descent from the root find a containing or overlapping node.
 *
 * Nothing recurses: searches descend in a loop, rebalancing climbs the
 * parent pointers, and iteration follows them. Nodes belong to the
 * caller; the tree never allocates or frees.
 */
#include "vatree.h"

static inline uint64_t last_byte(const struct vanode *n) { return n->start + (n->size - 1); }
static inline int height(const struct vanode *n) { return n ? n->height : 0; }


/* Make `with` (possibly NULL) take old's place under parent (NULL: the root). */
static void replace_child(struct vatree *t, struct vanode *parent, struct vanode *old, struct vanode *with)
{
    if (!parent)
        t->root = with;
    else if (parent->left == old)
        parent->left = with;
    else
        parent->right = with;
}

/* Weak AVL (WAVL, Haeupler, Sen and Tarjan) rank rules; `height` holds
 * rank + 1 (a missing node 0, a leaf 1). Every child's height is 1 or 2
 * below its parent's, a leaf's is 1. Insertions alone keep an AVL tree; a
 * removal never climbs further than the node it demotes unless that
 * node's parent is then 3 above it, so inserting and removing the same
 * leaf over and over costs O(1), not the path to the root. */

/* Rotate x's right child up into x's place (no heights changed). */
static void rot_left(struct vatree *t, struct vanode *x)
{
    struct vanode *y = x->right;
    x->right = y->left;
    if (y->left)
        y->left->parent = x;
    y->parent = x->parent;
    replace_child(t, x->parent, x, y);
    y->left = x;
    x->parent = y;
}

static void rot_right(struct vatree *t, struct vanode *x)
{
    struct vanode *y = x->left;
    x->left = y->right;
    if (y->right)
        y->right->parent = x;
    y->parent = x->parent;
    replace_child(t, x->parent, x, y);
    y->right = x;
    x->parent = y;
}

/* After x (a new leaf, or a node just promoted) may have reached its
 * parent's height. */
static void insert_fix(struct vatree *t, struct vanode *x)
{
    struct vanode *p;
    while ((p = x->parent) != NULL && p->height == x->height) {
        struct vanode *s = p->left == x ? p->right : p->left;
        if (p->height - height(s) == 1) {       /* 0,1: promote and go on up */
            p->height++;
            x = p;
            continue;
        }
        if (p->left == x) {                     /* 0,2: one or two rotations end it */
            struct vanode *y = x->right;
            if (x->height - height(y) == 2) {
                rot_right(t, p);
                p->height--;
            } else {
                rot_left(t, x);
                rot_right(t, p);
                y->height++;
                x->height--;
                p->height--;
            }
        } else {
            struct vanode *y = x->left;
            if (x->height - height(y) == 2) {
                rot_left(t, p);
                p->height--;
            } else {
                rot_right(t, x);
                rot_left(t, p);
                y->height++;
                x->height--;
                p->height--;
            }
        }
        return;
    }
}

/* After a node under p went (p may now be a 2,2 leaf or 3 above a child). */
static void remove_fix(struct vatree *t, struct vanode *p)
{
    while (p) {
        int hp = p->height, hl = height(p->left), hr = height(p->right);
        if (!p->left && !p->right) {
            if (hp == 1)
                return;
            p->height = 1;                      /* a 2,2 leaf: demote */
            p = p->parent;
            continue;
        }
        if (hp - hl <= 2 && hp - hr <= 2)
            return;
        int left3 = hp - hl == 3;
        struct vanode *s = left3 ? p->right : p->left;
        if (hp - s->height == 2) {              /* 3,2: demote p */
            p->height--;
            p = p->parent;
            continue;
        }
        if (s->height - height(s->left) == 2 && s->height - height(s->right) == 2) {
            p->height--;                        /* 3,1 with s 2,2: demote both */
            s->height--;
            p = p->parent;
            continue;
        }
        struct vanode *outer = left3 ? s->right : s->left, *inner = left3 ? s->left : s->right;
        if (s->height - height(outer) == 1) {   /* one rotation */
            if (left3)
                rot_left(t, p);
            else
                rot_right(t, p);
            s->height++;
            p->height--;
            if (!p->left && !p->right)
                p->height = 1;
        } else {                                /* two rotations */
            if (left3) {
                rot_right(t, s);
                rot_left(t, p);
            } else {
                rot_left(t, s);
                rot_right(t, p);
            }
            inner->height += 2;
            s->height--;
            p->height -= 2;
        }
        return;
    }
}

void vatree_init(struct vatree *t)
{
    t->root = NULL;
    t->count = 0;
}

/* Insert n: descend as for a search; a node that neither lies wholly
 * before nor wholly after n overlaps it, and because the ranges are
 * sorted and disjoint no overlapping node can hide in the subtree the
 * descent leaves behind. */
int vatree_insert(struct vatree *t, struct vanode *n)
{
    uint64_t last = last_byte(n);
    if (n->size == 0 || last < n->start)
        return VATREE_OVERLAP;          /* empty or wrapping: no place in any tree */
    struct vanode *parent = NULL, **link = &t->root;
    while (*link) {
        parent = *link;
        if (last < parent->start)
            link = &parent->left;
        else if (n->start > last_byte(parent))
            link = &parent->right;
        else
            return VATREE_OVERLAP;
    }
    n->left = n->right = NULL;
    n->parent = parent;
    n->height = 1;
    *link = n;
    t->count++;
    insert_fix(t, n);
    return 0;
}

/* Remove n. With two children, n's successor (the leftmost node of its
 * right subtree, which has no left child) is unlinked from its place and
 * put in n's; the nodes are moved, never their contents, since they are
 * embedded in the caller's records. */
void vatree_remove(struct vatree *t, struct vanode *n)
{
    struct vanode *fix;
    if (n->left && n->right) {
        struct vanode *s = n->right;
        while (s->left)
            s = s->left;
        if (s->parent == n) {
            fix = s;                    /* s keeps its right subtree */
        } else {
            fix = s->parent;
            fix->left = s->right;
            if (s->right)
                s->right->parent = fix;
            s->right = n->right;
            n->right->parent = s;
        }
        s->left = n->left;
        n->left->parent = s;
        s->parent = n->parent;
        s->height = n->height;
        replace_child(t, n->parent, n, s);
    } else {
        struct vanode *child = n->left ? n->left : n->right;
        fix = n->parent;
        if (child)
            child->parent = n->parent;
        replace_child(t, n->parent, n, child);
    }
    t->count--;
    n->left = n->right = n->parent = NULL;
    remove_fix(t, fix);
}

struct vanode *vatree_find(const struct vatree *t, uint64_t va)
{
    struct vanode *n = t->root;
    while (n) {
        if (va < n->start)
            n = n->left;
        else if (va - n->start < n->size)
            return n;
        else
            n = n->right;
    }
    return NULL;
}

/* The overlapping nodes, if any, are consecutive in address order and the
 * first of them is the lowest node ending at or after va; find that node
 * (the last bytes are sorted) and see whether it starts in the range. */
struct vanode *vatree_first_overlap(const struct vatree *t, uint64_t va, uint64_t size)
{
    if (size == 0)
        return NULL;
    uint64_t last = va + (size - 1);
    if (last < va)
        last = ~(uint64_t)0;
    struct vanode *n = t->root, *best = NULL;
    while (n) {
        if (last_byte(n) >= va) {
            best = n;
            n = n->left;
        } else {
            n = n->right;
        }
    }
    return best && best->start <= last ? best : NULL;
}

struct vanode *vatree_first(const struct vatree *t)
{
    struct vanode *n = t->root;
    while (n && n->left)
        n = n->left;
    return n;
}

/* The successor: the leftmost node of the right subtree, or else the
 * first ancestor reached from its left side. */
struct vanode *vatree_next(const struct vanode *n)
{
    if (n->right) {
        n = n->right;
        while (n->left)
            n = n->left;
        return (struct vanode *)n;
    }
    while (n->parent && n->parent->right == n)
        n = n->parent;
    return n->parent;
}
