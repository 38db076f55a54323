package org.apache.spark.shuffle.hcomm.internal.fetch;

/**
 * Throws a checked exception (Spark's {@code FetchFailedException}, which a read must raise as it is so that Spark
 * recomputes the owner's map outputs) through signatures that declare none: Scala iterators, streams, lambdas.
 * Stateless.
 */
public final class SneakyThrow {
    private SneakyThrow() {
    }

    /**
     * Throws {@code t} as it is; declared to return so that a caller can write {@code throw SneakyThrow.of(t)} and
     * the compiler knows the path ends.
     */
    @SuppressWarnings("unchecked")
    public static <T extends Throwable> RuntimeException of(Throwable t) throws T {
        throw (T) t;
    }
}
