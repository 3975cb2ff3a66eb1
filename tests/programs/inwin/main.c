/*
 * inwin: a native application with a window on the screen, for the input
 * dispatcher's clicks (services/inputd, systems/input-window.toml). It
 * makes an endpoint it keeps receiving on, places its window (`window=`
 * left,top,width,height) with a token of that endpoint, says "NAME:
 * ready", and prints each event the dispatcher hands it ("NAME: key CODE
 * VALUE", "NAME: abs AXIS VALUE", "NAME: syn", "NAME: focus 1" or 0)
 * until the release of the key `quit=` (a Linux key code); then how many
 * clicks (left-button presses) and key presses it had and how often it
 * gained and lost the focus, and exits with status 0, having closed its
 * endpoint first: the token's endpoint is dead once it says so.
 *
 * With `checks=1` it first has the dispatcher refuse bad windows: a token
 * that receives (R_READ), one that is no endpoint, a window too large.
 */
#include "petrel.h"
#include "inputd_if.h"

static unsigned number(const char *text, unsigned *n)
{
    unsigned i = 0;
    *n = 0;
    for (; text[i] >= '0' && text[i] <= '9'; i++)
        *n = *n * 10 + (unsigned)(text[i] - '0');
    return i;
}

/* `window=L,T,W,H`: 1 if all four are there. */
static int window_arg(unsigned w[4])
{
    char arg[48] = "";
    if (!start_arg("window", arg, sizeof(arg)))
        return 0;
    const char *p = arg;
    for (unsigned i = 0; i < 4; i++) {
        unsigned used = number(p, &w[i]);
        if (!used || (i < 3 && p[used] != ',') || (i == 3 && p[used]))
            return 0;
        p += used + 1;
    }
    return 1;
}

static void checks(const char *name, uint32_t h, uint32_t ep)
{
    int64_t reader = sys_handle_dup(ep, R_READ | R_WRITE | R_GRANT, 0);
    int64_t note = sys_notify_create();
    int64_t writer = sys_handle_dup(ep, R_WRITE | R_GRANT, 0);
    int64_t a = reader > 0 ? inputd_window(h, (uint32_t)reader, 0, 0, 10, 10) : reader;
    int64_t b = note > 0 ? inputd_window(h, (uint32_t)note, 0, 0, 10, 10) : note;
    int64_t c = writer > 0 ? inputd_window(h, (uint32_t)writer, 0, 0, 70000, 10) : writer;
    printf("%s: a receiving token: %s, a notification: %s, a window too wide: %s\n", name, error_str(a),
           error_str(b), error_str(c));
    for (int64_t x = reader, i = 0; i < 3; x = i == 0 ? note : writer, i++)
        if (x > 0)
            sys_handle_close((uint32_t)x);
}

int main(void)
{
    char name[16] = "app", arg[16] = "";
    start_arg("name", name, sizeof(name));
    unsigned quit = 16, win[4];
    if (start_arg("quit", arg, sizeof(arg)))
        number(arg, &quit);
    uint32_t h = start_handle("inputd");
    int64_t ep = sys_endpoint_create();
    if (!h || ep <= 0 || !window_arg(win)) {
        printf("%s: needs inputd, an endpoint and window=L,T,W,H\n", name);
        return 1;
    }
    if (start_arg("checks", arg, sizeof(arg)) && arg[0] == '1')
        checks(name, h, (uint32_t)ep);
    int64_t token = sys_handle_dup((uint32_t)ep, R_WRITE | R_GRANT, 0);
    int64_t err = token > 0 ? inputd_window(h, (uint32_t)token, win[0], win[1], win[2], win[3]) : token;
    if (err) {
        printf("%s: window: %s\n", name, error_str(err));
        return 1;
    }
    printf("%s: ready\n", name);
    unsigned clicks = 0, keys = 0, gained = 0, lost = 0;
    for (;;) {
        uint32_t type, code, value;
        uint64_t irq, dispatched;
        err = inputd_wait(h, &type, &code, &value, &irq, &dispatched);
        if (err) {
            printf("%s: wait: %s\n", name, error_str(err));
            return 1;
        }
        if (type == 1)
            printf("%s: key %u %u\n", name, code, value);
        else if (type == 3)
            printf("%s: abs %u %u\n", name, code, value);
        else if (type == 0x20)
            printf("%s: focus %u\n", name, value);
        else
            printf("%s: syn\n", name);
        clicks += type == 1 && code == 0x110 && value == 1;
        keys += type == 1 && code < 0x100 && value == 1;
        gained += type == 0x20 && value == 1;
        lost += type == 0x20 && value == 0;
        if (type == 1 && code == quit && value == 0)
            break;
    }
    sys_handle_close((uint32_t)ep);             /* (the endpoint dies now, before the line below) */
    printf("%s: %u clicks, %u key presses, the focus gained %u times and lost %u\n", name, clicks, keys, gained,
           lost);
    return 0;
}
