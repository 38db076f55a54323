package org.apache.spark.shuffle.hcomm.internal.rpc;

/** A stage attempt: what channels belong to, on the driver and on the executors. */
public record StageAttempt(int stageId, int attempt) {
    @Override
    public String toString() {
        return "stage " + stageId + "." + attempt;
    }
}
