/* The main of a user-placed service: serve the endpoint granted as "service"
 * with the service's entry and register paths (SERVICE_ENTRY, SERVICE_FAST,
 * SERVICE_FAULT_FAST and SERVICE_FAULT_SHARED, set by the build; a service
 * without the last two leaves their weak references NULL). */
#include "petrel.h"
#include "svc.h"

void SERVICE_ENTRY(struct svc_call *call);
int SERVICE_FAST(struct svc_call *call, uint64_t *x);
int SERVICE_FAULT_FAST(struct svc_call *call, const uint64_t *msg) __attribute__((weak));  /* NULL: none */
int SERVICE_FAULT_SHARED(struct svc_call *call, const uint64_t *msg) __attribute__((weak));

int main(void *info)
{
    uint32_t ep = start_handle("service");
    if (!ep) {
        puts("service: no \"service\" endpoint granted");
        return 1;
    }
    svc_serve(ep, SERVICE_ENTRY, SERVICE_FAST, SERVICE_FAULT_FAST, SERVICE_FAULT_SHARED);
    return 1;
}
