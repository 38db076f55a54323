/* The HComm C functions soft HComm exports, with the signatures of the real headers (docs/HCOMM_ABI.md §3). */
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

/* ---- The HCCL communicator path (Atlas A2/A3; also offered on Atlas 350), with the real prototypes ----
 * Soft HComm's behaviour (the contract its C tests check; docs/COMMUNICATOR.md gives CANN's):
 * - ACL first: aclInit once per process (again: ACL_ERROR_REPEAT_INITIALIZE), aclrtSetDevice(d) on each OS thread
 *   that creates a communicator (d < aclrtGetDeviceCount = $HCOMM_SOFT_DEVICES, default 8; else
 *   ACL_ERROR_RT_INVALID_DEVICEID). Without a
 *   device set on the calling thread HcclGetRootInfo and HcclCommInitRootInfo* answer HCCL_E_RUNTIME.
 * - HcclGetRootInfo starts a listener on $HCCL_IF_IP (or HcommSoftConfigure "if_ip"; else the first non-loopback
 *   IPv4 address, else 127.0.0.1) that gathers the ranks of one communicator and then ends; the 4,108 bytes carry
 *   its address, a communicator id and a ticket, and go to every rank out of band.
 * - HcclCommInitRootInfo[Config] blocks until all nRanks ranks joined (then HCCL_SUCCESS on every rank) or the
 *   connect timeout passed (HCCL_E_TIMEOUT on every rank that joined; nothing is left behind). Each rank's HCCL
 *   buffer (2 x hcclBufferSize MB, or 2 x $HCCL_BUFFSIZE MB, default 2 x 200) is soft device memory on the rank's
 *   device: its address is not mapped for the host (a host access faults); the host reaches it only through
 *   aclrtMemcpy[Async] and the data-plane calls. A device has $HCOMM_SOFT_DEVICE_MEM_MB (default 65536) per process;
 *   a buffer that does not fit is HCCL_E_OOM. hcclBufferSize 0, or an HCCL_BUFFSIZE that is not a whole number
 *   >= 1, is HCCL_E_PARA. A second init on the same device while one runs in the process: HCCL_E_AGAIN. Two ranks
 *   on one device of one host: HCCL_E_PARA on every rank.
 * - HcclChannelAcquire is called by both ends (the lower rank serves); it returns when every channel of the call is
 *   ready (HCCL_E_TIMEOUT after the connect timeout, nothing kept). Descriptors come from HcclChannelDescInit's
 *   layout (magic 0x0F0F0F0F); remoteRank out of range or equal to one's own, or repeated in one call:
 *   HCCL_E_PARA; protocol HCCS between ranks on different hosts: HCCL_E_PARA; protocols other than HCCS, ROCE,
 *   HCCS_ONLY: HCCL_E_NOT_SUPPORT; notifyNum > 64: HCCL_E_PARA; a repeat acquire of (engine, remoteRank, protocol)
 *   returns the same handle; a call while another runs on the same communicator: HCCL_E_AGAIN. Channels end only
 *   with their communicator (HcclChannelDestroy: HCCL_E_NOT_SUPPORT on A2/A3).
 * - Data plane on a communicator's channels and threads: reads from the peer's HCCL buffer into one's own
 *   (anything else: HCCL_E_PARA on A2/A3), in batch mode on A2/A3 (HCCL_E_PARA outside it); every call is a task
 *   of the thread's stream, run in order after HcommBatchModeEnd; the host sees completion with
 *   aclrtSynchronizeStream on the stream (HcclThreadAcquireWithStream) or the thread's (HcommThreadResGetInfo).
 *   A channel notify recorded by one end satisfies one wait on the same index at the other end (records count;
 *   with $HCOMM_SOFT_NOTIFY_FLAG=1 a notify is a flag, as CANN's: a record sets it, a wait clears it, two records
 *   before one wait count once; read when a channel is made and at each thread notify record); a wait that sees
 *   its peer die fails (HCCL_E_NETWORK) and one that times out fails (HCCL_E_TIMEOUT); timeOut is in seconds.
 *   A notify index >= the channel's notifyNum: HCCL_E_PARA.
 * - HCCS: HcclChannelGetHcclBuffer gives the reader an address of its own for the peer's buffer (never the owner's);
 *   a data-plane address of the peer outside [base, base + size) of that channel: HCCL_E_PARA. ROCE: the owner's.
 * - Writes (HcommWriteOnThread) on a communicator's channels: from this rank's HCCL buffer into the peer's, at the
 *   address HcclChannelGetHcclBuffer gave for the channel (HCCS: this end's own; ROCE: the owner's) plus an offset;
 *   outside either buffer HCCL_E_PARA; in batch mode on A2/A3; over HCCS and ROCE alike through the peer's soft NIC,
 *   in pieces of at most 4 MiB.
 * - ROCE with $HCOMM_SOFT_ROCE_LAND_DELAY_MS > 0: a read completes on its stream at post and lands that many ms
 *   later; a channel notify record after it on the same channel, and HcommChannelDrainOnThread, complete only once
 *   the earlier reads landed (soft HComm's fence; CANN's host CPU_TS path shows none). With
 *   $HCOMM_SOFT_ROCE_READ_FENCE=0 (read when the channel is made; default 1) the record is not fenced, as on CANN:
 *   it goes out once the read is posted, so a peer (or the reader itself) that takes it for the read's completion
 *   sees the old bytes; HcommChannelDrainOnThread still waits for the landing. A write completes on its
 *   stream at post and lands that many ms after it reached the peer; a notify recorded after it on the same channel
 *   is raised at the peer only after it landed (one queue pair, in order, as RDMA's; no fence at the writer), and
 *   a peer that ends still lands what it sent before. A drain does not wait for delayed writes.
 * - HcommAcquireComm / HcommReleaseComm (commId: the communicator's name): one holding OS thread at a time, without
 *   blocking: held by another, HCCL_E_AGAIN; by the caller, HCCL_E_PARA; a release without the hold, HCCL_E_PARA;
 *   no live communicator of that name, HCCL_E_NOT_FOUND.
 * - HcclCommDestroy releases the communicator's channels, threads, streams bound to it and HCCL buffer.
 * - ACL events (soft_event.c): aclrtRecordEvent queues a task that completes once its stream's earlier tasks did;
 *   aclrtStreamWaitEvent queues a task that holds its stream until the event's latest record (at the call)
 *   completed (never recorded: no wait); aclrtResetEvent is a task after which the event reads NOT_READY until
 *   recorded again. aclrtQueryEventStatus does not block: COMPLETE once the latest record completed.
 *   aclrtSynchronizeEventWithTimeout (ms; -1 forever, 0 look once; below -1 ACL_ERROR_RT_PARAM_INVALID) returns
 *   ACL_ERROR_RT_EVENT_SYNC_TIMEOUT when it times out. A record whose stream is aborted fails: syncs on the event
 *   and stream waits for it fail with ACL_ERROR_RT_STREAM_ABORT. NULL or unknown events and streams:
 *   ACL_ERROR_INVALID_PARAM. Any stream: aclrtCreateStream's or a communicator thread's (HcommThreadResGetInfo).
 * - aclrtStreamAbort fails the stream's queued tasks, stops its running one (a notify or event wait returns within
 *   50 ms) and returns once none runs; from then on its syncs (aclrtSynchronizeStream[WithTimeout], drains) and new
 *   ACL tasks (aclrtMemcpyAsync, event records and waits) fail with ACL_ERROR_RT_STREAM_ABORT, HComm tasks queued
 *   on its thread fail so too; the stream can only be destroyed. Reads already sent to a peer still land.
 * - aclrtSynchronizeStreamWithTimeout (ms): a stream not done within it ACL_ERROR_RT_STREAM_SYNC_TIMEOUT; -1 or 0 as
 *   aclrtSynchronizeStream; below -1 ACL_ERROR_RT_PARAM_INVALID. A sync runs a stream's queued reads and copies
 *   itself when the worker has not, never its notify and event waits (they could outlast its timeout).
 * - aclrtMallocHost / aclrtFreeHost: page-aligned host memory (not pinned: soft HComm has no DMA), which
 *   aclrtMemcpy[Async] reads and writes as any host memory; aclrtFreeHost takes only what aclrtMallocHost gave
 *   (else ACL_ERROR_INVALID_PARAM). HcommSoftCounters: events and hostBytes live.
 */
HCOMM_API HcclResult HcclGetRootInfo(HcclRootInfo *rootInfo);
HCOMM_API HcclResult HcclCommInitRootInfo(uint32_t nRanks, const HcclRootInfo *rootInfo, uint32_t rank, HcclComm *comm);
HCOMM_API HcclResult HcclCommInitRootInfoConfig(uint32_t nRanks, const HcclRootInfo *rootInfo, uint32_t rank,
                                                const HcclCommConfig *config, HcclComm *comm);
HCOMM_API HcclResult HcclCommDestroy(HcclComm comm);
HCOMM_API HcclResult HcclGetRankId(HcclComm comm, uint32_t *rank);
HCOMM_API HcclResult HcclGetRankSize(HcclComm comm, uint32_t *rankSize);
HCOMM_API HcclResult HcclGetCommName(HcclComm comm, char *commName);
HCOMM_API HcclResult HcclThreadAcquire(HcclComm comm, CommEngine engine, uint32_t threadNum,
                                       uint32_t notifyNumPerThread, ThreadHandle *threads);
HCOMM_API HcclResult HcclThreadAcquireWithStream(HcclComm comm, CommEngine engine, aclrtStream stream,
                                                 uint32_t notifyNum, ThreadHandle *thread);
HCOMM_API HcclResult HcclChannelAcquire(HcclComm comm, CommEngine engine, const HcclChannelDesc *channelDescs,
                                        uint32_t channelNum, ChannelHandle *channels);
HCOMM_API HcclResult HcclChannelDestroy(HcclComm comm, const ChannelHandle *channels, uint32_t channelNum);
HCOMM_API HcclResult HcclGetHcclBuffer(HcclComm comm, void **buffer, uint64_t *size);
HCOMM_API HcclResult HcclChannelGetHcclBuffer(HcclComm comm, ChannelHandle channel, void **buffer, uint64_t *size);

HCOMM_API int32_t HcommLocalCopyOnThread(ThreadHandle thread, void *dst, const void *src, uint64_t len);
HCOMM_API int32_t HcommThreadNotifyRecordOnThread(ThreadHandle thread, ThreadHandle dstThread, uint32_t dstNotifyIdx);
HCOMM_API int32_t HcommThreadNotifyWaitOnThread(ThreadHandle thread, uint32_t notifyIdx, uint32_t timeOut);
HCOMM_API int32_t HcommAcquireComm(const char *commId);
HCOMM_API int32_t HcommReleaseComm(const char *commId);

HCOMM_API aclError aclInit(const char *configPath);
HCOMM_API aclError aclFinalize(void);
HCOMM_API aclError aclrtGetDeviceCount(uint32_t *count);
HCOMM_API aclError aclrtSetDevice(int32_t deviceId);
HCOMM_API aclError aclrtResetDevice(int32_t deviceId);
HCOMM_API aclError aclrtGetDevice(int32_t *deviceId);
HCOMM_API aclError aclrtCreateStream(aclrtStream *stream);
HCOMM_API aclError aclrtDestroyStream(aclrtStream stream);
HCOMM_API aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count, aclrtMemcpyKind kind);
HCOMM_API aclError aclrtMemcpyAsync(void *dst, size_t destMax, const void *src, size_t count, aclrtMemcpyKind kind,
                                    aclrtStream stream);
HCOMM_API aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream, int32_t timeout);
HCOMM_API aclError aclrtStreamAbort(aclrtStream stream);
HCOMM_API aclError aclrtCreateEvent(aclrtEvent *event);
HCOMM_API aclError aclrtDestroyEvent(aclrtEvent event);
HCOMM_API aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream);
HCOMM_API aclError aclrtResetEvent(aclrtEvent event, aclrtStream stream);
HCOMM_API aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event);
HCOMM_API aclError aclrtQueryEventStatus(aclrtEvent event, aclrtEventRecordedStatus *status);
HCOMM_API aclError aclrtSynchronizeEvent(aclrtEvent event);
HCOMM_API aclError aclrtSynchronizeEventWithTimeout(aclrtEvent event, int32_t timeout);
HCOMM_API aclError aclrtMallocHost(void **hostPtr, size_t size);
HCOMM_API aclError aclrtFreeHost(void *hostPtr);

/* ACL completion for the A2/A3 pattern: in libascendcl.so on real hosts, in libhcomm_soft.so here. */
HCOMM_API int aclrtSynchronizeStream(aclrtStream stream);
/* The SoC soft HComm behaves like (HCOMM_SOFT_SOC, default Ascend950PR), as CANN's libascendcl reports its own. */
HCOMM_API const char *aclrtGetSocName(void);

#endif
