/*
 * The console service (idl/console.toml), written once against svc.h:
 * it drives the PL011 UART of the device tree. Output is written to the
 * transmit FIFO; input arrives by the receive interrupt, is echoed, and is
 * gathered into lines. A read_line with no complete line keeps its reply
 * (svc_defer) and is answered from the interrupt handler when the line
 * ends — the same code, inside the kernel or in a process.
 */
#include "console_if.h"
#include "pstring.h"

#define UART_DR     0x00
#define UART_FR     0x18
#define UART_IMSC   0x38
#define UART_ICR    0x44
#define FR_RXFE     (1u << 4)
#define FR_TXFF     (1u << 5)
#define IM_RX       (1u << 4)
#define IM_RT       (1u << 6)
#define LINE_MAX    120
#define LINES       8

static volatile uint32_t *uart;
static uint32_t irq;
static char lines[LINES][LINE_MAX];
static uint32_t lengths[LINES];
static unsigned head, count;            /* complete lines waiting */
static char typing[LINE_MAX];
static uint32_t typed;
static svc_token reader;

static inline volatile uint32_t *reg(unsigned off) { return uart + off / 4; }

static void put(char c)
{
    while (*reg(UART_FR) & FR_TXFF)
        ;
    *reg(UART_DR) = (uint8_t)c;
}

/* Give the waiting reader the oldest line, if both exist. */
static void serve_reader(void)
{
    if (!reader || !count)
        return;
    svc_token t = reader;
    reader = 0;
    unsigned i = head;
    head = (head + 1) % LINES;
    count--;
    console_read_line_reply(t, 0, (const uint8_t *)lines[i], lengths[i]);
}

/* The receive interrupt: drain the FIFO into the line being typed. The
 * interrupt is cleared first, so a character arriving after the last read
 * raises it again instead of being cleared unseen. */
static void received(void)
{
    *reg(UART_ICR) = IM_RX | IM_RT;
    while (!(*reg(UART_FR) & FR_RXFE)) {
        char c = (char)(*reg(UART_DR) & 0xff);
        if (c == '\r' || c == '\n') {
            put('\r');
            put('\n');
            if (count < LINES) {
                unsigned i = (head + count) % LINES;
                memcpy(lines[i], typing, typed);
                lengths[i] = typed;
                count++;
            }
            typed = 0;
        } else if ((c == 0x7f || c == 0x08) && typed) {
            typed--;
            put('\b');
            put(' ');
            put('\b');
        } else if (c >= 0x20 && c < 0x7f && typed < LINE_MAX) {
            typing[typed++] = c;
            put(c);
        }
    }
    serve_reader();
    svc_irq_done(irq);
}

static int ready(void)
{
    if (uart)
        return 0;
    volatile uint32_t *u = svc_device("arm,pl011", &irq);
    if (!u)
        return SVC_E_NOENT;
    uart = u;
    if (svc_irq_attach(irq, received) != 0) {
        uart = 0;
        return SVC_E_BUSY;
    }
    *reg(UART_IMSC) |= IM_RX | IM_RT;
    return 0;
}

/* At most this much per request: the service serves one request at a
 * time in either placement, and a UART is slow, so one client's long
 * print must not hold the others for long. The caller writes the rest
 * with further calls, as with write(2). */
#define PRINT_MAX   1024

static int64_t print(struct svc_call *call, uint64_t text, uint64_t text_len, uint64_t *written)
{
    char chunk[128];
    int err = ready();
    if (err)
        return err;
    if (text_len > PRINT_MAX)
        text_len = PRINT_MAX;
    for (uint64_t done = 0; done < text_len; ) {
        uint64_t n = text_len - done < sizeof(chunk) ? text_len - done : sizeof(chunk);
        if (svc_copy_in(call, chunk, text + done, n))
            return SVC_E_FAULT;
        for (uint64_t i = 0; i < n; i++) {
            if (chunk[i] == '\n')
                put('\r');
            put(chunk[i]);
        }
        done += n;
    }
    *written = text_len;
    return 0;
}

static int64_t read_line(struct svc_call *call, uint8_t *line, uint32_t *line_len)
{
    int err = ready();
    if (err)
        return err;
    if (count) {
        memcpy(line, lines[head], lengths[head]);
        *line_len = lengths[head];
        head = (head + 1) % LINES;
        count--;
        return 0;
    }
    if (reader)
        return SVC_E_BUSY;              /* one reader at a time */
    reader = svc_defer(call);
    return reader ? SVC_DEFERRED : SVC_E_NOMEM;
}

static int64_t pending(struct svc_call *call, uint32_t *n)
{
    int err = ready();
    *n = count;
    return err;
}

/* The handlers: the generated skeleton (console_service, console_fast) calls them. */
const struct console_ops console_ops = { print, read_line, pending };
