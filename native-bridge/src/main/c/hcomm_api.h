/* The HComm C functions soft HComm exports, with the signatures of the real headers (HCOMM_ABI.md §3). */
#ifndef HCOMM_API_H
#define HCOMM_API_H

#include "hcomm_types.h"

HCOMM_API HcommResult HcommEndpointCreate(const EndpointDesc *endpoint, EndpointHandle *endpointHandle);
HCOMM_API HcommResult HcommEndpointDestroy(EndpointHandle endpointHandle);
HCOMM_API HcommResult HcommEndpointGetListenPort(EndpointHandle endpointHandle, uint32_t *port);
HCOMM_API HcommResult HcommEndpointCheckFeature(int32_t feature, const EndpointDesc *desc, bool *supported);

HCOMM_API HcommResult HcommMemAlloc(void **ptr, size_t size);
HCOMM_API HcommResult HcommMemFree(void *ptr);
HCOMM_API HcommResult HcommMemReg(EndpointHandle endpointHandle, const char *memTag, const CommMem *mem,
                                  HcommMemHandle *memHandle);
HCOMM_API HcommResult HcommMemUnreg(EndpointHandle endpointHandle, HcommMemHandle memHandle);
HCOMM_API HcommResult HcommMemExport(EndpointHandle endpointHandle, HcommMemHandle memHandle, void **memDesc,
                                     uint32_t *memDescLen);
HCOMM_API HcommResult HcommMemImport(EndpointHandle endpointHandle, const void *memDesc, uint32_t descLen,
                                     CommMem *outMem);
HCOMM_API HcommResult HcommMemUnimport(EndpointHandle endpointHandle, const void *memDesc, uint32_t descLen);

HCOMM_API HcommResult HcommChannelCreate(EndpointHandle endpointHandle, CommEngine engine, HcommChannelDesc *descs,
                                         uint32_t channelNum, ChannelHandle *channels);
HCOMM_API HcommResult HcommChannelCreateWithConfig(EndpointHandle endpointHandle, CommEngine engine,
                                                   HcommChannelDesc *descs, uint32_t channelNum, void *config,
                                                   ChannelHandle *channels);
HCOMM_API HcommResult HcommChannelGetStatus(const ChannelHandle *channelList, uint32_t listNum, int32_t *statusList);
HCOMM_API HcommResult HcommChannelDestroy(const ChannelHandle *channels, uint32_t channelNum);

HCOMM_API HcommResult HcommThreadAlloc(CommEngine engine, uint32_t threadNum, const uint32_t *notifyNumPerThread,
                                       ThreadHandle *threads);
HCOMM_API HcommResult HcommThreadFree(const ThreadHandle *threads, uint32_t threadNum);
HCOMM_API HcommResult HcommThreadResGetInfo(ThreadHandle thread, int32_t resType, uint32_t infoLen, void **info);

HCOMM_API int32_t HcommReadOnThread(ThreadHandle thread, ChannelHandle channel, void *dst, const void *src,
                                    uint64_t len);
HCOMM_API int32_t HcommWriteOnThread(ThreadHandle thread, ChannelHandle channel, void *dst, const void *src,
                                     uint64_t len);
HCOMM_API int32_t HcommBatchModeStart(const char *batchTag);
HCOMM_API int32_t HcommBatchModeEnd(const char *batchTag);
HCOMM_API int32_t HcommChannelDrainOnThread(ThreadHandle thread, ChannelHandle channel);
HCOMM_API int32_t HcommReadNbi(ChannelHandle channel, void *dst, const void *src, uint64_t len);
HCOMM_API int32_t HcommReadNbiOnThread(ThreadHandle thread, ChannelHandle channel, void *dst, const void *src,
                                       uint64_t len);
HCOMM_API int32_t HcommWriteNbi(ChannelHandle channel, void *dst, const void *src, uint64_t len);
HCOMM_API int32_t HcommChannelFence(ChannelHandle channel);
HCOMM_API int32_t HcommChannelFenceOnThread(ThreadHandle thread, ChannelHandle channel);
HCOMM_API int32_t HcommBatchTransferOnThread(ThreadHandle thread, ChannelHandle channel,
                                             const HcommBatchTransferDesc *descs, uint32_t n);
HCOMM_API int32_t HcommChannelNotifyRecordOnThread(ThreadHandle thread, ChannelHandle channel, uint32_t idx);
HCOMM_API int32_t HcommChannelNotifyWaitOnThread(ThreadHandle thread, ChannelHandle channel, uint32_t idx,
                                                 uint32_t timeOut);

/* ACL completion for the A2/A3 pattern: in libascendcl.so on real hosts, in libhcomm_soft.so here. */
HCOMM_API int aclrtSynchronizeStream(aclrtStream stream);
/* The SoC soft HComm behaves like (HCOMM_SOFT_SOC, default Ascend950PR), as CANN's libascendcl reports its own. */
HCOMM_API const char *aclrtGetSocName(void);

#endif
