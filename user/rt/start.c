/* Start information, handles by name, arguments and exit. */
#include "petrel.h"
#include "petrel_rt.h"

static const struct petrel_startinfo *si;
static const struct petrel_bootinfo *bi;

void rt_init(const void *info)
{
    const uint64_t *magic = info;
    if (magic && *magic == PETREL_STARTINFO_MAGIC)
        si = info;
    else if (magic && *magic == PETREL_BOOTINFO_MAGIC)
        bi = info;
}

const struct petrel_startinfo *startinfo(void) { return si; }

uint32_t start_handle(const char *name)
{
    for (uint32_t i = 0; si && i < si->nhandles && i < STARTINFO_HANDLES; i++)
        if (strcmp(si->handles[i].name, name) == 0)
            return si->handles[i].value;
    return 0;
}

uint32_t self_space(void) { return si ? start_handle("space") : PETREL_SELF_SPACE; }
uint32_t self_thread(void) { return si ? start_handle("thread") : PETREL_SELF_THREAD; }
uint32_t root_handle(void) { return si ? start_handle("root") : PETREL_ROOT_HANDLE; }

bool start_arg(const char *key, char *val, size_t size)
{
    const char *p = si ? si->args : bi ? bi->cmdline : "";
    size_t klen = strlen(key);
    while (*p) {
        while (*p == ' ')
            p++;
        const char *w = p;
        while (*p && *p != ' ')
            p++;
        if ((size_t)(p - w) > klen && strncmp(w, key, klen) == 0 && w[klen] == '=') {
            size_t n = (size_t)(p - w) - klen - 1;
            if (n + 1 > size)
                return false;
            memcpy(val, w + klen + 1, n);
            val[n] = '\0';
            return true;
        }
    }
    return false;
}

/* The decimal number given as key=N, or dflt when there is none. */
uint64_t start_arg_u64(const char *key, uint64_t dflt)
{
    char s[24];
    if (!start_arg(key, s, sizeof(s)))
        return dflt;
    uint64_t v = 0;
    for (const char *p = s; *p >= '0' && *p <= '9'; p++)
        v = v * 10 + (uint64_t)(*p - '0');
    return v;
}

#define LABEL_EXIT 0x45584954   /* "EXIT" */

static void report_exit(int status)
{
    uint32_t parent = start_handle("parent");
    if (parent) {
        struct petrel_msg m = { MSG_INFO(LABEL_EXIT, 1, 0), { (uint64_t)(int64_t)status }, 0, 0 };
        sys_ipc_send(parent, &m);
    }
}

void exit(int status)
{
    report_exit(status);
    sys_thread_exit(status);
}

void exit_process(int status)
{
    report_exit(status);
    sys_space_kill(self_space());
    sys_thread_exit(status);            /* (not reached: the kill ends this thread too) */
}

const char *error_str(int64_t err)
{
    static const char *const names[] = {
        "E_OK", "E_INVAL", "E_FAULT", "E_NOMEM", "E_NOSYS", "E_NOENT", "E_RANGE", "E_BUSY",
        "E_PERM", "E_BADFORMAT", "E_TIMEOUT", "E_BADHANDLE", "E_AGAIN", "E_CLOSED", "E_STATE", "E_LIMIT",
        "E_IO",
    };
    if (err >= 0)
        return "ok";
    return (uint64_t)-err < sizeof(names) / sizeof(names[0]) ? names[-err] : "E_?";
}
