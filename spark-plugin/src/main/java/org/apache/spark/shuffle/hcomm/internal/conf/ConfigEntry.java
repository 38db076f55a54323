package org.apache.spark.shuffle.hcomm.internal.conf;

import java.util.Locale;
import java.util.Objects;
import java.util.function.Function;

import org.apache.spark.SparkConf;

/**
 * One typed configuration key: its name, documentation, default, and a parser that rejects bad values with a
 * message naming the key, the value and what is allowed.
 */
public final class ConfigEntry<T> {
    private final String key;
    private final String doc;
    private final String defaultText;
    private final Function<SparkConf, String> dynamicDefault;
    private final Function<String, T> parser;
    private final String allowed;

    private ConfigEntry(String key, String doc, String defaultText, Function<SparkConf, String> dynamicDefault,
            Function<String, T> parser, String allowed) {
        this.key = key;
        this.doc = doc;
        this.defaultText = defaultText;
        this.dynamicDefault = dynamicDefault;
        this.parser = parser;
        this.allowed = allowed;
    }

    static <T> ConfigEntry<T> of(String key, String doc, String defaultValue, String allowed,
            Function<String, T> parser) {
        return new ConfigEntry<>(key, doc, defaultValue, c -> defaultValue, parser, allowed);
    }

    /** A default computed from other settings; {@code defaultText} documents it. */
    static <T> ConfigEntry<T> derived(String key, String doc, String defaultText, Function<SparkConf, String> dflt,
            String allowed, Function<String, T> parser) {
        return new ConfigEntry<>(key, doc, defaultText, dflt, parser, allowed);
    }

    public String key() {
        return key;
    }

    public String doc() {
        return doc;
    }

    public String defaultText() {
        return defaultText;
    }

    public String allowed() {
        return allowed;
    }

    /** The typed value in {@code conf}, or the default. */
    public T get(SparkConf conf) {
        String raw = conf.contains(key) ? conf.get(key) : dynamicDefault.apply(conf);
        return parse(raw);
    }

    T parse(String raw) {
        try {
            return parser.apply(raw == null ? null : raw.trim());
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("Invalid value '" + raw + "' for " + key + ": allowed " + allowed
                    + (e.getMessage() == null ? "" : " (" + e.getMessage() + ")"), e);
        }
    }

    /** One of {@code type}'s constants by its {@link #valueName}, in any case. */
    static <E extends Enum<E>> Function<String, E> oneOf(Class<E> type) {
        return raw -> {
            String v = Objects.requireNonNull(raw, "no value").toLowerCase(Locale.ROOT);
            for (E allowed : type.getEnumConstants()) {
                if (valueName(allowed).toLowerCase(Locale.ROOT).equals(v)) {
                    return allowed;
                }
            }
            throw new IllegalArgumentException("not one of the allowed values");
        };
    }

    /** The configuration value of an enum constant: its name in lower camel case ({@code ON_THREAD}: onThread). */
    public static String valueName(Enum<?> constant) {
        StringBuilder b = new StringBuilder();
        for (String word : constant.name().toLowerCase(Locale.ROOT).split("_")) {
            b.append(b.length() == 0 ? word : Character.toUpperCase(word.charAt(0)) + word.substring(1));
        }
        return b.toString();
    }

    static Function<String, Long> bytes(long min, long max) {
        return raw -> {
            long v = org.apache.spark.network.util.JavaUtils.byteStringAsBytes(raw);
            if (v < min || v > max) {
                throw new IllegalArgumentException("out of range");
            }
            return v;
        };
    }

    static Function<String, Long> millis(long min) {
        return raw -> {
            long v = org.apache.spark.network.util.JavaUtils.timeStringAsMs(raw);
            if (v < min) {
                throw new IllegalArgumentException("out of range");
            }
            return v;
        };
    }
}
