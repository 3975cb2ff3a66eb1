/*
 * The Internet checksum (RFC 1071), as IPv4, ICMP, UDP and TCP use it.
 * Summed eight bytes at a time: the network stack computes it over every
 * byte it sends and receives, so its cost per byte is the stack's.
 */
#ifndef PETREL_INET_CSUM_H
#define PETREL_INET_CSUM_H

#include <stdint.h>

/* The checksum of p[0..len) with `sum` (a pseudo-header's partial sum of
 * 16-bit values in network order) added, complemented: the value to store
 * in the header (in network order), and 0 over data that holds its own
 * correct checksum. Any alignment of p; a little-endian machine. */
uint16_t inet_checksum(const uint8_t *p, uint32_t len, uint32_t sum);

#endif
