/*
 * Kernel error codes. System calls return them negated in x0; every
 * failure a user can provoke maps to one of these, never to a panic.
 */
#ifndef PETREL_ERRNO_H
#define PETREL_ERRNO_H

enum {
    E_OK        = 0,
    E_INVAL     = 1,    /* an argument is malformed or out of range */
    E_FAULT     = 2,    /* a user pointer does not reach mapped memory */
    E_NOMEM     = 3,    /* out of physical frames or table space */
    E_NOSYS     = 4,    /* no such system call */
    E_NOENT     = 5,    /* no such object or name */
    E_RANGE     = 6,    /* a value lies outside what the object allows */
    E_BUSY      = 7,    /* the resource is in use */
    E_PERM      = 8,    /* the caller lacks the right */
    E_BADFORMAT = 9,    /* a binary structure (DTB, ELF, image) is malformed */
    E_TIMEOUT   = 10,
};

const char *error_name(int err);

#endif
