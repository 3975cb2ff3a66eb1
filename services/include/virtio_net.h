/*
 * A virtio-net device on a modern virtio-mmio transport (services/common/
 * virtio_net.c): the driver that the network device service (services/netdev)
 * and the network stack (services/net) both drive their NIC with.
 *
 * The caller owns a struct vnet (one per device) and calls in from its
 * requests and its interrupt handler: the driver keeps no state of its own.
 * Frames are moved without the virtio_net_hdr: vnet_tx_buf gives the next
 * transmit buffer to fill, vnet_tx_commit sends it; vnet_rx_peek shows the
 * oldest received frame where the device wrote it, vnet_rx_done gives its
 * buffer back to the device.
 */
#ifndef VIRTIO_NET_H
#define VIRTIO_NET_H

#include <stdint.h>

#define VNET_RING_SIZE  64u             /* descriptors per queue (a power of two) */
#define VNET_FRAME_MIN  14u             /* an Ethernet header */
#define VNET_FRAME_MAX  1514u           /* without the FCS */

#define VNET_WANT_FRAME 1u              /* vnet_arm: an interrupt when a frame arrives */
#define VNET_WANT_ROOM  2u              /*           when a transmit buffer comes back */

struct vnet_queue {
    volatile struct vnet_desc *desc;
    volatile uint16_t *avail;           /* flags, idx, ring[VNET_RING_SIZE], used_event */
    volatile uint16_t *used;            /* flags, idx, ring[VNET_RING_SIZE] of used_elem, avail_event */
    uint8_t *buf[VNET_RING_SIZE];
    uint16_t avail_idx;                 /* the next avail slot the driver fills */
    uint16_t used_seen;                 /* used entries taken so far */
    uint16_t kicked;                    /* avail_idx at the last notify */
    uint16_t nfree;                     /* transmit: descriptors the device does not hold, */
    uint16_t free[VNET_RING_SIZE];      /* and which (the device may give them back in any order) */
};

struct vnet {
    volatile uint32_t *regs;
    uint32_t irq;
    int state;                          /* 0 until vnet_open, 1 running, or the error it failed with */
    uint64_t features;
    uint8_t mac[6];
    struct vnet_queue q[2];             /* 0 receives, 1 transmits */
    uint64_t tx_frames, tx_bytes, rx_frames, rx_bytes, rx_dropped, interrupts;
};

/* Find the machine's virtio-net device, start it and attach `handler` to
 * its interrupt; 0 or an SVC_E_ error (E_NOENT: the machine has none). Once
 * only: later calls answer what the first one did. */
int vnet_open(struct vnet *v, void (*handler)(void));
/* Is the link up (devices that do not say are always up)? */
int vnet_link_up(struct vnet *v);
/* The buffer to build the next frame in (VNET_FRAME_MAX bytes), or NULL
 * when every transmit buffer is with the device. */
uint8_t *vnet_tx_buf(struct vnet *v);
/* How many frames may be sent now (transmit buffers the device is not
 * holding): a caller that must send several or none asks first. */
unsigned vnet_tx_room(struct vnet *v);
/* Send the frame of `len` bytes built in vnet_tx_buf's buffer. */
void vnet_tx_commit(struct vnet *v, uint32_t len);
/* The oldest received frame and its length, or NULL if none waits.
 * Runts and giants are dropped (counted in rx_dropped) on the way. */
const uint8_t *vnet_rx_peek(struct vnet *v, uint32_t *len);
/* Give the frame vnet_rx_peek showed back to the device. */
void vnet_rx_done(struct vnet *v);
/* Ask for an interrupt at the next event of the kinds in `want`
 * (VNET_WANT_FRAME | VNET_WANT_ROOM, or 0: none), then look: answers
 * whether one of them is there already: then no interrupt may come for
 * it, and the caller takes what is there and arms again (an event index
 * left behind what was taken silences the device). */
int vnet_arm(struct vnet *v, unsigned want);
/* From the interrupt handler: acknowledge the device's interrupt. */
void vnet_irq_ack(struct vnet *v);

#endif
