package org.hcomm.bridge.raw;

/**
 * Every C function the binding calls in the HComm library, with the direct-mapped class that binds it and what
 * needs it: each API and read strategy binds apart, so an install may lack one's functions and still serve another
 * (CANN 8.5 has the communicator path and no endpoint API; the doctor and the loader read this table; a test keeps
 * it equal to the mapped classes).
 */
public enum HcommSymbol {
    HcommEndpointCreate(Need.ENDPOINT_API, HcommLibrary.class),
    HcommEndpointDestroy(Need.ENDPOINT_API, HcommLibrary.class),
    HcommEndpointGetListenPort(Need.ENDPOINT_API, HcommLibrary.class),
    HcommMemAlloc(Need.SOFT_ALLOCATION, HcommAllocLibrary.class),
    HcommMemFree(Need.SOFT_ALLOCATION, HcommAllocLibrary.class),
    HcommMemReg(Need.ENDPOINT_API, HcommLibrary.class),
    HcommMemUnreg(Need.ENDPOINT_API, HcommLibrary.class),
    HcommMemExport(Need.ENDPOINT_API, HcommLibrary.class),
    HcommMemImport(Need.ENDPOINT_API, HcommLibrary.class),
    HcommMemUnimport(Need.ENDPOINT_API, HcommLibrary.class),
    HcommChannelCreate(Need.ENDPOINT_API, HcommLibrary.class),
    HcommChannelGetStatus(Need.ENDPOINT_API, HcommLibrary.class),
    HcommChannelDestroy(Need.ENDPOINT_API, HcommLibrary.class),
    HcommThreadAlloc(Need.ON_THREAD, HcommOnThreadLibrary.class),
    HcommThreadFree(Need.ON_THREAD, HcommOnThreadLibrary.class),
    HcommBatchModeStart(Need.DATA_PLANE, HcommDataPlaneLibrary.class),
    HcommBatchModeEnd(Need.DATA_PLANE, HcommDataPlaneLibrary.class),
    HcommReadOnThread(Need.DATA_PLANE, HcommDataPlaneLibrary.class),
    HcommChannelDrainOnThread(Need.ON_THREAD, HcommOnThreadLibrary.class),
    HcommReadNbi(Need.NBI_FENCE, HcommNbiLibrary.class),
    HcommChannelFence(Need.NBI_FENCE, HcommNbiLibrary.class),
    HcommThreadResGetInfo(Need.STREAM_COMPLETION, HcommStreamLibrary.class),
    HcclGetRootInfo(Need.COMMUNICATOR, HcclLibrary.class),
    HcclCommInitRootInfoConfig(Need.COMMUNICATOR, HcclLibrary.class),
    HcclCommDestroy(Need.COMMUNICATOR, HcclLibrary.class),
    HcclGetRankId(Need.COMMUNICATOR, HcclLibrary.class),
    HcclGetRankSize(Need.COMMUNICATOR, HcclLibrary.class),
    HcclGetCommName(Need.COMMUNICATOR, HcclLibrary.class),
    HcclThreadAcquireWithStream(Need.COMMUNICATOR, HcclLibrary.class),
    HcclChannelAcquire(Need.COMMUNICATOR, HcclLibrary.class),
    HcclGetHcclBuffer(Need.COMMUNICATOR, HcclLibrary.class),
    HcclChannelGetHcclBuffer(Need.COMMUNICATOR, HcclLibrary.class),
    HcommChannelNotifyRecordOnThread(Need.COMMUNICATOR, HcclLibrary.class),
    HcommChannelNotifyWaitOnThread(Need.COMMUNICATOR, HcclLibrary.class),
    HcommAcquireComm(Need.COMMUNICATOR_LOCK, HcclCommLockLibrary.class),
    HcommReleaseComm(Need.COMMUNICATOR_LOCK, HcclCommLockLibrary.class),
    HcommWriteOnThread(Need.ONE_SIDED_WRITE, HcclWriteLibrary.class);

    /** Who needs a function. */
    public enum Need {
        /** The endpoint API (Atlas 350): every read strategy of {@code api=endpoint}. */
        ENDPOINT_API("the endpoint API (api=endpoint, both read strategies)"),
        /** Batch mode and HcommReadOnThread: onThread reads and the communicator path. */
        DATA_PLANE("readStrategy=onThread and api=communicator"),
        ON_THREAD("readStrategy=onThread"),
        NBI_FENCE("readStrategy=nbiFence"),
        /** Optional: only completing onThread reads by stream synchronisation, which the plugin does not use. */
        STREAM_COMPLETION("onThread's stream completion (optional: the plugin completes by drain)"),
        /** soft HComm only: its host allocation; with CANN the plugin maps host memory itself. */
        SOFT_ALLOCATION("soft HComm's host allocation"),
        /** The HCCL communicator path (Atlas A2/A3): {@code api=communicator}. */
        COMMUNICATOR("api=communicator"),
        /** Optional: the library's lock around a use of a communicator; without it the binding's own lock alone. */
        COMMUNICATOR_LOCK("the lock HCCL's host operators take around a communicator; the binding's own lock serves "
                + "without it"),
        /** Optional: one-sided writes into a peer's HCCL buffer ({@code CommStream.write}); reads never write. */
        ONE_SIDED_WRITE("one-sided writes into a peer's HCCL buffer (the read path does not call it)");

        private final String who;

        Need(String who) {
            this.who = who;
        }

        /** Who needs it, in words. */
        public String who() {
            return who;
        }
    }

    private final Need need;
    private final Class<?> binding;

    HcommSymbol(Need need, Class<?> binding) {
        this.need = need;
        this.binding = binding;
    }

    public Need need() {
        return need;
    }

    /** The direct-mapped class whose {@code Native.register} binds the function. */
    public Class<?> binding() {
        return binding;
    }
}
