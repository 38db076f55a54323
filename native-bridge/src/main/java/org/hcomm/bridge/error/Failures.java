package org.hcomm.bridge.error;

/** Collecting failures while closing or completing several things: the first is thrown, the later ones ride along. */
public final class Failures {
    private Failures() {
    }

    /** {@code first} with {@code next} suppressed in it, or {@code next} (unchecked) when there was no failure yet. */
    public static RuntimeException accumulate(RuntimeException first, Exception next) {
        if (first == null) {
            return next instanceof RuntimeException re ? re : new IllegalStateException(next);
        }
        first.addSuppressed(next);
        return first;
    }
}
