/*
 * Attack 7: kernel memory floods from a child with a 1 MiB memory
 * limit. Each must stop with E_LIMIT or E_NOMEM, at a count that shows
 * every object was paid for (count times the least kernel memory one
 * takes fits in the limit: free objects would go far past it), while
 * the root task still works; when the child ends, everything comes back.
 */
#include "sectest.h"

#define FLOOD_LIMIT MiB(1)

struct flood_kind {
    const char *name;
    const char *args;
    const char *objects;
    uint64_t unit;          /* the least kernel memory one takes */
    uint64_t extra_unit;    /* ... and one of the report's extra objects */
};

static void flood(const struct flood_kind *k)
{
    char name[48];
    snprintf(name, sizeof(name), "flood/%s", k->name);
    struct usage before;
    usage_now(&before);
    struct child c;
    uint64_t mr[6];
    child_spawn(&c, k->args, FLOOD_LIMIT, NULL, 0);
    int64_t r = child_report(&c, mr, 60000);
    uint64_t count = mr[0], extra = mr[2], used = mr[3];
    int64_t err = (int64_t)mr[1];
    uint64_t paid = count * k->unit + extra * k->extra_unit;
    tap_ok(r == 0 && (err == -E_LIMIT || err == -E_NOMEM) && paid <= FLOOD_LIMIT && used <= FLOOD_LIMIT,
           "%s: %s refused after %lu with %s, each paid for (%lu KiB at least; the child uses %lu of %lu KiB)",
           name, k->objects, (unsigned long)count, error_str(r ? r : err), (unsigned long)(paid >> 10), (unsigned long)(used >> 10),
           (unsigned long)(FLOOD_LIMIT >> 10));
    check_alive(name);                  /* while the child holds all it got */
    child_answer(&c, 0);
    child_end(&c, 5000);
    check_usage_back(name, &before);
}

void test_floods(void)
{
    static const struct flood_kind kinds[] = {
        { "lazy2m", "mode=flood what=lazy2m", "lazy 512 GiB objects of 2 MiB pages", MiB(2), 0 },
        { "threads", "mode=flood what=threads", "threads never started", 4096, 0 },
        { "threads-elsewhere", "mode=flood what=elsewhere", "threads never started, in a space it made", 4096, 0 },
        /* A space holding a handle: its L1 table and one leaf of handle slots. */
        { "spaces", "mode=chain", "chained spaces", KiB(8), 0 },
        { "endpoints", "mode=flood what=endpoints", "endpoints held by spaces made for them", 32, KiB(8) },
        { "tables", "mode=flood what=tables", "page tables (a page mapped at 2 MiB strides)", 4096, 0 },
        { "mappings", "mode=flood what=mappings", "4 KiB mappings", 32, 0 },
    };
    for (unsigned i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
        flood(&kinds[i]);
}
