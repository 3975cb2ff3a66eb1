/*
 * The service manager of native object RPC (idl/servicemgr.toml): names
 * to objects, as Binder's context manager keeps them, with the system
 * description's permissions. Written only against svc.h, so it runs in
 * the kernel or in user space.
 *
 * An object is a handle of an endpoint its server made (badged: the badge
 * tells the server which of its objects a call is for, and the kernel puts
 * the caller's pid beside it). The service keeps the handle a server
 * registers and gives a copy to each client that looks the name up.
 *
 * Who may do what: the root task gives each program that is granted the
 * service a handle badged with the program's number, and the build writes
 * the programs' `publish` and `lookup` names into the boot file
 * `servicemgr.policy`, one rule a line: "BADGE publish NAME" or
 * "BADGE lookup NAME" (NAME "*": any). A caller whose badge has no rule
 * for a name is refused with E_PERM, so a program cannot reach objects it
 * was not given even if it guesses their names.
 */
#include "servicemgr_if.h"
#include "pstring.h"

#define NAME_MAX    32
#define ENTRIES     64          /* names registered at once */
#define RULES       256         /* of the policy */
#define PER_CALLER  16          /* names one program (badge) may hold: a program allowed any
                                 * name ("*") cannot take every entry from the others */

struct entry {
    uint8_t name[NAME_MAX];
    uint32_t len;               /* 0: free */
    svc_handle object;
    uint64_t pid;               /* who registered it */
    uint64_t badge;             /* (its program) */
};

struct rule {
    uint64_t badge;
    uint8_t publish;            /* 1: publish, 0: lookup */
    uint8_t name[NAME_MAX];
    uint32_t len;               /* (1 and "*": any name) */
};

static struct entry entries[ENTRIES];
static struct rule rules[RULES];
static unsigned nrules;
static int policy_read;         /* 0: not yet, 1: read, -1: none found (everything refused) */

static int good_name(const uint8_t *name, uint32_t len);

/* One line of the policy, [p, end): a rule, or nothing if malformed. */
static void parse_rule(const char *p, const char *end)
{
    uint64_t badge = 0;
    const char *q = p;
    while (q < end && *q >= '0' && *q <= '9')
        badge = badge * 10 + (uint64_t)(*q++ - '0');
    if (q == p || q >= end || *q++ != ' ' || nrules == RULES)
        return;
    int publish;
    if (end - q > 8 && !memcmp(q, "publish ", 8))
        publish = 1, q += 8;
    else if (end - q > 7 && !memcmp(q, "lookup ", 7))
        publish = 0, q += 7;
    else
        return;
    if (end - q < 1 || end - q > NAME_MAX ||
        !((end - q == 1 && *q == '*') || good_name((const uint8_t *)q, (uint32_t)(end - q))))
        return;                         /* (a name no request could carry: never matched) */
    struct rule *r = &rules[nrules++];
    r->badge = badge;
    r->publish = (uint8_t)publish;
    r->len = (uint32_t)(end - q);
    memcpy(r->name, q, r->len);
}

static void read_policy(void)
{
    if (policy_read)
        return;
    policy_read = -1;
    struct petrel_bootfile bf;
    const void *data;
    for (uint32_t i = 0; svc_bootfile(i, &bf, &data) == 0; i++) {
        if (strcmp(bf.name, "servicemgr.policy") != 0)
            continue;
        const char *text = data, *end = text + bf.size;
        for (const char *line = text; line < end; ) {
            const char *nl = line;
            while (nl < end && *nl != '\n')
                nl++;
            if (nl > line && *line != '#')
                parse_rule(line, nl);
            line = nl + 1;
        }
        policy_read = 1;
        return;
    }
}

static int allowed(uint64_t badge, int publish, const uint8_t *name, uint32_t len)
{
    read_policy();
    for (unsigned i = 0; i < nrules; i++) {
        const struct rule *r = &rules[i];
        if (r->badge == badge && r->publish == publish &&
            ((r->len == 1 && r->name[0] == '*') || (r->len == len && !memcmp(r->name, name, len))))
            return 1;
    }
    return 0;
}

static int good_name(const uint8_t *name, uint32_t len)
{
    if (len == 0 || len > NAME_MAX)
        return 0;
    for (uint32_t i = 0; i < len; i++) {
        uint8_t c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
              c == '-' || c == '_'))
            return 0;
    }
    return 1;
}

/* The entry of `name`, its server alive; one whose server died is freed. */
static struct entry *find(const uint8_t *name, uint32_t len)
{
    for (unsigned i = 0; i < ENTRIES; i++) {
        struct entry *e = &entries[i];
        if (e->len != len || memcmp(e->name, name, len) != 0)
            continue;
        if (!svc_endpoint_alive(e->object)) {
            svc_handle_release(e->object);
            *e = (struct entry){ 0 };
            return NULL;
        }
        return e;
    }
    return NULL;
}

static int64_t add(struct svc_call *call, const uint8_t *name, uint32_t name_len, svc_handle object)
{
    int64_t err = 0;
    struct entry *e = NULL;
    int rights = svc_handle_rights(object);
    if (!good_name(name, name_len) || rights < 0)
        err = SVC_E_INVAL;
    else if (!allowed(call->badge, 1, name, name_len))
        err = SVC_E_PERM;
    else if (find(name, name_len))
        err = SVC_E_BUSY;
    else if (svc_endpoint_alive(object) != 1)
        err = SVC_E_INVAL;              /* not an endpoint, or a dead one: nobody would answer */
    else if ((rights & (R_READ | R_WRITE | R_GRANT | R_DUP)) != (R_WRITE | R_GRANT | R_DUP))
        err = SVC_E_INVAL;              /* one it could not hand out, or one that receives (kept
                                         * here, it would keep its server's endpoint alive) */
    unsigned held = 0;
    for (unsigned i = 0; !err && i < ENTRIES; i++) {
        struct entry *x = &entries[i];
        if (x->len && !svc_endpoint_alive(x->object)) {
            svc_handle_release(x->object);  /* a dead server's: its room is free again */
            *x = (struct entry){ 0 };
        }
        if (!x->len && !e)
            e = x;
        else if (x->len && x->badge == call->badge)
            held++;
    }
    if (!err && (!e || held >= PER_CALLER))
        err = SVC_E_LIMIT;
    if (err) {
        svc_handle_release(object);
        return err;
    }
    memcpy(e->name, name, name_len);
    e->len = name_len;
    e->object = object;
    e->pid = call->pid;
    e->badge = call->badge;
    return 0;
}

static int64_t get(struct svc_call *call, const uint8_t *name, uint32_t name_len, svc_handle *object)
{
    if (!good_name(name, name_len))
        return SVC_E_INVAL;
    if (!allowed(call->badge, 0, name, name_len))
        return SVC_E_PERM;
    struct entry *e = find(name, name_len);
    if (!e)
        return SVC_E_NOENT;
    *object = svc_handle_copy(e->object);
    return *object ? 0 : SVC_E_NOMEM;
}

static int64_t list(struct svc_call *call, uint32_t index, uint8_t *name, uint32_t *name_len)
{
    for (unsigned i = 0; i < ENTRIES; i++) {
        struct entry *e = &entries[i];
        if (!e->len || !allowed(call->badge, 0, e->name, e->len))
            continue;
        if (!svc_endpoint_alive(e->object)) {
            svc_handle_release(e->object);
            *e = (struct entry){ 0 };
            continue;
        }
        if (index-- == 0) {
            memcpy(name, e->name, e->len);
            *name_len = e->len;
            return 0;
        }
    }
    return SVC_E_NOENT;
}

const struct servicemgr_ops servicemgr_ops = { add, get, list };
