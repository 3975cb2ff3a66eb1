/* Names of kernel error codes, for messages. */
#include "kernel.h"

/* A short name for an error code (positive or negated). */
const char *error_name(int err)
{
    static const char *const names[] = {
        "E_OK", "E_INVAL", "E_FAULT", "E_NOMEM", "E_NOSYS", "E_NOENT",
        "E_RANGE", "E_BUSY", "E_PERM", "E_BADFORMAT", "E_TIMEOUT", "E_BADHANDLE",
        "E_AGAIN", "E_CLOSED", "E_STATE", "E_LIMIT", "E_IO",
    };
    if (err < 0)
        err = -err;
    return (unsigned)err < ARRAY_SIZE(names) ? names[err] : "E_?";
}
