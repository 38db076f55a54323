/* The calls the binding declares that soft HComm does not emulate: each answers HCCL_E_NOT_SUPPORT. */
#include "soft_internal.h"

/* ---- declared by the binding, not emulated ---- */

HCOMM_API int32_t HcommWriteNbi(ChannelHandle channel_handle, void *dst, const void *src, uint64_t len)
{
    return HCCL_E_NOT_SUPPORT;
}

HCOMM_API int32_t HcommBatchTransferOnThread(ThreadHandle thread, ChannelHandle channel_handle,
                                             const HcommBatchTransferDesc *descs, uint32_t n)
{
    return HCCL_E_NOT_SUPPORT;
}

HCOMM_API HcommResult HcommEndpointCheckFeature(int32_t feature, const EndpointDesc *desc, bool *supported)
{
    return HCCL_E_NOT_SUPPORT;
}
