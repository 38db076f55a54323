package org.hcomm.bridge.raw;

/**
 * Every C function the binding calls in the HComm library, with the direct-mapped class that binds it and what
 * needs it: each read strategy binds apart, so an install may lack one strategy's functions and still serve the
 * other (the doctor and the loader read this table; a test keeps it equal to the mapped classes).
 */
public enum HcommSymbol {
    HcommEndpointCreate(Need.EVERY_STRATEGY, HcommLibrary.class),
    HcommEndpointDestroy(Need.EVERY_STRATEGY, HcommLibrary.class),
    HcommEndpointGetListenPort(Need.EVERY_STRATEGY, HcommLibrary.class),
    HcommMemAlloc(Need.SOFT_ALLOCATION, HcommAllocLibrary.class),
    HcommMemFree(Need.SOFT_ALLOCATION, HcommAllocLibrary.class),
    HcommMemReg(Need.EVERY_STRATEGY, HcommLibrary.class),
    HcommMemUnreg(Need.EVERY_STRATEGY, HcommLibrary.class),
    HcommMemExport(Need.EVERY_STRATEGY, HcommLibrary.class),
    HcommMemImport(Need.EVERY_STRATEGY, HcommLibrary.class),
    HcommMemUnimport(Need.EVERY_STRATEGY, HcommLibrary.class),
    HcommChannelCreate(Need.EVERY_STRATEGY, HcommLibrary.class),
    HcommChannelGetStatus(Need.EVERY_STRATEGY, HcommLibrary.class),
    HcommChannelDestroy(Need.EVERY_STRATEGY, HcommLibrary.class),
    HcommThreadAlloc(Need.ON_THREAD, HcommOnThreadLibrary.class),
    HcommThreadFree(Need.ON_THREAD, HcommOnThreadLibrary.class),
    HcommBatchModeStart(Need.ON_THREAD, HcommOnThreadLibrary.class),
    HcommBatchModeEnd(Need.ON_THREAD, HcommOnThreadLibrary.class),
    HcommReadOnThread(Need.ON_THREAD, HcommOnThreadLibrary.class),
    HcommChannelDrainOnThread(Need.ON_THREAD, HcommOnThreadLibrary.class),
    HcommReadNbi(Need.NBI_FENCE, HcommNbiLibrary.class),
    HcommChannelFence(Need.NBI_FENCE, HcommNbiLibrary.class),
    HcommThreadResGetInfo(Need.STREAM_COMPLETION, HcommStreamLibrary.class);

    /** Who needs a function. */
    public enum Need {
        EVERY_STRATEGY("every read strategy"),
        ON_THREAD("readStrategy=onThread"),
        NBI_FENCE("readStrategy=nbiFence"),
        /** Optional: only completing onThread reads by stream synchronisation, which the plugin does not use. */
        STREAM_COMPLETION("onThread's stream completion (optional: the plugin completes by drain)"),
        /** soft HComm only: its host allocation; with CANN the plugin maps host memory itself. */
        SOFT_ALLOCATION("soft HComm's host allocation");

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
