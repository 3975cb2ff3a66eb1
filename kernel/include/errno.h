/*
 * Kernel error codes: the same numbers user space sees (uapi/petrel_abi.h).
 * System calls return them negated in x0; every failure a user can
 * provoke maps to one of these, never to a panic.
 */
#ifndef PETREL_ERRNO_H
#define PETREL_ERRNO_H

#include "petrel_abi.h"

const char *error_name(int err);

#endif
