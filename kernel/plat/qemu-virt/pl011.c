/*
 * ARM PL011 UART: the kernel console. Output only, polled; line input by
 * interrupt belongs to the console service.
 */
#include "kernel.h"
#include "platform.h"

#define UART_DR     0x00
#define UART_FR     0x18
#define UART_LCRH   0x2c
#define UART_CR     0x30
#define UART_IMSC   0x38
#define FR_TXFF     (1 << 5)

static volatile uint32_t *uart;

static inline volatile uint32_t *reg(unsigned off) { return uart + off / 4; }

/* Put one byte, waiting while the transmit FIFO is full. */
static void pl011_putc(char c)
{
    while (*reg(UART_FR) & FR_TXFF)
        ;
    *reg(UART_DR) = (uint8_t)c;
}

/*
 * Take over the UART at va: 8N1, transmit and receive on. The FIFOs stay
 * as they are: switching them on or off empties the receive FIFO, which
 * would lose what was typed before the kernel started.
 */
void pl011_init(void *va)
{
    uart = va;
    *reg(UART_CR) = 0;
    *reg(UART_IMSC) = 0;
    *reg(UART_LCRH) = (3 << 5) | (*reg(UART_LCRH) & (1 << 4));
    *reg(UART_CR) = (1 << 0) | (1 << 8) | (1 << 9);
    console_set_output(pl011_putc);
}

/* Write to a UART another kernel took over (K2's shadow kernel). */
void pl011_attach(void *va)
{
    uart = va;
    console_set_output(pl011_putc);
}
