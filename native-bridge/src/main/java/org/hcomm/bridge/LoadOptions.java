package org.hcomm.bridge;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.hcomm.bridge.install.Api;
import org.hcomm.bridge.read.ReadStrategy;
import org.hcomm.bridge.install.Install;
import org.hcomm.bridge.install.Provider;
import org.hcomm.bridge.raw.HcommSymbol.Need;

/**
 * What the loader loads and judges ({@link HcommNative#load}): the provider, an explicit library file (null: where
 * {@link Install} looks for the provider's), and the API and read strategy whose functions the quick checks require.
 * Also written as command-line options ({@link #toArgs}, {@link #with}) for processes that load as another did.
 */
public record LoadOptions(Provider provider, String libraryPath, Api api, ReadStrategy.Kind readStrategy) {
    /** soft HComm found as {@link Install} looks, the endpoint API, onThread reads: when nothing asked otherwise. */
    public static final LoadOptions DEFAULTS = new LoadOptions(Provider.SOFT, null, Api.ENDPOINT,
            ReadStrategy.Kind.ON_THREAD);

    /** A blank library path is none. */
    public LoadOptions {
        Objects.requireNonNull(provider, "provider");
        Objects.requireNonNull(api, "api");
        Objects.requireNonNull(readStrategy, "readStrategy");
        libraryPath = libraryPath == null || libraryPath.isBlank() ? null : libraryPath;
    }

    public LoadOptions withApi(Api value) {
        return new LoadOptions(provider, libraryPath, value, readStrategy);
    }

    public LoadOptions withLibraryPath(String value) {
        return new LoadOptions(provider, value, api, readStrategy);
    }

    /**
     * These options with command-line option {@code flag} ({@code --provider soft|cann}, {@code --library PATH},
     * {@code --api auto|endpoint|communicator}, {@code --read-strategy onThread|nbiFence}) set to {@code value}; null
     * when {@code flag} is none of them; an exception naming the flag when the value is not valid.
     */
    public LoadOptions with(String flag, String value) {
        return switch (flag) {
            case "--provider" -> new LoadOptions(Provider.parse(value, flag), libraryPath, api, readStrategy);
            case "--library" -> withLibraryPath(value);
            case "--api" -> withApi(Api.parse(value, flag));
            case "--read-strategy" -> new LoadOptions(provider, libraryPath, api, readStrategy(value));
            default -> null;
        };
    }

    /** These options as the command-line options {@link #fromArgs} reads. */
    public List<String> toArgs() {
        List<String> args = new ArrayList<>(List.of("--provider", provider.toString(), "--api", api.toString(),
                "--read-strategy", strategyName(readStrategy)));
        if (libraryPath != null) {
            args.addAll(List.of("--library", libraryPath));
        }
        return args;
    }

    /** The options that {@code args} (pairs of {@link #with}'s flags and values) set, the others as in DEFAULTS. */
    public static LoadOptions fromArgs(List<String> args) {
        LoadOptions options = DEFAULTS;
        for (int i = 0; i < args.size(); i += 2) {
            if (i + 1 >= args.size()) {
                throw new IllegalArgumentException(args.get(i) + " needs a value");
            }
            LoadOptions next = options.with(args.get(i), args.get(i + 1));
            if (next == null) {
                throw new IllegalArgumentException("unknown option " + args.get(i) + " (known: --provider, "
                        + "--library, --api, --read-strategy)");
            }
            options = next;
        }
        return options;
    }

    /** The functions the read strategy needs: {@link Need#ON_THREAD} or {@link Need#NBI_FENCE}. */
    public Need strategyNeed() {
        return readStrategy == ReadStrategy.Kind.NBI_FENCE ? Need.NBI_FENCE : Need.ON_THREAD;
    }

    /** {@code onThread} or {@code nbiFence}: the configuration value of a read strategy. */
    public static String strategyName(ReadStrategy.Kind kind) {
        return kind == ReadStrategy.Kind.NBI_FENCE ? "nbiFence" : "onThread";
    }

    private static ReadStrategy.Kind readStrategy(String name) {
        for (ReadStrategy.Kind kind : ReadStrategy.Kind.values()) {
            if (strategyName(kind).equals(name)) {
                return kind;
            }
        }
        throw new IllegalArgumentException("read strategy " + name + " is not valid; use onThread or nbiFence");
    }
}
