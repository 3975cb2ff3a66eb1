/* The kernel's table of the services compiled into it (generated:
 * build/gen/kernel/ksvc_table.c, from the services/ folders). */
#ifndef PETREL_SVC_TABLE_H
#define PETREL_SVC_TABLE_H

#include "svc.h"

struct ksvc {
    unsigned id;                            /* interface id */
    const char *name;
    void (*entry)(struct svc_call *call);   /* <name>_service */
};

extern const struct ksvc ksvc_table[];
extern const unsigned ksvc_count;

#endif
