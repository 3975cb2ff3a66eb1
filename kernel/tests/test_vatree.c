/*
 * Address-range tree tests: overlap rejection at every edge, random
 * operations against a brute-force model, and the height bound after
 * 100,000 sequential inserts. A structural checker (ordering, heights,
 * balance, parent pointers, count) runs throughout; it is iterative like
 * the tree, and a test of its own shows that it catches each kind of
 * damage.
 */
#include "ktest.h"
#include "vatree.h"

_Static_assert(VATREE_OVERLAP == -E_BUSY, "the tree's overlap is the kernel's E_BUSY");
#include "memory.h"
#include "arch.h"

static vaddr_t last_of(const struct vanode *n) { return n->start + (n->size - 1); }
static int h_of(const struct vanode *n) { return n ? n->height : 0; }

/*
 * Check every invariant of the tree; NULL if it holds, else what is wrong
 * (and *where the node). Walks the tree once without recursion: down to
 * the left, visit in order, down to the right, then back up through the
 * parent pointer that the way down has verified. *height_out gets the
 * root's height.
 */
static const char *tree_check(const struct vatree *t, const struct vanode **where, int *height_out)
{
    enum { DOWN, FROM_LEFT, FROM_RIGHT } dir = DOWN;
    const struct vanode *n = t->root, *prev = NULL;
    uint64_t visited = 0, steps = 0, max_steps = 3 * (t->count + 1);
    *where = n;
    *height_out = h_of(n);
    if (n && n->parent)
        return "the root has a parent";
    while (n) {
        *where = n;
        if (++steps > max_steps)
            return "more nodes than the count, or a cycle";
        if (dir == DOWN) {
            if (n->left) {
                if (n->left->parent != n)
                    return "a left child's parent pointer is wrong";
                n = n->left;
                continue;
            }
            dir = FROM_LEFT;
        }
        if (dir == FROM_LEFT) {
            if (n->size == 0)
                return "an empty range";
            if (last_of(n) < n->start)
                return "a range wraps around";
            if (prev && last_of(prev) >= n->start)
                return "ranges out of order or overlapping";
            prev = n;
            visited++;
            if (n->right) {
                if (n->right->parent != n)
                    return "a right child's parent pointer is wrong";
                n = n->right;
                dir = DOWN;
                continue;
            }
            dir = FROM_RIGHT;
        }
        int l = h_of(n->left), r = h_of(n->right);
        if (!n->left && !n->right && n->height != 1)
            return "a leaf's rank is not 0";
        if (n->height - l < 1 || n->height - l > 2 || n->height - r < 1 || n->height - r > 2)
            return "a rank difference is not 1 or 2";
        const struct vanode *p = n->parent;
        dir = p && p->left == n ? FROM_LEFT : FROM_RIGHT;
        n = p;
    }
    *where = NULL;
    if (visited != t->count)
        return "the count differs from the nodes reachable";
    return NULL;
}

/* Run the checker as a test check; false if it failed. */
static bool check_ok(const struct vatree *t, const char *when)
{
    const struct vanode *where;
    int h;
    const char *why = tree_check(t, &where, &h);
    return KT_CHECK(why == NULL, "%s: %s at node %p [0x%lx +0x%lx]", when, why, (const void *)where,
                    where ? where->start : 0, where ? where->size : 0);
}

/* The greatest height an AVL tree of n nodes can have: the largest h whose
 * sparsest tree, N(h) = N(h-1) + N(h-2) + 1 nodes, fits in n. */
static int avl_max_height(uint64_t n)
{
    uint64_t a = 0, b = 1;      /* N(h-1), N(h) */
    int h = 1;
    if (n == 0)
        return 0;
    while (a + b + 1 <= n) {
        uint64_t c = a + b + 1;
        a = b;
        b = c;
        h++;
    }
    return h;
}

static uint64_t rng_state;
static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static struct vanode mk(vaddr_t start, uint64_t size)
{
    struct vanode n = { .start = start, .size = size };
    return n;
}

/* ------------------------------------------------------------- edges */

KTEST(vatree_edges, "vatree: adjacent ranges fit, a one-byte overlap at any edge is refused")
{
    struct vatree t;
    vatree_init(&t);
    struct vanode base = mk(0x10000, 0x1000);
    KT_CHECK(vatree_first(&t) == NULL && vatree_find(&t, 0) == NULL, "empty tree");
    KT_CHECK(vatree_first_overlap(&t, 0, ~0ull) == NULL, "empty tree overlap");
    KT_CHECK(vatree_insert(&t, &base) == 0, "base insert");

    static const struct { vaddr_t start; uint64_t size; int want; } cases[] = {
        { 0xF000, 0x1000, 0 },          /* ends where base starts */
        { 0x11000, 0x1000, 0 },         /* starts where base ends */
        { 0xFFFF, 1, 0 },               /* the byte before */
        { 0x11000, 1, 0 },              /* the byte after */
        { 0, 0x10000, 0 },              /* everything below */
        { 0x11000, ~0ull - 0x11000 + 1, 0 }, /* everything above, to the top */
        { 0xF001, 0x1000, -E_BUSY },    /* last byte on base's first */
        { 0x10FFF, 0x1000, -E_BUSY },   /* first byte on base's last */
        { 0xFFFF, 2, -E_BUSY },
        { 0x10FFF, 2, -E_BUSY },
        { 0x10000, 1, -E_BUSY },
        { 0x10FFF, 1, -E_BUSY },
        { 0x10800, 1, -E_BUSY },
        { 0x10000, 0x1000, -E_BUSY },   /* identical */
        { 0x10100, 0x100, -E_BUSY },    /* inside */
        { 0xF000, 0x3000, -E_BUSY },    /* around */
        { 0, ~0ull, -E_BUSY },          /* everything but the top byte */
        { 0x10FFF, ~0ull - 0x10FFF + 1, -E_BUSY }, /* from base's last byte to the top */
    };
    for (unsigned i = 0; i < ARRAY_SIZE(cases); i++) {
        struct vanode n = mk(cases[i].start, cases[i].size);
        int got = vatree_insert(&t, &n);
        KT_CHECK(got == cases[i].want, "[0x%lx +0x%lx]: %d, expected %d", n.start, n.size, got, cases[i].want);
        KT_CHECK(t.count == (got == 0 ? 2u : 1u), "count %lu after [0x%lx +0x%lx]", t.count, n.start, n.size);
        check_ok(&t, "edge case");
        if (got == 0)
            vatree_remove(&t, &n);
        KT_CHECK(t.count == 1 && t.root == &base && !base.left && !base.right, "tree back to the base");
    }

    /* Lookups at the edges. */
    KT_CHECK(vatree_find(&t, 0xFFFF) == NULL && vatree_find(&t, 0x11000) == NULL, "find outside");
    KT_CHECK(vatree_find(&t, 0x10000) == &base && vatree_find(&t, 0x10FFF) == &base, "find at the edges");
    KT_CHECK(vatree_first_overlap(&t, 0xF000, 0x1000) == NULL, "adjacent below overlaps");
    KT_CHECK(vatree_first_overlap(&t, 0x11000, 0x1000) == NULL, "adjacent above overlaps");
    KT_CHECK(vatree_first_overlap(&t, 0xF000, 0x1001) == &base, "one byte below");
    KT_CHECK(vatree_first_overlap(&t, 0x10FFF, 0x1000) == &base, "one byte above");
    KT_CHECK(vatree_first_overlap(&t, 0x10000, 0) == NULL, "an empty range overlaps");
    KT_CHECK(vatree_first_overlap(&t, 0x10FFF, ~0ull) == &base, "a range past the top is cut there");

    /* Fill the gaps on both sides exactly, then the top of the address space. */
    struct vanode below = mk(0, 0x10000), above = mk(0x11000, 0x1000), top = mk(~0ull - 0xFFF, 0x1000);
    KT_CHECK(vatree_insert(&t, &below) == 0 && vatree_insert(&t, &above) == 0, "neighbours");
    KT_CHECK(vatree_insert(&t, &top) == 0, "a range ending at the top");
    struct vanode gap = mk(0x12000, ~0ull - 0xFFF - 0x12000);
    KT_CHECK(vatree_insert(&t, &gap) == 0, "the exact gap below the top");
    struct vanode any = mk(0x5000, 1), last = mk(~0ull, 1);
    KT_CHECK(vatree_insert(&t, &any) == -E_BUSY && vatree_insert(&t, &last) == -E_BUSY, "a full space");
    KT_CHECK(vatree_find(&t, ~0ull) == &top && vatree_find(&t, ~0ull - 0x1000) == &gap, "find near the top");
    KT_CHECK(vatree_first_overlap(&t, 0x10FFF, 0x3000) == &base, "lowest of three");
    KT_CHECK(vatree_first_overlap(&t, 0x11000, ~0ull) == &above, "lowest to the top");
    const struct vanode *order[] = { &below, &base, &above, &gap, &top };
    const struct vanode *it = vatree_first(&t);
    for (unsigned i = 0; i < ARRAY_SIZE(order); i++, it = it ? vatree_next(it) : NULL)
        KT_CHECK(it == order[i], "in-order position %u", i);
    KT_CHECK(it == NULL, "iteration ends");
    check_ok(&t, "full space");
    vatree_remove(&t, &base);
    KT_CHECK(vatree_find(&t, 0x10800) == NULL && vatree_first_overlap(&t, 0x10000, 0x1000) == NULL,
             "a removed range is gone");
    struct vanode again = mk(0x10000, 0x1000);
    KT_CHECK(vatree_insert(&t, &again) == 0, "its hole can be filled again");
    vatree_remove(&t, &top);
    vatree_remove(&t, &again);
    vatree_remove(&t, &gap);
    vatree_remove(&t, &below);
    vatree_remove(&t, &above);
    KT_CHECK(t.count == 0 && t.root == NULL, "empty at the end");
}

/* ------------------------------------------------------------- random */

#define POOL        512
#define RANDOM_OPS  20000
#define LOW_SPACE   MiB(1)       /* ranges lie in the lowest and highest MiB */

struct item {
    struct vanode node;
    bool in;
};
static struct item pool[POOL];

static struct item *model_first_overlap(vaddr_t va, vaddr_t last)
{
    struct item *best = NULL;
    for (unsigned i = 0; i < POOL; i++) {
        struct item *it = &pool[i];
        if (it->in && it->node.start <= last && last_of(&it->node) >= va &&
            (!best || it->node.start < best->node.start))
            best = it;
    }
    return best;
}

static vaddr_t random_address(void)
{
    vaddr_t off = rng() % LOW_SPACE;
    return rng() % 4 ? off : ~0ull - off;
}

static uint64_t random_size(void)
{
    switch (rng() % 8) {
    case 0:  return 1 + rng() % 16;
    case 1:  return 1 + rng() % KiB(64);
    default: return 1 + rng() % KiB(4);
    }
}

/* In-order iteration gives exactly the model's ranges, in order. */
static bool iteration_matches(const struct vatree *t, uint64_t model_count)
{
    uint64_t n = 0;
    const struct vanode *prev = NULL;
    for (const struct vanode *v = vatree_first(t); v; v = vatree_next(v), n++) {
        const struct item *it = vanode_entry(v, struct item, node);
        if (it < pool || it >= pool + POOL || !it->in || (prev && prev->start >= v->start) || n > model_count)
            return false;
        prev = v;
    }
    return n == model_count;
}

KTEST(vatree_random, "vatree: 20,000 random inserts, removes and lookups agree with a brute-force model")
{
    struct vatree t;
    vatree_init(&t);
    rng_state = 0x9E3779B97F4A7C15ull;
    for (unsigned i = 0; i < POOL; i++)
        pool[i].in = false;
    uint64_t in = 0, max_in = 0, inserted = 0, refused = 0, removed = 0, hits = 0, bad = 0;
    for (unsigned op = 0; op < RANDOM_OPS && bad < 5; op++) {
        unsigned kind = rng() % 100;
        if (kind < 50) {
            struct item *it = &pool[rng() % POOL];
            if (it->in) {
                vatree_remove(&t, &it->node);
                it->in = false;
                in--;
                removed++;
            } else {
                vaddr_t start = random_address();
                uint64_t size = random_size();
                if (start + (size - 1) < start)
                    size = -start;      /* end at the top */
                it->node = mk(start, size);
                bool fits = model_first_overlap(start, start + (size - 1)) == NULL;
                int got = vatree_insert(&t, &it->node);
                bad += !KT_CHECK(got == (fits ? 0 : -E_BUSY), "op %u: insert [0x%lx +0x%lx]: %d", op,
                                 start, size, got);
                if (got == 0) {
                    it->in = true;
                    in++;
                    inserted++;
                    max_in = MAX(max_in, in);
                } else {
                    refused++;
                }
            }
            bad += !KT_CHECK(t.count == in, "op %u: count %lu, model %lu", op, t.count, in);
        } else if (kind < 75) {
            vaddr_t va = random_address();
            struct item *want = model_first_overlap(va, va);
            struct vanode *got = vatree_find(&t, va);
            hits += want != NULL;
            bad += !KT_CHECK(got == (want ? &want->node : NULL), "op %u: find 0x%lx", op, va);
        } else {
            vaddr_t va = random_address();
            uint64_t size = rng() % 16 == 0 ? rng() : random_size() * (1 + rng() % 4);
            if (rng() % 64 == 0)
                size = 0;
            vaddr_t last = va + (size - 1) < va ? ~0ull : va + (size - 1);
            struct item *want = size ? model_first_overlap(va, last) : NULL;
            struct vanode *got = vatree_first_overlap(&t, va, size);
            bad += !KT_CHECK(got == (want ? &want->node : NULL), "op %u: first_overlap [0x%lx +0x%lx]", op,
                             va, size);
        }
        if (op % 500 == 499) {
            bad += !check_ok(&t, "random operations");
            bad += !KT_CHECK(iteration_matches(&t, in), "op %u: in-order iteration", op);
        }
    }
    bad += !check_ok(&t, "after the random operations");
    kprintf("# %lu inserted, %lu refused as overlapping, %lu removed, at most %lu at once, %lu find hits\n",
            inserted, refused, removed, max_in, hits);
    KT_CHECK(inserted > 2000 && refused > 500 && max_in > 100 && hits > 500, "the mix exercises every path");
    for (unsigned i = 0; i < POOL; i++)
        if (pool[i].in)
            vatree_remove(&t, &pool[i].node);
    KT_CHECK(t.count == 0 && t.root == NULL, "empty at the end");
}

/* ------------------------------------------------------------- sequential */

#define SEQ_NODES       100000
#define NODES_PER_BLOCK (MiB(2) / sizeof(struct vanode))
#define SEQ_BLOCKS      ((SEQ_NODES + NODES_PER_BLOCK - 1) / NODES_PER_BLOCK)

static struct vanode *seq_block[SEQ_BLOCKS];
static struct vanode *seq(uint64_t i) { return &seq_block[i / NODES_PER_BLOCK][i % NODES_PER_BLOCK]; }

static uint64_t us_since(uint64_t t0) { return (arch_counter() - t0) * 1000000 / arch_counter_freq(); }

/* Insert all nodes (ascending or descending addresses), checking the
 * height bound as the tree grows (an unbalanced tree stops the test before
 * it turns quadratic), then the structure, every lookup and the order.
 * False if the tree went wrong. */
static bool seq_fill(struct vatree *t, bool ascending, const char *what)
{
    uint64_t t0 = arch_counter(), bad = 0;
    for (uint64_t k = 0; k < SEQ_NODES; k++) {
        uint64_t i = ascending ? k : SEQ_NODES - 1 - k;
        *seq(i) = mk(0x100000 + i * 0x1000, 0x1000);
        bad += vatree_insert(t, seq(i)) != 0;
        if (k % 64 == 63 && !KT_CHECK(h_of(t->root) <= avl_max_height(t->count),
                                      "%s: height %d after %lu inserts, AVL bound %d", what, h_of(t->root),
                                      t->count, avl_max_height(t->count)))
            return false;
        if (k % 20000 == 19999 && !check_ok(t, what))
            return false;
    }
    uint64_t us = us_since(t0);
    int h = h_of(t->root), bound = avl_max_height(SEQ_NODES);
    kprintf("# %s: %d inserts in %lu us, height %d (AVL bound %d)\n", what, SEQ_NODES, us, h, bound);
    KT_CHECK(bad == 0 && t->count == SEQ_NODES, "%s: %lu inserts failed", what, bad);
    KT_CHECK(h <= bound, "%s: height %d above the AVL bound %d", what, h, bound);
    if (!check_ok(t, what))
        return false;
    uint64_t wrong = 0, n = 0;
    for (uint64_t i = 0; i < SEQ_NODES; i += 7)
        wrong += vatree_find(t, seq(i)->start + 0x800) != seq(i);
    const struct vanode *v = vatree_first(t);
    for (; v && n <= SEQ_NODES; v = vatree_next(v), n++)
        wrong += v != seq(n);
    KT_CHECK(wrong == 0 && n == SEQ_NODES, "%s: %lu wrong lookups or positions, %lu iterated", what, wrong, n);
    struct vanode across = mk(seq(5000)->start + 0xFFF, 2);
    KT_CHECK(vatree_insert(t, &across) == -E_BUSY, "%s: an overlap across two neighbours", what);
    return true;
}

/* Remove and check the structure every `every` removals. */
static bool seq_remove(struct vatree *t, struct vanode *n, uint64_t k, uint64_t every, const char *what)
{
    vatree_remove(t, n);
    if (k % every == every - 1 && !check_ok(t, what))
        return false;
    int lg = 0;
    while ((2ull << lg) <= t->count + 1)
        lg++;
    return KT_CHECK(h_of(t->root) <= 2 * lg + 1, "%s: height %d with %lu nodes", what,
                    h_of(t->root), t->count);
}

static void seq_run(void)
{
    struct vatree t;
    vatree_init(&t);

    /* Ascending; then remove every other node, then the rest from the top. */
    if (!seq_fill(&t, true, "ascending"))
        return;
    uint64_t t0 = arch_counter();
    for (uint64_t i = 0; i < SEQ_NODES; i += 2)
        if (!seq_remove(&t, seq(i), i / 2, 10000, "every other removed"))
            return;
    KT_CHECK(t.count == SEQ_NODES / 2, "half: count %lu", t.count);
    KT_CHECK(vatree_find(&t, seq(4)->start) == NULL && vatree_find(&t, seq(5)->start) == seq(5), "half lookups");
    KT_CHECK(vatree_first_overlap(&t, seq(4)->start, 0x2000) == seq(5), "overlap past a hole");
    for (uint64_t i = SEQ_NODES - 1; i < SEQ_NODES; i -= 2)   /* ends when i wraps below 0 */
        if (!seq_remove(&t, seq(i), i / 2, 10000, "removing from the top"))
            return;
    kprintf("# %d removes in %lu us\n", SEQ_NODES, us_since(t0));
    KT_CHECK(t.count == 0 && t.root == NULL, "empty after removing all");

    /* Descending; then remove from the root down, the hardest case for
     * removal (two children nearly every time). */
    if (!seq_fill(&t, false, "descending"))
        return;
    for (uint64_t k = 0; t.root; k++)
        if (!seq_remove(&t, t.root, k, 10000, "removing the root"))
            return;
    KT_CHECK(t.count == 0, "empty after removing the roots");
}

KTEST(vatree_sequential, "vatree: 100,000 sequential inserts stay within the AVL height bound")
{
    unsigned got = 0;
    for (; got < SEQ_BLOCKS; got++) {
        paddr_t pa = frame_alloc(FRAME_ORDER_2M);
        if (!KT_CHECK(pa != PADDR_INVALID, "2 MiB block %u", got))
            break;
        seq_block[got] = phys_to_virt(pa);
    }
    if (got == SEQ_BLOCKS)
        seq_run();
    while (got-- > 0)
        frame_free(virt_to_phys(seq_block[got]), FRAME_ORDER_2M);
}

/* ------------------------------------------------------------- the checker */

/* A valid tree of 7 adjacent ranges, built by inserting; each case then
 * damages one thing, and the checker must notice. */
KTEST(vatree_checker, "vatree: the invariant checker catches each kind of damage")
{
    static struct vanode n[7];
    struct vatree t;
    const struct vanode *where;
    int h;
    static const char *const damage[] = {
        "height", "balance", "parent pointer", "order", "overlap", "count", "root's parent", "size",
        "child links",
    };
    for (unsigned d = 0; d <= ARRAY_SIZE(damage); d++) {
        vatree_init(&t);
        for (unsigned i = 0; i < 7; i++) {
            n[i] = mk(0x1000 * (i + 1), 0x1000);
            vatree_insert(&t, &n[i]);
        }
        /* Inserting 1..7 in order gives the perfect tree with n[3] at the root. */
        struct vanode *root = t.root, *l = root->left, *ll = l->left;
        switch (d) {
        case 0: ll->height = 2; break;
        case 1: root->right = NULL; root->height = 3; break;    /* left 2 high, right 0 */
        case 2: ll->parent = root; break;
        case 3: ll->start = 0x5800; break;                      /* below l but after it */
        case 4: ll->size = 0x1001; break;                       /* one byte into l */
        case 5: t.count = 6; break;
        case 6: root->parent = l; break;
        case 7: ll->size = 0; break;
        case 8: l->right = ll; break;                           /* one child linked twice */
        default: break;
        }
        const char *why = tree_check(&t, &where, &h);
        if (d < ARRAY_SIZE(damage)) {
            kprintf("# damage to the %s: %s\n", damage[d], why ? why : "none found");
            ktest_result(why != NULL, "vatree: checker sees damage to the %s", damage[d]);
        } else {
            if (why)
                kprintf("# intact tree: %s\n", why);
            ktest_result(why == NULL && h == 3, "vatree: checker passes an intact tree");
        }
    }
}
