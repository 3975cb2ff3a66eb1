/*
 * notes: the android-demo system's native application (systems/
 * android-demo.toml). It draws its panel straight into the display
 * service's framebuffer (shared memory: idl/display.toml), on the part of
 * the screen `window=` names (default the left half), places that window
 * with the input dispatcher (idl/inputd.toml), and takes its events from
 * it over IPC: keys type into the panel while it has the focus, a click
 * in its window puts a square where it fell and gives it the focus, and
 * its frame turns yellow while it has it (the dispatcher's focus events).
 * Escape ends it: it closes its window's endpoint, which takes the window
 * away, and the focus passes to the next application. It prints each event it acts on.
 */
#include "petrel.h"
#include "display_if.h"
#include "inputd_if.h"
#include "draw.h"

#define EV_SYN      0
#define EV_KEY      1
#define EV_ABS      3
#define EV_FOCUS    0x20
#define BTN_LEFT    0x110
#define KEY_ESC     1

static unsigned number(const char **p)
{
    unsigned n = 0;
    for (; **p >= '0' && **p <= '9'; (*p)++)
        n = n * 10 + (unsigned)(**p - '0');
    return n;
}

int main(void)
{
    uint32_t in = start_handle("inputd"), disp = start_handle("display");
    uint32_t w, h, stride, fb;
    uint64_t screen, size, frame;
    int64_t err = !in || !disp ? -E_NOENT : display_info(disp, &w, &h, &stride, &screen);
    if (!err)
        err = display_framebuffer(disp, &fb, &size);
    uint64_t va = err ? 0 : va_alloc(size, 4096);
    if (!err)
        err = sys_mem_map(self_space(), fb, va, 0, size, R_READ | R_WRITE);
    if (err) {
        printf("notes: no screen: %s\n", error_str(err));
        return 1;
    }
    struct canvas cv = { (uint32_t *)va, w, h, stride / 4 };
    struct panel p = { .x = 0, .y = 0, .w = (int)w / 2, .h = (int)h, .title = "NATIVE APP",
                       .background = 0x00203050u, .frame = 0x00606060u, .focused_frame = 0x00ffd000u };
    char arg[48];
    if (start_arg("window", arg, sizeof(arg))) {
        const char *q = arg;
        int v[4];
        for (int i = 0; i < 4; i++) {
            v[i] = (int)number(&q);
            q += *q == ',';
        }
        p.x = v[0], p.y = v[1], p.w = v[2], p.h = v[3];
    }
    int64_t ep = sys_endpoint_create();
    int64_t token = ep > 0 ? sys_handle_dup((uint32_t)ep, R_WRITE | R_GRANT, 0) : ep;
    err = token > 0 ? inputd_window(in, (uint32_t)token, (uint32_t)p.x, (uint32_t)p.y, (uint32_t)p.w, (uint32_t)p.h)
                    : token;
    if (err) {
        printf("notes: no window: %s\n", error_str(err));
        return 1;
    }
    panel_draw(&cv, &p);
    display_flush(disp, (uint32_t)p.x, (uint32_t)p.y, (uint32_t)p.w, (uint32_t)p.h, &frame);
    printf("notes: ready\n");
    int at[2] = { 0, 0 }, changed = 0;
    for (;;) {
        uint32_t type, code, value;
        uint64_t irq, dispatched;
        err = inputd_wait(in, &type, &code, &value, &irq, &dispatched);
        if (err) {
            printf("notes: wait: %s\n", error_str(err));
            return 1;
        }
        if (type == EV_FOCUS) {
            p.focused = value != 0;
            printf("notes: focus %u\n", value);
            changed = 1;
        } else if (type == EV_ABS && code <= 1) {
            at[code] = (int)value;              /* (from the window's corner) */
        } else if (type == EV_KEY && code == BTN_LEFT && value == 1) {
            printf("notes: click %d %d\n", at[0], at[1]);
            panel_click(&p, p.x + at[0], p.y + at[1]);
            changed = 1;
        } else if (type == EV_KEY && code == KEY_ESC && value == 1) {
            break;
        } else if (type == EV_KEY && code < BTN_LEFT && value == 1) {
            char ch = draw_key_char(code);
            printf("notes: key %u %c\n", code, ch ? ch : '?');
            panel_key(&p, code);
            changed = 1;                        /* (the count of keys, at least) */
        }
        if (changed && (type == EV_SYN || type == EV_FOCUS)) {
            panel_draw(&cv, &p);
            display_flush(disp, (uint32_t)p.x, (uint32_t)p.y, (uint32_t)p.w, (uint32_t)p.h, &frame);
            changed = 0;
        }
    }
    /* The window goes now, not when the process is torn down after it
     * exits: the dispatcher finds its endpoint dead at the next event. */
    sys_handle_close((uint32_t)ep);
    printf("notes: %u keys, %u clicks: bye\n", p.keys, p.clicks);
    return 0;
}
