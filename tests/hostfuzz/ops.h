/*
 * The operations of the host fuzzer's input, in the order that numbers
 * them (an operation's byte modulo their count; mkseeds.py reads this list
 * to write the seeds). Each is decoded in fuzz_personality.c (op_NAME),
 * which says what its argument bytes mean. Add new ones at the end: the
 * numbers are the corpus's format.
 */
HF_OP(OPENAT)           /* path, flags: a file of the archive, a device, a directory, /proc */
HF_OP(OPEN_PROC_FD)     /* whose, fd, flags: /proc/self/fd/N or /proc/PID/fd/N (reopen, O_PATH) */
HF_OP(CLOSE)            /* fd */
HF_OP(READ)             /* fd, length */
HF_OP(WRITE)            /* fd, length */
HF_OP(PIPE2)            /* flags */
HF_OP(DUP)              /* fd */
HF_OP(DUP3)             /* fd, new fd, flags */
HF_OP(FCNTL)            /* fd, command, argument */
HF_OP(SOCKETPAIR)       /* type */
HF_OP(SOCKET)           /* type */
HF_OP(BIND)             /* fd, address */
HF_OP(LISTEN)           /* fd, backlog */
HF_OP(CONNECT)          /* fd, address */
HF_OP(ACCEPT4)          /* fd, flags */
HF_OP(SENDMSG)          /* fd, length, count of descriptors, the descriptors, flags */
HF_OP(RECVMSG)          /* fd, length, room for descriptors, flags */
HF_OP(SHUTDOWN)         /* fd, how */
HF_OP(EPOLL_CREATE1)    /* flags */
HF_OP(EPOLL_CTL)        /* epoll fd, operation, fd, events */
HF_OP(EPOLL_PWAIT)      /* epoll fd, most events, timeout */
HF_OP(EVENTFD2)         /* initial value, flags */
HF_OP(FORK)             /* - */
HF_OP(VFORK)            /* - */
HF_OP(THREAD)           /* stack */
HF_OP(EXIT)             /* status */
HF_OP(EXIT_GROUP)       /* status */
HF_OP(KILL)             /* pid, signal */
HF_OP(TGKILL)           /* pid, tid, signal */
HF_OP(WAIT4)            /* pid, options */
HF_OP(CLOSE_RANGE)      /* first, count, flags */
HF_OP(MMAP)             /* pages, protection, kind, fd */
HF_OP(MUNMAP)           /* which mapping, pages */
HF_OP(SIGACTION)        /* signal, handler, flags */
HF_OP(SIGRETURN)        /* - (the handler returns) */
HF_OP(SIGPROCMASK)      /* how, signal */
HF_OP(NANOSLEEP)        /* duration */
HF_OP(PPOLL)            /* count, fds, events, timeout */
HF_OP(EXECVE)           /* program */
HF_OP(GETDENTS)         /* fd, length */
HF_OP(READLINK)         /* fd */
HF_OP(FAST)             /* which: getpid, gettid, fstat of a fd (the register entry's calls) */
HF_OP(FAULT)            /* kind, where */
HF_OP(CLOCK)            /* how far */
HF_OP(INJECT)           /* what, after how many */
HF_OP(DRAIN)            /* - (every woken thread runs its call again now) */
HF_OP(TIMERFD_CREATE)   /* clock, flags */
HF_OP(TIMERFD_SETTIME)  /* fd, value, interval, flags */
HF_OP(FUTEX)            /* operation, word, value */
HF_OP(RAW)              /* call, six argument kinds (a held fd, a small number, a buffer, a length, a mapping,
                         * a struct of input bytes, a path, an extreme): the calls the others do not make */
