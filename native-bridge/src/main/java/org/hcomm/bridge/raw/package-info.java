/**
 * Raw JNA mapping of the HComm C ABI (docs/HCOMM_ABI.md §2, §3): one Java declaration per C declaration, no logic.
 *
 * <ul>
 *   <li>{@link org.hcomm.bridge.raw.HcommLibrary}: the HComm functions, JNA direct mapping (registered once by the
 *       loader, {@code org.hcomm.bridge.HcommNative}).</li>
 *   <li>{@link org.hcomm.bridge.raw.AclRuntime}: {@code aclrtSynchronizeStream}, which lives in
 *       {@code libascendcl.so} on CANN and in {@code libhcomm_soft.so} in soft HComm.</li>
 *   <li>{@link org.hcomm.bridge.raw.AclEventLibrary}: ACL events, stream abort, asynchronous copies and pinned host
 *       memory, an optional group bound apart from {@code AclRuntime}; {@link org.hcomm.bridge.raw.HcclWriteLibrary}:
 *       {@code HcommWriteOnThread}, optional too.</li>
 *   <li>{@link org.hcomm.bridge.raw.HcommSoftLibrary}: the optional soft-only symbols, interface mapping (bound
 *       lazily, so a library without them still loads).</li>
 *   <li>The structs, with the exact sizes and offsets gcc gives the C definitions; {@code AbiLayoutTest} checks
 *       every one against the output of {@code layout_probe.c}.</li>
 *   <li>{@link org.hcomm.bridge.raw.HcommDescInit}: Java copies of the header-only {@code static inline} init
 *       helpers, which no library exports.</li>
 * </ul>
 *
 * <p>Nothing here validates arguments: a wrong pointer crashes the JVM. Use the checked facade in
 * {@code org.hcomm.bridge} unless you are writing that facade or a test of the C library itself.
 */
package org.hcomm.bridge.raw;
