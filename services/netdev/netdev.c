/*
 * The network device service (idl/netdev.toml): whole Ethernet frames
 * between its clients and the machine's virtio-net device, driven by
 * services/common/virtio_net.c, placed in the kernel or in user space by
 * the system description.
 *
 * Received frames stay in the device's receive ring, where the device
 * wrote them, until a client's `recv` copies the oldest out; `send`
 * copies a frame into a free transmit buffer. The driver asks for an
 * interrupt only while a client waits (`wait`), for the kind it waits for.
 */
#include "netdev_if.h"
#include "virtio_net.h"

static struct vnet nic;
static svc_token waiter;
static uint32_t waiting_for;            /* VNET_WANT_FRAME or VNET_WANT_ROOM */

static void interrupt(void)
{
    vnet_irq_ack(&nic);
    if (waiter && vnet_arm(&nic, waiting_for)) {        /* what it waits for is there: answer it */
        svc_token t = waiter;
        waiter = 0;
        waiting_for = 0;
        vnet_arm(&nic, 0);
        netdev_wait_reply(t, 0);
    }
    svc_irq_done(nic.irq);
}

/* Bring the device up at the first request (as the console does). */
static int ready(void) { return vnet_open(&nic, interrupt); }

static int64_t info(struct svc_call *call, uint64_t *mac_out, uint32_t *frame_max, uint32_t *link)
{
    int err = ready();
    if (err)
        return err;
    uint64_t m = 0;
    for (unsigned i = 0; i < 6; i++)
        m |= (uint64_t)nic.mac[i] << (8 * i);
    *mac_out = m;
    *frame_max = VNET_FRAME_MAX;
    *link = (uint32_t)vnet_link_up(&nic);
    return 0;
}

static int64_t send(struct svc_call *call, uint64_t frame, uint64_t frame_len)
{
    int err = ready();
    if (err)
        return err;
    if (frame_len < VNET_FRAME_MIN || frame_len > VNET_FRAME_MAX)
        return SVC_E_INVAL;
    uint8_t *buf = vnet_tx_buf(&nic);
    if (!buf)
        return SVC_E_AGAIN;
    if (svc_copy_in(call, buf, frame, frame_len))
        return SVC_E_FAULT;
    vnet_tx_commit(&nic, (uint32_t)frame_len);
    return 0;
}

static int64_t recv(struct svc_call *call, uint64_t buf, uint64_t buf_len, uint64_t *count)
{
    int err = ready();
    if (err)
        return err;
    if (buf_len < VNET_FRAME_MAX)
        return SVC_E_INVAL;
    uint32_t len;
    const uint8_t *frame = vnet_rx_peek(&nic, &len);
    if (!frame)
        return SVC_E_AGAIN;
    if (svc_copy_out(call, buf, frame, len) != 0)
        return SVC_E_FAULT;                             /* the frame stays for the next recv */
    vnet_rx_done(&nic);
    *count = len;
    return 0;
}

static int64_t wait(struct svc_call *call, uint32_t what)
{
    int err = ready();
    if (err)
        return err;
    if (what != VNET_WANT_FRAME && what != VNET_WANT_ROOM)
        return SVC_E_INVAL;
    if (waiter) {
        /* (only a look: the waiter's interrupt stays asked for) */
        int there = what == VNET_WANT_FRAME ? vnet_rx_peek(&nic, &(uint32_t){0}) != NULL : vnet_tx_buf(&nic) != NULL;
        return there ? 0 : SVC_E_BUSY;
    }
    /* Ask for the interrupt first, then look: what comes after the look
     * raises it (its handler runs after this request, in either
     * placement), what came before is seen here. */
    if (vnet_arm(&nic, what)) {
        vnet_arm(&nic, 0);
        return 0;
    }
    waiter = svc_defer(call);
    if (!waiter) {
        vnet_arm(&nic, 0);
        return SVC_E_NOMEM;
    }
    waiting_for = what;
    return SVC_DEFERRED;
}

static int64_t stats(struct svc_call *call, uint64_t *txf, uint64_t *txb, uint64_t *rxf, uint64_t *rxb, uint64_t *ints)
{
    int err = ready();
    if (err)
        return err;
    *txf = nic.tx_frames;
    *txb = nic.tx_bytes;
    *rxf = nic.rx_frames;
    *rxb = nic.rx_bytes;
    *ints = nic.interrupts;
    return 0;
}

/* The handlers: the generated skeleton (netdev_service, netdev_fast) calls them. */
const struct netdev_ops netdev_ops = { info, send, recv, wait, stats };
