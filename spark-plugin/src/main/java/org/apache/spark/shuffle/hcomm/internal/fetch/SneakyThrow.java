package org.apache.spark.shuffle.hcomm.internal.fetch;

/** Throws a checked exception (Spark's FetchFailedException) through Scala iterator and stream signatures. */
final class SneakyThrow {
    private SneakyThrow() {
    }

    @SuppressWarnings("unchecked")
    static <T extends Throwable> RuntimeException sneaky(Throwable t) throws T {
        throw (T) t;
    }
}
