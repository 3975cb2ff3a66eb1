/* Intrusive circular doubly linked lists. */
#ifndef PETREL_LIST_H
#define PETREL_LIST_H

#include "types.h"

struct list {
    struct list *next, *prev;
};

#define LIST_INIT(name) { &(name), &(name) }
#define list_entry(p, type, member) ((type *)((char *)(p) - offsetof(type, member)))
#define list_first(head, type, member) list_entry((head)->next, type, member)
#define list_for_each(pos, head) for (struct list *pos = (head)->next; pos != (head); pos = pos->next)
#define list_for_each_safe(pos, tmp, head) \
    for (struct list *pos = (head)->next, *tmp = pos->next; pos != (head); pos = tmp, tmp = pos->next)

static inline void list_init(struct list *l) { l->next = l->prev = l; }
static inline bool list_empty(const struct list *l) { return l->next == l; }

static inline void list_insert(struct list *prev, struct list *next, struct list *n)
{
    n->prev = prev;
    n->next = next;
    prev->next = n;
    next->prev = n;
}

static inline void list_add_tail(struct list *head, struct list *n) { list_insert(head->prev, head, n); }
static inline void list_add_head(struct list *head, struct list *n) { list_insert(head, head->next, n); }

static inline void list_del(struct list *n)
{
    n->prev->next = n->next;
    n->next->prev = n->prev;
    n->next = n->prev = n;
}

#endif
