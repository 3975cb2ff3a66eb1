/*
 * The root task of a Petrel system: the first program at EL0, holding
 * the system handle. It reads the system manifest the build packed into
 * the boot image (from systems/<name>.toml), creates the endpoints it
 * names, starts each program with its priority, core, arguments and
 * granted endpoints, binds kernel-placed services or starts user-placed
 * ones (and restarts those when they fault: it is their supervisor), waits
 * until every program has exited, and returns, which powers the machine off.
 */
#include "petrel.h"
#include "virtio_mmio.h"

#define MAX_ENDPOINTS   16
#define MAX_PROGRAMS    64      /* programs whose names it reports (all are waited for) */
#define LABEL_EXIT      0x45584954

struct endpoint { char name[24]; uint32_t handle; };

/* A user-placed service under supervision: restarted from its image when it
 * faults, with the same endpoint and the same durable state object. */
#define MAX_SERVICES    8
#define BADGE_SERVICE   0x5e00000000ull
#define STATE_SIZE      0x200000ull

#define SERVICE_GRANTS  12

struct service {
    char name[24], program[40];
    uint32_t ep, state, space, thread;
    unsigned prio, restarts;
    int cpu;
    struct spawn_req limits;    /* only its limits are used */
    struct spawn_grant grants[SERVICE_GRANTS];  /* devices, interrupts, called services */
    char grant_names[SERVICE_GRANTS][24];
    unsigned ngrants;
};

static struct service services[MAX_SERVICES];
static unsigned nservices;
static uint32_t parent_ep;

static struct endpoint endpoints[MAX_ENDPOINTS];
static unsigned nendpoints;
static struct { char name[32]; uint64_t pid; } started[MAX_PROGRAMS];
static unsigned nstarted, nprograms;   /* named in started[]; started in all */

/* A decimal number. */
static uint64_t number(const char *s)
{
    uint64_t v = 0;
    for (; *s >= '0' && *s <= '9'; s++)
        v = v * 10 + (uint64_t)(*s - '0');
    return v;
}

/* The "MEMORY:THREADS:HANDLES:SPACES" limits of a manifest line into req. */
static void parse_limits(const char *s, struct spawn_req *req)
{
    uint64_t *out[] = { &req->mem_limit, &req->max_threads, &req->max_handles, &req->max_spaces };
    for (unsigned i = 0; i < 4; i++) {
        *out[i] = number(s);
        while (*s && *s != ':')
            s++;
        if (*s)
            s++;
    }
}

static uint32_t endpoint_named(const char *name, size_t len)
{
    for (unsigned i = 0; i < nendpoints; i++)
        if (strlen(endpoints[i].name) == len && strncmp(endpoints[i].name, name, len) == 0)
            return endpoints[i].handle;
    return 0;
}

/* Copy the next space-separated word of *p into out; false at line end. */
static bool word(const char **p, char *out, size_t size)
{
    while (**p == ' ')
        (*p)++;
    size_t n = 0;
    while (**p && **p != ' ' && **p != '\n') {
        if (n + 1 < size)
            out[n++] = **p;
        (*p)++;
    }
    out[n] = '\0';
    return n > 0;
}

/* One "program NAME PRIO CPU GRANTS ARGS" line: start it. */
static void start_program(const char *line, uint32_t parent)
{
    char name[32], prio[8], cpu[8], mem[24], grants[160];
    const char *p = line;
    if (!word(&p, name, sizeof(name)) || !word(&p, prio, sizeof(prio)) || !word(&p, cpu, sizeof(cpu)) ||
        !word(&p, mem, sizeof(mem)) || !word(&p, grants, sizeof(grants))) {
        printf("root: malformed manifest line: %s\n", line);
        return;
    }
    while (*p == ' ')
        p++;
    char args[200];
    size_t n = 0;
    while (p[n] && p[n] != '\n' && n + 1 < sizeof(args)) {
        args[n] = p[n];
        n++;
    }
    args[n] = '\0';

    struct spawn_grant g[MAX_ENDPOINTS + 1];
    uint32_t badged[MAX_ENDPOINTS];     /* handles made for this program alone */
    unsigned ng = 0, nbadged = 0;
    g[ng++] = (struct spawn_grant){ "parent", parent, R_WRITE };
    for (const char *q = grants; strcmp(grants, "-") != 0 && *q; ) {
        const char *colon = q;
        while (*colon && *colon != ':')
            colon++;
        const char *end = colon;
        while (*end && *end != ',')
            end++;
        uint32_t h = endpoint_named(q, (size_t)(colon - q));
        uint32_t rights = !strncmp(colon, ":send", 5) ? R_WRITE : !strncmp(colon, ":recv", 5) ? R_READ : R_READ | R_WRITE;
        /* "name:send#N": a handle badged N, by which the service knows the
         * program (the service manager's permissions, systems.py). */
        uint64_t badge = 0;
        for (const char *b = colon; b < end; b++)
            if (*b == '#')
                for (badge = 0, b++; b < end && *b >= '0' && *b <= '9'; b++)
                    badge = badge * 10 + (uint64_t)(*b - '0');
        if (h && badge) {
            int64_t d = nbadged < MAX_ENDPOINTS ? sys_handle_dup(h, rights | R_GRANT, badge) : -E_LIMIT;
            h = d > 0 ? (uint32_t)d : 0;
            if (h)
                badged[nbadged++] = h;
            else
                printf("root: %s: no badged handle for its grant: %s\n", name, error_str(d));
        }
        static char names[MAX_ENDPOINTS][24];
        size_t len = MIN((size_t)(colon - q), sizeof(names[0]) - 1);
        memcpy(names[ng], q, len);
        names[ng][len] = '\0';
        if (h && ng < MAX_ENDPOINTS) {
            g[ng] = (struct spawn_grant){ names[ng], h, rights };
            ng++;
        }
        q = *end ? end + 1 : end;
    }
    unsigned pr = 0;
    for (const char *d = prio; *d; d++)
        pr = pr * 10 + (unsigned)(*d - '0');
    int core = cpu[0] == '-' ? -1 : cpu[0] - '0';
    struct spawn_req req = { name, args, pr, core, g, ng, 0, 0, 0, 0, 0 };
    parse_limits(mem, &req);
    struct spawn_result r;
    int64_t err = spawn(&req, &r);
    for (unsigned i = 0; i < nbadged; i++)
        sys_handle_close(badged[i]);    /* (the program has its copy) */
    if (err) {
        printf("root: cannot start %s: %s\n", name, error_str(err));
        return;
    }
    printf("root: started %s (pid %lu, priority %u)\n", name, (unsigned long)r.pid, pr);
    sys_handle_close(r.thread);
    sys_handle_close(r.space);
    nprograms++;
    if (nstarted < MAX_PROGRAMS) {
        memcpy(started[nstarted].name, name, strlen(name) + 1);
        started[nstarted++].pid = r.pid;
    }
}

static const char *name_of(uint64_t pid)
{
    for (unsigned i = 0; i < nstarted; i++)
        if (started[i].pid == pid)
            return started[i].name;
    return "?";
}

/* Start (or restart) a user-placed service with its endpoint, state and
 * the system handle, its faults coming to us (the endpoint its main thread
 * faults to is granted as "fault", for the other server threads it starts:
 * user_env.c). The service may also send
 * on its endpoint and duplicate it (badged): that is how it makes itself
 * the fault handler of processes it creates (svc_thread_fault_to_me). */
static int64_t start_instance(struct service *v)
{
    int64_t fault = sys_handle_dup(parent_ep, R_WRITE | R_GRANT, BADGE_SERVICE | (uint64_t)(v - services));
    struct spawn_grant g[3 + SERVICE_GRANTS] = { { "service", v->ep, R_READ | R_WRITE | R_DUP },
                                                 { "fault", (uint32_t)fault, R_WRITE },
                                                 { "state", v->state, R_READ | R_WRITE } };
    unsigned ng = v->state ? 3 : 2;
    for (unsigned i = 0; i < v->ngrants; i++)
        g[ng++] = v->grants[i];
    struct spawn_req req = v->limits;
    req.program = v->program;
    req.args = "";
    req.prio = v->prio;
    req.cpu = v->cpu;
    req.grants = g;
    req.ngrants = ng;
    req.fault_ep = (uint32_t)fault;
    struct spawn_result r;
    int64_t err = fault > 0 ? spawn(&req, &r) : fault;
    if (fault > 0)
        sys_handle_close((uint32_t)fault);
    if (err) {
        printf("root: cannot start service %s: %s\n", v->name, error_str(err));
        return err;
    }
    v->space = r.space;
    v->thread = r.thread;
    return 0;
}

/* A supervised service faulted: stop it and start it again. */
static void restart(struct service *v, const struct petrel_msg *fault)
{
    printf("root: service %s faulted (kind %lu at 0x%lx, pc 0x%lx); restarting it\n", v->name,
           (unsigned long)fault->mr[FAULT_MR_KIND], (unsigned long)fault->mr[FAULT_MR_ADDR],
           (unsigned long)fault->mr[FAULT_MR_PC]);
    struct petrel_msg stop = { MSG_INFO(0, 1, 0), { FAULT_REPLY_STOP }, 0, 0 };
    sys_ipc_reply(0, &stop);
    sys_space_kill(v->space);           /* every server thread of it, not only the main one */
    sys_handle_close(v->thread);
    sys_handle_close(v->space);
    v->restarts++;
    if (start_instance(v) == 0)
        printf("root: service %s is back (pid %lu, restart %u)\n", v->name,
               (unsigned long)sys_space_id(v->space), v->restarts);
}

/* The monitor (0: the kernel records nothing), opened once. */
static uint32_t trace_handle(void)
{
    static int64_t h;
    if (!h)
        h = sys_trace_open(root_handle());
    return h > 0 ? (uint32_t)h : 0;
}

/* Add a grant to a service being set up. */
static void add_grant(struct service *v, const char *prefix, const char *what, uint32_t h, uint32_t rights)
{
    if (v->ngrants == SERVICE_GRANTS || !h)
        return;
    snprintf(v->grant_names[v->ngrants], sizeof(v->grant_names[0]), "%s%s", prefix, what);
    v->grants[v->ngrants] = (struct spawn_grant){ v->grant_names[v->ngrants], h, rights };
    v->ngrants++;
}

/* "virtio-<type>" or "virtio-<type>#N": the virtio,mmio transport holding
 * that type at the lowest address, or the one N places above it
 * (virtio_mmio.h), and in *in_page how many of that type lie below it in
 * its page (the service, given the whole page, counts them to find its
 * own). Each is looked at through a mapping of its page here, which goes
 * again. 0, or -E_NOENT if there is none. */
static int virtio_find(const char *compat, unsigned nth, struct petrel_device *found, unsigned *in_page)
{
    uint32_t id = virtio_device_id(compat);
    struct petrel_device d, of[32];
    unsigned n = 0;
    for (uint64_t i = 0;
         n < 32 && sys_device_find(root_handle(), VIRTIO_MMIO_COMPAT, sizeof(VIRTIO_MMIO_COMPAT) - 1, i, &d) == 0;
         i++) {
        uint64_t base = d.pa & ~4095ull;
        int64_t m = sys_mem_create_phys(root_handle(), base, 4096);
        uint64_t va = m > 0 ? va_alloc(4096, 4096) : 0;
        if (va && sys_mem_map(self_space(), (uint32_t)m, va, 0, 4096, R_READ) == 0) {
            if (virtio_mmio_is((const volatile void *)(va + (d.pa - base)), id)) {
                unsigned at = n++;              /* kept in order of address */
                while (at && of[at - 1].pa > d.pa) {
                    of[at] = of[at - 1];
                    at--;
                }
                of[at] = d;
            }
            sys_mem_unmap(self_space(), va);
        }
        if (m > 0)
            sys_handle_close((uint32_t)m);
    }
    if (nth >= n)
        return -E_NOENT;
    *found = of[nth];
    *in_page = 0;
    for (unsigned k = 0; k < nth; k++)
        *in_page += (of[k].pa & ~4095ull) == (found->pa & ~4095ull);
    return 0;
}

/* The declared devices (';'-separated compatible strings, a virtio type
 * with "#N" for its Nth device after the first): their registers and
 * interrupt as objects of their own, so the service needs no system
 * handle. The registers are named "dev:<type>", or "dev:<type>#K" when
 * K transports of the type lie below the device in its page (svc_device
 * skips them); the interrupt "irq:<type>". */
static void grant_devices(struct service *v, const char *devices)
{
    for (const char *q = devices; strcmp(devices, "-") != 0 && *q; ) {
        char compat[48];
        size_t n = 0;
        while (q[n] && q[n] != ';' && n + 1 < sizeof(compat)) {
            compat[n] = q[n];
            n++;
        }
        compat[n] = 0;
        q += n + (q[n] == ';');
        unsigned nth = 0, in_page = 0;
        char *hash = compat;
        while (*hash && *hash != '#')
            hash++;
        if (!*hash)
            hash = NULL;
        else {
            *hash = 0;
            for (const char *c = hash + 1; *c >= '0' && *c <= '9'; c++)
                nth = nth * 10 + (unsigned)(*c - '0');
            n = (size_t)(hash - compat);
        }
        struct petrel_device d;
        if (virtio_device_id(compat) ? virtio_find(compat, nth, &d, &in_page) < 0
                                     : hash || sys_device_find(root_handle(), compat, n, 0, &d) < 0) {
            if (hash)
                *hash = '#';
            printf("root: service %s: no device %s\n", v->name, compat);
            continue;
        }
        uint64_t base = d.pa & ~4095ull, size = ((d.pa + (d.size ? d.size : 4096) + 4095) & ~4095ull) - base;
        int64_t m = sys_mem_create_phys(root_handle(), base, size);
        int64_t irq = d.irq ? sys_irq_create(root_handle(), d.irq) : 0;
        char dev[56];
        snprintf(dev, sizeof(dev), in_page ? "%s#%u" : "%s", compat, in_page);
        add_grant(v, "dev:", dev, m > 0 ? (uint32_t)m : 0, R_READ | R_WRITE | R_GRANT);
        add_grant(v, "irq:", compat, irq > 0 ? (uint32_t)irq : 0, R_ALL);
    }
}

/* One "service NAME INTERFACE ID PLACEMENT PRIO CPU DEVICES BOOTFILES CALLS"
 * line: an endpoint for the service, answered by the kernel or by a server
 * process given exactly what the description lists. */
static void start_service(const char *line, uint32_t parent)
{
    char name[24], interface[24], id_s[8], placement[8], prio[8], cpu[8], devices[96], bootfiles[4], calls[96],
         mem[24];
    const char *p = line;
    if (!word(&p, name, sizeof(name)) || !word(&p, interface, sizeof(interface)) || !word(&p, id_s, sizeof(id_s)) ||
        !word(&p, placement, sizeof(placement)) || !word(&p, prio, sizeof(prio)) || !word(&p, cpu, sizeof(cpu)) ||
        !word(&p, devices, sizeof(devices)) || !word(&p, bootfiles, sizeof(bootfiles)) ||
        !word(&p, calls, sizeof(calls)) || !word(&p, mem, sizeof(mem)) || nendpoints == MAX_ENDPOINTS) {
        printf("root: malformed manifest line: service %s\n", line);
        return;
    }
    uint32_t ep = (uint32_t)sys_endpoint_create();
    memcpy(endpoints[nendpoints].name, name, strlen(name) + 1);
    endpoints[nendpoints++].handle = ep;
    uint64_t id = 0;
    for (const char *d = id_s; *d; d++)
        id = id * 10 + (uint64_t)(*d - '0');
    if (!strcmp(placement, "kernel")) {
        /* What the service makes is charged to a space of its own with
         * the description's limits, as a server process would be. */
        struct spawn_req lim = { 0 };
        parse_limits(mem, &lim);
        int64_t acct = sys_space_create();
        const uint64_t limits[LIMIT_KINDS] = { lim.mem_limit, lim.max_threads, lim.max_handles, lim.max_spaces };
        for (unsigned k = 0; acct > 0 && k < LIMIT_KINDS; k++)
            if (limits[k])
                sys_space_set_limit((uint32_t)acct, k, limits[k]);
        int64_t err = acct < 0 ? acct : sys_service_bind(root_handle(), ep, id, (uint32_t)acct);
        if (acct > 0)
            sys_handle_close((uint32_t)acct);       /* the kernel keeps it */
        /* The kernel-placed services it calls (placed before it: the
         * manifest lists callees first), by the names it asks for. */
        for (const char *q = calls; !err && strcmp(calls, "-") != 0 && *q; ) {
            size_t n = 0;
            while (q[n] && q[n] != ';')
                n++;
            err = sys_service_link(root_handle(), ep, endpoint_named(q, n), q, n);
            q += n + (q[n] == ';');
        }
        printf("root: service %s (%s) placed in the kernel%s%s\n", name, interface, err ? ": " : "",
               err ? error_str(err) : "");
        return;
    }
    if (nservices == MAX_SERVICES) {
        printf("root: too many services: %s not started\n", name);
        return;
    }
    struct service *v = &services[nservices];
    memcpy(v->name, name, strlen(name) + 1);
    snprintf(v->program, sizeof(v->program), "svc-%s", interface);
    for (const char *d = prio; *d; d++)
        v->prio = v->prio * 10 + (unsigned)(*d - '0');
    v->cpu = cpu[0] == '-' ? -1 : cpu[0] - '0';
    parse_limits(mem, &v->limits);
    v->ep = ep;
    int64_t state = sys_mem_create(STATE_SIZE, MEM_PAGE_2M);  /* lazy, one TLB entry when used */
    v->state = state > 0 ? (uint32_t)state : 0;
    grant_devices(v, devices);
    /* The monitor: a service records its tracepoints; the Linux personality
     * also reads the rings (/proc/net/tcpmon), the others see only the
     * enabled bits (trace_map gives them the header alone). */
    add_grant(v, "", "trace", trace_handle(), strcmp(interface, "linux") == 0 ? R_READ | R_WRITE : R_WRITE);
    if (bootfiles[0] == '1')
        add_grant(v, "", "root", root_handle(), R_READ);    /* the boot image's files, nothing else */
    for (const char *q = calls; strcmp(calls, "-") != 0 && *q; ) {
        size_t n = 0;
        while (q[n] && q[n] != ';')
            n++;
        char callee[24];
        memcpy(callee, q, MIN(n, sizeof(callee) - 1));
        callee[MIN(n, sizeof(callee) - 1)] = 0;
        add_grant(v, "", callee, endpoint_named(q, n), R_WRITE);
        q += n + (q[n] == ';');
    }
    if (start_instance(v) == 0) {
        printf("root: service %s (%s) placed in user space (pid %lu, priority %u)\n", name, interface,
               (unsigned long)sys_space_id(v->space), v->prio);
        nservices++;
    }
}

/* Read the manifest; returns how many programs were started. */
static unsigned run_manifest(uint32_t parent)
{
    struct petrel_bootfile bf;
    int64_t idx = bootfile_find("system.manifest", &bf);
    if (idx < 0)
        return 0;
    int64_t f = sys_mem_from_bootfile(root_handle(), (uint64_t)idx);
    uint64_t va = va_alloc(bf.size, 4096);
    if (f < 0 || sys_mem_map(self_space(), (uint32_t)f, va, 0, (bf.size + 4095) & ~4095ull, R_READ) < 0) {
        puts("root: cannot map system.manifest");
        return 0;
    }
    const char *text = (const char *)va, *end = text + bf.size;
    for (const char *line = text; line < end; ) {
        const char *nl = line;
        while (nl < end && *nl != '\n')
            nl++;
        if (!strncmp(line, "endpoint ", 9) && nendpoints < MAX_ENDPOINTS) {
            size_t len = MIN((size_t)(nl - line - 9), sizeof(endpoints[0].name) - 1);
            memcpy(endpoints[nendpoints].name, line + 9, len);
            endpoints[nendpoints].handle = (uint32_t)sys_endpoint_create();
            nendpoints++;
        } else if (!strncmp(line, "service ", 8)) {
            start_service(line + 8, parent);
        } else if (!strncmp(line, "program ", 8)) {
            start_program(line + 8, parent);
        }
        line = nl + 1;
    }
    return nprograms;
}

int main(const struct petrel_bootinfo *bi)
{
    if (bi->magic != PETREL_BOOTINFO_MAGIC) {
        puts("root: boot information page missing");
        return 1;
    }
    printf("Hello from the Petrel root task: EL0 on a %s, %u cores online, %lu MiB RAM, GICv%u.\n",
           bi->cpu_name, bi->ncpus, (unsigned long)(bi->mem_bytes >> 20), bi->gic_version);
    printf("root: %lu KiB free, tick %u Hz, %u files in the boot image\n",
           (unsigned long)(bi->free_bytes >> 10), bi->tick_hz, bi->nfiles);
    parent_ep = (uint32_t)sys_endpoint_create();
    unsigned n = run_manifest(parent_ep);
    for (unsigned left = n; left > 0; ) {
        struct petrel_msg m = { 0 };
        if (sys_ipc_recv(parent_ep, &m) != 0)
            break;
        if (MSG_LABEL(m.info) == LABEL_FAULT && (m.badge & ~0xffull) == BADGE_SERVICE &&
            (m.badge & 0xff) < nservices) {
            restart(&services[m.badge & 0xff], &m);
        } else if (MSG_LABEL(m.info) == LABEL_EXIT) {
            printf("root: %s exited with status %ld\n", name_of(m.pid), (long)m.mr[0]);
            left--;
        }
    }
    if (n)
        printf("root: all %u programs have exited\n", n);
    return 0;
}
