package org.hcomm.bridge.raw;

import com.sun.jna.Library;
import com.sun.jna.ptr.PointerByReference;

/**
 * The functions only soft HComm exports ({@code hcomm_soft.h}), JNA interface mapping so that each symbol is looked
 * up on first call: a library without them (CANN's {@code libhcomm.so}) still loads, and a call then throws
 * {@link UnsatisfiedLinkError}.
 */
public interface HcommSoftLibrary extends Library {
    int HcommSoftConfigure(String key, String value);

    int HcommSoftGetCounters(HcommSoftCounters out);

    int HcommSoftChannelPath(long channel, PointerByReference path);

    String HcommSoftVersion();
}
