/* The main of a user-placed service: serve the endpoint granted as "service"
 * with the service's entry (SERVICE_ENTRY, set by the build). */
#include "petrel.h"
#include "svc.h"

void SERVICE_ENTRY(struct svc_call *call);

int main(void *info)
{
    uint32_t ep = start_handle("service");
    if (!ep) {
        puts("service: no \"service\" endpoint granted");
        return 1;
    }
    svc_serve(ep, SERVICE_ENTRY);
    return 1;
}
