/*
 * The network stack's counters in the layout of Linux's /proc/net/snmp
 * (RFC 4293's IP and ICMP groups, RFC 4022's TCP, RFC 4113's UDP, as Linux
 * keeps them): what the stack's `snmp` method (idl/net.toml) writes, one
 * u64 each in this order, and what the personality prints. A counter of
 * Linux's that is not here (Forwarding, DefaultTTL, the TCP RTO
 * constants, UdpLite) is a constant, or 0 on a host that does not
 * forward and has no UDP-Lite. The named ICMP counters (InDestUnreachs
 * and the rest) are the per-type ones below, as Linux prints them.
 */
#ifndef PETREL_NET_MIB_H
#define PETREL_NET_MIB_H

enum net_mib {
    /* Ip */
    MIB_IP_IN_RECEIVES,         /* every datagram received, bad ones too */
    MIB_IP_IN_HDR_ERRORS,       /* a bad header: version, length, checksum */
    MIB_IP_IN_ADDR_ERRORS,      /* not for this host (it forwards nothing), or a martian source */
    MIB_IP_IN_UNKNOWN_PROTOS,   /* for this host, of a protocol it does not speak */
    MIB_IP_IN_DELIVERS,         /* given to ICMP, UDP or TCP (a reassembled one once) */
    MIB_IP_OUT_REQUESTS,        /* datagrams sent (before fragmenting) */
    MIB_IP_OUT_DISCARDS,        /* not sent: no room in the NIC, no memory to wait for ARP */
    MIB_IP_OUT_NO_ROUTES,       /* not sent: no route (no address yet, or off the subnet with no gateway) */
    MIB_IP_REASM_TIMEOUT,       /* datagrams whose fragments stopped coming */
    MIB_IP_REASM_REQDS,         /* fragments received */
    MIB_IP_REASM_OKS,           /* datagrams reassembled */
    MIB_IP_REASM_FAILS,         /* datagrams given up (timed out, overlapping, too long, evicted) */
    MIB_IP_FRAG_OKS,            /* datagrams sent in fragments */
    MIB_IP_FRAG_CREATES,        /* fragments sent */
    /* Icmp */
    MIB_ICMP_IN_MSGS,           /* every message received, bad ones too */
    MIB_ICMP_IN_ERRORS,         /* too short or a bad checksum */
    MIB_ICMP_IN_CSUM_ERRORS,    /* a bad checksum */
    MIB_ICMP_OUT_MSGS,          /* every message sent */
    MIB_ICMP_OUT_ERRORS,        /* not sent */
    /* Tcp */
    MIB_TCP_ACTIVE_OPENS,       /* CLOSED to SYN-SENT: connect */
    MIB_TCP_PASSIVE_OPENS,      /* a listener's connection established (Linux counts its child socket) */
    MIB_TCP_ATTEMPT_FAILS,      /* SYN-SENT or SYN-RECEIVED to CLOSED */
    MIB_TCP_ESTAB_RESETS,       /* ESTABLISHED or CLOSE-WAIT to CLOSED */
    MIB_TCP_CURR_ESTAB,         /* ESTABLISHED or CLOSE-WAIT now (a gauge, filled in by `snmp`) */
    MIB_TCP_IN_SEGS,            /* every segment received, bad ones too */
    MIB_TCP_OUT_SEGS,           /* every segment sent, retransmissions and RSTs too (as Linux counts) */
    MIB_TCP_RETRANS_SEGS,       /* segments sent again */
    MIB_TCP_IN_ERRS,            /* too short, a bad offset or a bad checksum */
    MIB_TCP_OUT_RSTS,           /* segments sent with RST */
    MIB_TCP_IN_CSUM_ERRORS,     /* a bad checksum */
    /* Udp */
    MIB_UDP_IN_DATAGRAMS,       /* read from a socket (not peeked), or taken by the DHCP client */
    MIB_UDP_NO_PORTS,           /* no socket on the port */
    MIB_UDP_IN_ERRORS,          /* bad length or checksum, or the socket's queue full */
    MIB_UDP_OUT_DATAGRAMS,      /* sent */
    MIB_UDP_RCVBUF_ERRORS,      /* the socket's queue full */
    MIB_UDP_SNDBUF_ERRORS,      /* not sent: no room */
    MIB_UDP_IN_CSUM_ERRORS,     /* a bad checksum */
    MIB_UDP_IGNORED_MULTI,      /* broadcast, with no socket on the port */
    /* IcmpMsg: messages received and sent, by type */
    MIB_ICMP_IN_TYPE,                           /* + type, 0 to 255 */
    MIB_ICMP_OUT_TYPE = MIB_ICMP_IN_TYPE + 256, /* + type */
    NET_MIB_COUNT = MIB_ICMP_OUT_TYPE + 256
};

#endif
