package org.hcomm.bridge.install;

/**
 * One check's result: which check, PASS / WARN / FAIL / SKIP, what was found, and what to do about it (empty when
 * nothing). The doctor prints one per check; an executor's quick checks turn the first FAIL into the reason the
 * library is unavailable.
 */
public record Finding(Check check, Status status, String summary, String advice) {

    /** The checks, in the order the doctor runs them. */
    public enum Check {
        LIBRARY("library"),
        SYMBOLS("symbols"),
        ABI("abi"),
        PRODUCT("product"),
        END_TO_END("end-to-end"),
        SPARK("spark");

        private final String label;

        Check(String label) {
            this.label = label;
        }

        public String label() {
            return label;
        }
    }

    /** FAIL means the shuffle cannot run as configured; WARN that it may, with what the summary says. */
    public enum Status {
        PASS,
        WARN,
        FAIL,
        SKIP
    }

    public Finding {
        advice = advice == null ? "" : advice;
    }

    public static Finding pass(Check check, String summary) {
        return new Finding(check, Status.PASS, summary, "");
    }

    public static Finding warn(Check check, String summary, String advice) {
        return new Finding(check, Status.WARN, summary, advice);
    }

    public static Finding fail(Check check, String summary, String advice) {
        return new Finding(check, Status.FAIL, summary, advice);
    }

    public static Finding skip(Check check, String reason) {
        return new Finding(check, Status.SKIP, reason, "");
    }

    public boolean failed() {
        return status == Status.FAIL;
    }

    /** {@code FAIL abi: summary; do: advice}: the one-line form logged by executors. */
    public String oneLine() {
        return status + " " + check.label() + ": " + summary + (advice.isEmpty() ? "" : "; do: " + advice);
    }
}
