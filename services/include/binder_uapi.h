/*
 * The part of Linux's binder UAPI (linux/android/binder.h, protocol 8)
 * that Petrel knows, written out once: the personality's /dev/binder
 * (services/linux/binder.c) and the static programs that use it on
 * Linux and on Petrel (tests/linux/binder*.c, bench/linux/binder_rtt.h).
 * Only <stdint.h>: it builds in the kernel, in services and with musl.
 */
#ifndef PETREL_BINDER_UAPI_H
#define PETREL_BINDER_UAPI_H

#include <stdint.h>

#define BINDER_IOC(dir, type, nr, size) ((uint32_t)(dir) << 30 | (uint32_t)(size) << 16 | (uint32_t)(type) << 8 | (uint32_t)(nr))
#define BINDER_IOC_SIZE(cmd)   (((cmd) >> 16) & 0x3fff)

struct binder_write_read { uint64_t write_size, write_consumed, write_buffer, read_size, read_consumed, read_buffer; };
struct binder_transaction_data {
    uint64_t target, cookie;
    uint32_t code, flags;
    int32_t sender_pid;
    uint32_t sender_euid;
    uint64_t data_size, offsets_size, buffer, offsets;
};
struct binder_transaction_data_sg { struct binder_transaction_data tr; uint64_t buffers_size; };

#define BINDER_WRITE_READ           BINDER_IOC(3, 'b', 1, sizeof(struct binder_write_read))
#define BINDER_SET_IDLE_TIMEOUT     BINDER_IOC(1, 'b', 3, 8)
#define BINDER_SET_MAX_THREADS      BINDER_IOC(1, 'b', 5, 4)
#define BINDER_SET_IDLE_PRIORITY    BINDER_IOC(1, 'b', 6, 4)
#define BINDER_SET_CONTEXT_MGR      BINDER_IOC(1, 'b', 7, 4)
#define BINDER_THREAD_EXIT          BINDER_IOC(1, 'b', 8, 4)
#define BINDER_VERSION              BINDER_IOC(3, 'b', 9, 4)
#define BINDER_SET_CONTEXT_MGR_EXT  BINDER_IOC(1, 'b', 13, 24)
#define BINDER_ENABLE_ONEWAY_SPAM_DETECTION BINDER_IOC(1, 'b', 16, 4)
#define BINDER_PROTOCOL_VERSION     8

#define BC_TRANSACTION              BINDER_IOC(1, 'c', 0, sizeof(struct binder_transaction_data))
#define BC_REPLY                    BINDER_IOC(1, 'c', 1, sizeof(struct binder_transaction_data))
#define BC_ACQUIRE_RESULT           BINDER_IOC(1, 'c', 2, 4)
#define BC_FREE_BUFFER              BINDER_IOC(1, 'c', 3, 8)
#define BC_INCREFS                  BINDER_IOC(1, 'c', 4, 4)
#define BC_ACQUIRE                  BINDER_IOC(1, 'c', 5, 4)
#define BC_RELEASE                  BINDER_IOC(1, 'c', 6, 4)
#define BC_DECREFS                  BINDER_IOC(1, 'c', 7, 4)
#define BC_INCREFS_DONE             BINDER_IOC(1, 'c', 8, 16)
#define BC_ACQUIRE_DONE             BINDER_IOC(1, 'c', 9, 16)
#define BC_ATTEMPT_ACQUIRE          BINDER_IOC(1, 'c', 10, 8)
#define BC_REGISTER_LOOPER          BINDER_IOC(0, 'c', 11, 0)
#define BC_ENTER_LOOPER             BINDER_IOC(0, 'c', 12, 0)
#define BC_EXIT_LOOPER              BINDER_IOC(0, 'c', 13, 0)
#define BC_REQUEST_DEATH_NOTIFICATION BINDER_IOC(1, 'c', 14, 12)
#define BC_CLEAR_DEATH_NOTIFICATION BINDER_IOC(1, 'c', 15, 12)
#define BC_DEAD_BINDER_DONE         BINDER_IOC(1, 'c', 16, 8)
#define BC_TRANSACTION_SG           BINDER_IOC(1, 'c', 17, sizeof(struct binder_transaction_data_sg))
#define BC_REPLY_SG                 BINDER_IOC(1, 'c', 18, sizeof(struct binder_transaction_data_sg))

#define BR_OK                       BINDER_IOC(0, 'r', 1, 0)
#define BR_INCREFS                  BINDER_IOC(2, 'r', 7, 16)
#define BR_ACQUIRE                  BINDER_IOC(2, 'r', 8, 16)
#define BR_RELEASE                  BINDER_IOC(2, 'r', 9, 16)
#define BR_DECREFS                  BINDER_IOC(2, 'r', 10, 16)
#define BR_DEAD_BINDER              BINDER_IOC(2, 'r', 15, 8)
#define BR_CLEAR_DEATH_NOTIFICATION_DONE BINDER_IOC(2, 'r', 16, 8)
#define BR_TRANSACTION              BINDER_IOC(2, 'r', 2, sizeof(struct binder_transaction_data))
#define BR_REPLY                    BINDER_IOC(2, 'r', 3, sizeof(struct binder_transaction_data))
#define BR_DEAD_REPLY               BINDER_IOC(0, 'r', 5, 0)
#define BR_TRANSACTION_COMPLETE     BINDER_IOC(0, 'r', 6, 0)
#define BR_NOOP                     BINDER_IOC(0, 'r', 12, 0)
#define BR_SPAWN_LOOPER             BINDER_IOC(0, 'r', 13, 0)
#define BR_FAILED_REPLY             BINDER_IOC(0, 'r', 17, 0)
#define BR_FROZEN_REPLY             BINDER_IOC(0, 'r', 18, 0)
#define BR_ONEWAY_SPAM_SUSPECT      BINDER_IOC(0, 'r', 19, 0)

#define TF_ONE_WAY                  0x01

#define BINDER_PACK(a, b, c, d)            ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (uint32_t)(d))
#define BINDER_TYPE_BINDER          BINDER_PACK('s', 'b', '*', 0x85)
#define BINDER_TYPE_WEAK_BINDER     BINDER_PACK('w', 'b', '*', 0x85)
#define BINDER_TYPE_HANDLE          BINDER_PACK('s', 'h', '*', 0x85)
#define BINDER_TYPE_WEAK_HANDLE     BINDER_PACK('w', 'h', '*', 0x85)
#define BINDER_TYPE_FD              BINDER_PACK('f', 'd', '*', 0x85)
#define FLAT_BINDER_FLAG_ACCEPTS_FDS 0x100
#define TF_ACCEPT_FDS               0x10
/* (24 bytes: a binder's ptr, a handle or a descriptor in the low half of `binder`) */
struct flat_binder_object { uint32_t type, flags; uint64_t binder, cookie; };
/* Scatter-gather (BC_TRANSACTION_SG, BC_REPLY_SG): a buffer of the sender's
 * copied into the receiver's (40 bytes), and descriptors in such a buffer
 * (32 bytes). */
#define BINDER_TYPE_PTR             BINDER_PACK('p', 't', '*', 0x85)
#define BINDER_TYPE_FDA             BINDER_PACK('f', 'd', 'a', 0x85)
#define BINDER_BUFFER_FLAG_HAS_PARENT 0x01
struct binder_buffer_object { uint32_t type, flags; uint64_t buffer, length, parent, parent_offset; };
struct binder_fd_array_object { uint32_t type, pad; uint64_t num_fds, parent, parent_offset; };

struct binder_node_debug_info { uint64_t ptr, cookie; uint32_t has_strong_ref, has_weak_ref; };
struct binder_node_info_for_ref { uint32_t handle, strong_count, weak_count, reserved1, reserved2, reserved3; };
struct binder_extended_error { uint32_t id, command; int32_t param; };
#define BINDER_GET_NODE_DEBUG_INFO  BINDER_IOC(3, 'b', 11, sizeof(struct binder_node_debug_info))
#define BINDER_GET_NODE_INFO_FOR_REF BINDER_IOC(3, 'b', 12, sizeof(struct binder_node_info_for_ref))
#define BINDER_GET_EXTENDED_ERROR   BINDER_IOC(3, 'b', 17, sizeof(struct binder_extended_error))
/* Freezing a process's binder (Linux 5.13 on): calls to it fail with
 * BR_FROZEN_REPLY, one-way calls wait; what came meanwhile is reported. */
struct binder_freeze_info { uint32_t pid, enable, timeout_ms; };
struct binder_frozen_status_info { uint32_t pid, sync_recv, async_recv; };
#define BINDER_FREEZE               BINDER_IOC(1, 'b', 14, sizeof(struct binder_freeze_info))
#define BINDER_GET_FROZEN_INFO      BINDER_IOC(3, 'b', 15, sizeof(struct binder_frozen_status_info))

#endif
