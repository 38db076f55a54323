package org.apache.spark.shuffle.hcomm.internal.rpc;

/** What the end of a stage attempt did on an executor, for the driver's report: destroy calls and channels. */
public record StageEnd(int destroyCalls, int channelsDestroyed) {
    public static final StageEnd NOTHING = new StageEnd(0, 0);

    /** What two ends did together (the driver sums the executors' reports of one stage attempt). */
    public StageEnd plus(StageEnd other) {
        return new StageEnd(destroyCalls + other.destroyCalls, channelsDestroyed + other.channelsDestroyed);
    }
}
