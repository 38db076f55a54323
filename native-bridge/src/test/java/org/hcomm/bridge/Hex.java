package org.hcomm.bridge;

import java.util.HexFormat;

/** Hex for descriptors on the peer protocol's text lines. */
final class Hex {
    private Hex() {}

    static String of(byte[] b) {
        return HexFormat.of().formatHex(b);
    }

    static byte[] parse(String s) {
        return HexFormat.of().parseHex(s);
    }
}
