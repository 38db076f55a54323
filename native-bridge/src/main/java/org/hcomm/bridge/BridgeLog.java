package org.hcomm.bridge;

import java.lang.System.Logger.Level;

/**
 * The bridge's log: SLF4J where it is on the class path (inside Spark, whose logging configuration then applies),
 * else the JDK's {@link System.Logger}: a line's bundle carries no SLF4J (Spark provides it), and the doctor runs
 * from the bundle with {@code java -jar}. Messages use SLF4J's {@code {}} placeholders either way. Thread-safe.
 */
public final class BridgeLog {
    private static final boolean SLF4J = present("org.slf4j.LoggerFactory");
    private final Object slf4j;
    private final System.Logger jdk;

    private BridgeLog(Class<?> owner) {
        this.slf4j = SLF4J ? Slf4j.logger(owner) : null;
        this.jdk = SLF4J ? null : System.getLogger(owner.getName());
    }

    public static BridgeLog of(Class<?> owner) {
        return new BridgeLog(owner);
    }

    public void info(String format, Object... args) {
        log(Level.INFO, format, args);
    }

    public void warn(String format, Object... args) {
        log(Level.WARNING, format, args);
    }

    private void log(Level level, String format, Object[] args) {
        if (slf4j != null) {
            Slf4j.log(slf4j, level, format, args);
        } else if (jdk.isLoggable(level)) {
            jdk.log(level, format(format, args));
        }
    }

    /** {@code format} with each {@code {}} replaced by the next argument. */
    static String format(String format, Object... args) {
        StringBuilder b = new StringBuilder();
        int from = 0;
        for (Object arg : args) {
            int at = format.indexOf("{}", from);
            if (at < 0) {
                break;
            }
            b.append(format, from, at).append(arg);
            from = at + 2;
        }
        return b.append(format.substring(from)).toString();
    }

    private static boolean present(String className) {
        try {
            Class.forName(className, false, BridgeLog.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }

    /** Loaded only when SLF4J is present. */
    private static final class Slf4j {
        static Object logger(Class<?> owner) {
            return org.slf4j.LoggerFactory.getLogger(owner);
        }

        static void log(Object logger, Level level, String format, Object[] args) {
            org.slf4j.Logger l = (org.slf4j.Logger) logger;
            if (level == Level.WARNING) {
                l.warn(format, args);
            } else {
                l.info(format, args);
            }
        }
    }
}
