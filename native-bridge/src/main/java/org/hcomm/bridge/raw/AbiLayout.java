package org.hcomm.bridge.raw;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeSet;
import java.util.function.Supplier;

/**
 * Compares the JNA structs with a C compiler's layout of the same structs, as {@code layout_probe.c} prints it
 * ({@code sizeof.<Struct>=n} and {@code <Struct>.<field>=offset}): against the project's headers at build time,
 * against an install's headers in the doctor.
 */
public final class AbiLayout {
    /** The structs the binding maps, by their C names. */
    public static final Map<String, Supplier<AbiStruct>> STRUCTS = Map.of(
            "CommAbiHeader", CommAbiHeader::new,
            "CommAddr", CommAddr::new,
            "EndpointLoc", EndpointLoc::new,
            "EndpointDesc", EndpointDesc::new,
            "CommMem", CommMem::new,
            "ThreadConfig", ThreadConfig::new,
            "HcommChannelDesc", HcommChannelDesc::new,
            "HcommBatchTransferDesc", HcommBatchTransferDesc::new,
            "HcclCommConfig", HcclCommConfig::new,
            "HcclChannelDesc", HcclChannelDesc::new);

    private AbiLayout() {}

    /** The binding's size of a struct, or of a field's offset, for one probe key; throws for an unknown struct. */
    public static int binding(String key) {
        if (key.startsWith("sizeof.")) {
            return struct(key.substring("sizeof.".length())).size();
        }
        int dot = key.indexOf('.');
        return struct(key.substring(0, dot)).offsetOf(key.substring(dot + 1));
    }

    /** Every probe entry whose number differs from the binding's, as {@code key: C n, binding m}; empty when none. */
    public static List<String> mismatches(Properties probe) {
        List<String> out = new ArrayList<>();
        for (String key : new TreeSet<>(probe.stringPropertyNames())) {
            int c = Integer.parseInt(probe.getProperty(key).trim());
            int java = binding(key);
            if (c != java) {
                out.add(key + ": C " + c + ", binding " + java);
            }
        }
        return out;
    }

    private static AbiStruct struct(String name) {
        Supplier<AbiStruct> s = STRUCTS.get(name);
        if (s == null) {
            throw new IllegalArgumentException("no JNA mapping of struct " + name + " (known: " + STRUCTS.keySet()
                    + ")");
        }
        return s.get();
    }
}
