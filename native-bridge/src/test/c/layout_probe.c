/* Prints the size and field offsets of every HComm ABI struct as gcc lays them out, as Java properties.
 * The Java layout test compares its JNA structures with this output. */
#include <stdio.h>
#include "hcomm_types.h"

#define SIZE(t) printf("sizeof.%s=%zu\n", #t, sizeof(t))
#define OFF(t, f) printf("%s.%s=%zu\n", #t, #f, offsetof(t, f))

int main(void)
{
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
    SIZE(ThreadConfig);
    OFF(ThreadConfig, header); OFF(ThreadConfig, notifyNumPerThread); OFF(ThreadConfig, reserved);
    SIZE(HcommChannelDesc);
    OFF(HcommChannelDesc, header); OFF(HcommChannelDesc, remoteEndpoint); OFF(HcommChannelDesc, notifyNum);
    OFF(HcommChannelDesc, exchangeAllMems); OFF(HcommChannelDesc, memHandles); OFF(HcommChannelDesc, memHandleNum);
    OFF(HcommChannelDesc, socket); OFF(HcommChannelDesc, role); OFF(HcommChannelDesc, port);
    OFF(HcommChannelDesc, raws); OFF(HcommChannelDesc, roceAttr.queueNum); OFF(HcommChannelDesc, roceAttr.retryCnt);
    OFF(HcommChannelDesc, roceAttr.retryInterval); OFF(HcommChannelDesc, roceAttr.tc); OFF(HcommChannelDesc, roceAttr.sl);
    OFF(HcommChannelDesc, roceAttr.qpThreshold); OFF(HcommChannelDesc, roceAttr.cqAttrFlags);
    OFF(HcommChannelDesc, roceAttr.srcPortList); OFF(HcommChannelDesc, qos); OFF(HcommChannelDesc, channelName);
    SIZE(HcommBatchTransferDesc);
    OFF(HcommBatchTransferDesc, transType); OFF(HcommBatchTransferDesc, transferInfo.rw.len);
    OFF(HcommBatchTransferDesc, transferInfo.rw.dst); OFF(HcommBatchTransferDesc, transferInfo.rw.src);
    return 0;
}
