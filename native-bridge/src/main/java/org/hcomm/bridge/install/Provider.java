package org.hcomm.bridge.install;

import java.util.Locale;

/** Which HComm library answers: the project's soft HComm, or CANN's {@code libhcomm.so}. */
public enum Provider {
    SOFT("hcomm_soft"),
    CANN("hcomm");

    private final String libraryName;

    Provider(String libraryName) {
        this.libraryName = libraryName;
    }

    /** The base name given to {@link System#mapLibraryName(String)}. */
    public String libraryName() {
        return libraryName;
    }

    /** {@code soft} or {@code cann}, any case; else an exception naming {@code what} and the allowed values. */
    public static Provider parse(String value, String what) {
        switch (value.trim().toLowerCase(Locale.ROOT)) {
            case "soft":
                return SOFT;
            case "cann":
                return CANN;
            default:
                throw new IllegalArgumentException(what + "=" + value + " is not valid; use soft or cann");
        }
    }

    @Override
    public String toString() {
        return name().toLowerCase(Locale.ROOT);
    }
}
