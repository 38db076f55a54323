package org.hcomm.bridge.error;

/**
 * An HComm call returned a non-zero status. Carries the C function name, the raw code, its {@link HcommStatus} and
 * the ids involved (endpoint address, memory tag, channel name/index, ...); the message names all of them, e.g.
 * {@code HcommReadNbi failed: 6 HCCL_E_NOT_FOUND (resource not found ...) [channel=shuffle-3-0 index=0 len=4096]}.
 * Classify failures with {@link #status()}, never by the message.
 *
 * <p>Unchecked, so that data-path code does not have to declare it; callers that turn transport failures into
 * Spark fetch failures catch it explicitly.
 */
public class HcommException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String call;
    private final int code;
    private final HcommStatus status;
    private final String context;

    public HcommException(String call, int code, String context) {
        this(call, code, context, null);
    }

    public HcommException(String call, int code, String context, Throwable cause) {
        super(message(call, code, context), cause);
        this.call = call;
        this.code = code;
        this.status = HcommStatus.of(code);
        this.context = context == null ? "" : context;
    }

    /** For subclasses that describe a failure in their own words. */
    protected HcommException(String call, HcommStatus status, String context, String message) {
        super(message);
        this.call = call;
        this.code = status.code();
        this.status = status;
        this.context = context == null ? "" : context;
    }

    private static String message(String call, int code, String context) {
        HcommStatus s = HcommStatus.of(code);
        String name = s == HcommStatus.UNKNOWN ? "UNKNOWN" : s.name();
        String ctx = context == null || context.isEmpty() ? "" : " [" + context + "]";
        return call + " failed: " + code + " " + name + " (" + s.meaning() + ")" + ctx;
    }

    /** Name of the C function that failed, e.g. {@code "HcommChannelCreate"}. */
    public String call() {
        return call;
    }

    /** The raw status code the call returned. */
    public int code() {
        return code;
    }

    /** The classified status ({@link HcommStatus#UNKNOWN} when the code is not listed). */
    public HcommStatus status() {
        return status;
    }

    /** The ids involved, as {@code key=value} pairs separated by spaces. */
    public String context() {
        return context;
    }

    /** Throws when {@code rc} is not 0. */
    public static void check(int rc, String call, String context) {
        if (rc != 0) {
            throw new HcommException(call, rc, context);
        }
    }
}
