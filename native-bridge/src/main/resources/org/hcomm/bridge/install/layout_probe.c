/* Prints the size and field offsets of the HComm ABI structs as the C compiler lays them out, as Java properties
 * (sizeof.<Struct>=n, <Struct>.<field>=offset); org.hcomm.bridge.raw.AbiLayout compares them with the JNA structs.
 * Two uses, one source:
 *   - the build (make layout): against the project's own headers (hcomm_types.h), as C; every struct;
 *   - the doctor (-DHCOMM_PROBE_INSTALL): against a CANN install's include/hcomm headers, as C++ (they only compile
 *     as C++), only the structs the binding passes to the library. With -DHCOMM_PROBE_SIZES_ONLY it prints sizes
 *     only, which compiles even when a field the binding writes is missing (an older HcommChannelDesc); with
 *     -DHCOMM_PROBE_CHANNEL_DESC_ONLY only sizeof(HcommChannelDesc), for headers older than the ABI header.
 *     With -DHCOMM_PROBE_COMMUNICATOR instead the structs of the HCCL communicator path (Atlas A2/A3), from
 *     include/hccl: HcclCommConfig (hccl_types.h) and HcclChannelDesc (hccl_res.h in CANN 8.5, hccl_channel.h
 *     later); a field the install's struct lacks prints as <Struct>.<field>=absent (HcclCommConfig grows at its
 *     end from version to version), so that the doctor names it instead of failing to compile. */
#if defined(HCOMM_PROBE_INSTALL) && defined(HCOMM_PROBE_COMMUNICATOR)
#include <stdio.h>
#include <stddef.h>
#include <utility>
#include "hccl_types.h"
#include "hccl_res.h"
#if __has_include("hccl_channel.h")
#include "hccl_channel.h"
#endif

/* The fields the binding maps, in its order (org.hcomm.bridge.raw.HcclCommConfig, HcclChannelDesc). */
#define HCOMM_COMMUNICATOR_FIELDS(X)                                                                                   \
    X(HcclCommConfig, hcclBufferSize) X(HcclCommConfig, hcclDeterministic) X(HcclCommConfig, hcclCommName)            \
    X(HcclCommConfig, hcclUdi) X(HcclCommConfig, hcclOpExpansionMode) X(HcclCommConfig, hcclRdmaTrafficClass)          \
    X(HcclCommConfig, hcclRdmaServiceLevel) X(HcclCommConfig, hcclWorldRankID) X(HcclCommConfig, hcclJobID)            \
    X(HcclCommConfig, aclGraphZeroCopyEnable) X(HcclCommConfig, hcclExecTimeOut) X(HcclCommConfig, hcclAlgo)           \
    X(HcclCommConfig, hcclRetryEnable) X(HcclCommConfig, hcclRetryParams) X(HcclCommConfig, hcclBufferName)            \
    X(HcclCommConfig, hcclQos) X(HcclCommConfig, hcclSymWinMaxMemSizePerRank) X(HcclCommConfig, hcclChannelSqDepth)    \
    X(HcclChannelDesc, header) X(HcclChannelDesc, remoteRank) X(HcclChannelDesc, channelProtocol)                      \
    X(HcclChannelDesc, localEndpoint) X(HcclChannelDesc, remoteEndpoint) X(HcclChannelDesc, notifyNum)                 \
    X(HcclChannelDesc, memHandles) X(HcclChannelDesc, memHandleNum) X(HcclChannelDesc, raws)

/* One overload pair per field: the first is chosen when the struct has the field, the second when it has not. */
#define HCOMM_DEFINE_PROBE(T, f)                                                                                       \
    template <typename U> static auto probe_##T##_##f(int) -> decltype((void)std::declval<U &>().f, void())            \
    {                                                                                                                  \
        printf("%s.%s=%zu\n", #T, #f, offsetof(U, f));                                                                \
    }                                                                                                                  \
    template <typename U> static void probe_##T##_##f(long) { printf("%s.%s=absent\n", #T, #f); }
HCOMM_COMMUNICATOR_FIELDS(HCOMM_DEFINE_PROBE)

int main(void)
{
    printf("sizeof.HcclCommConfig=%zu\n", sizeof(HcclCommConfig));
    printf("sizeof.HcclChannelDesc=%zu\n", sizeof(HcclChannelDesc));
#define HCOMM_CALL_PROBE(T, f) probe_##T##_##f<T>(0);
    HCOMM_COMMUNICATOR_FIELDS(HCOMM_CALL_PROBE)
    return 0;
}
#else /* the endpoint path's structs, and at build time every struct */
#include <stdio.h>
#include <stddef.h>
#ifdef HCOMM_PROBE_INSTALL
#include "hcomm_res.h"
#include "hcomm_channel.h"
#include "hcomm_primitives.h"
#else
#include "hcomm_types.h"
#endif

#define SIZE(t) printf("sizeof.%s=%zu\n", #t, sizeof(t))
#ifdef HCOMM_PROBE_SIZES_ONLY
#define OFF(t, f) ((void) 0)
#else
#define OFF(t, f) printf("%s.%s=%zu\n", #t, #f, offsetof(t, f))
#endif

int main(void)
{
#ifndef HCOMM_PROBE_CHANNEL_DESC_ONLY /* headers older than the ABI header have only this struct of ours */
    SIZE(CommAbiHeader);
    OFF(CommAbiHeader, version); OFF(CommAbiHeader, magicWord); OFF(CommAbiHeader, size); OFF(CommAbiHeader, reserved);
    SIZE(CommAddr);
    OFF(CommAddr, type); OFF(CommAddr, raws); OFF(CommAddr, addr);
    SIZE(EndpointLoc);
    OFF(EndpointLoc, locType); OFF(EndpointLoc, raws); OFF(EndpointLoc, host.id); OFF(EndpointLoc, device.devPhyId);
    SIZE(EndpointDesc);
    OFF(EndpointDesc, protocol); OFF(EndpointDesc, commAddr); OFF(EndpointDesc, loc); OFF(EndpointDesc, raws);
    SIZE(CommMem);
    OFF(CommMem, type); OFF(CommMem, addr); OFF(CommMem, size);
#endif
    SIZE(HcommChannelDesc);
    OFF(HcommChannelDesc, header); OFF(HcommChannelDesc, remoteEndpoint); OFF(HcommChannelDesc, notifyNum);
    OFF(HcommChannelDesc, exchangeAllMems); OFF(HcommChannelDesc, memHandles); OFF(HcommChannelDesc, memHandleNum);
    OFF(HcommChannelDesc, socket); OFF(HcommChannelDesc, role); OFF(HcommChannelDesc, port);
    OFF(HcommChannelDesc, raws); OFF(HcommChannelDesc, roceAttr.queueNum); OFF(HcommChannelDesc, roceAttr.retryCnt);
    OFF(HcommChannelDesc, roceAttr.retryInterval); OFF(HcommChannelDesc, roceAttr.tc); OFF(HcommChannelDesc, roceAttr.sl);
    OFF(HcommChannelDesc, roceAttr.qpThreshold); OFF(HcommChannelDesc, roceAttr.cqAttrFlags);
    OFF(HcommChannelDesc, roceAttr.srcPortList); OFF(HcommChannelDesc, qos); OFF(HcommChannelDesc, channelName);
#if !defined(HCOMM_PROBE_INSTALL) && !defined(HCOMM_PROBE_CHANNEL_DESC_ONLY)
    SIZE(ThreadConfig);
    OFF(ThreadConfig, header); OFF(ThreadConfig, notifyNumPerThread); OFF(ThreadConfig, reserved);
    SIZE(HcommBatchTransferDesc);
    OFF(HcommBatchTransferDesc, transType); OFF(HcommBatchTransferDesc, transferInfo.rw.len);
    OFF(HcommBatchTransferDesc, transferInfo.rw.dst); OFF(HcommBatchTransferDesc, transferInfo.rw.src);
    SIZE(HcclCommConfig);
    OFF(HcclCommConfig, hcclBufferSize); OFF(HcclCommConfig, hcclCommName); OFF(HcclCommConfig, hcclWorldRankID);
    OFF(HcclCommConfig, hcclJobID); OFF(HcclCommConfig, hcclExecTimeOut); OFF(HcclCommConfig, hcclAlgo);
    OFF(HcclCommConfig, hcclBufferName); OFF(HcclCommConfig, hcclQos); OFF(HcclCommConfig, hcclChannelSqDepth);
    SIZE(HcclChannelDesc);
    OFF(HcclChannelDesc, header); OFF(HcclChannelDesc, remoteRank); OFF(HcclChannelDesc, channelProtocol);
    OFF(HcclChannelDesc, localEndpoint); OFF(HcclChannelDesc, remoteEndpoint); OFF(HcclChannelDesc, notifyNum);
    OFF(HcclChannelDesc, memHandles); OFF(HcclChannelDesc, memHandleNum); OFF(HcclChannelDesc, raws);
#endif
    return 0;
}
#endif
