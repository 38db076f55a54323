package org.hcomm.bridge.raw;

import com.sun.jna.Pointer;
import com.sun.jna.Structure;
import java.util.Map;

/**
 * Base of the ABI structs: adds {@link #offsetOf(String)}, which answers C-style field paths
 * ({@code "roceAttr.srcPortList"}, {@code "host.id"}) from the offsets JNA computed, so the layout test can compare
 * them with gcc's {@code offsetof}. Members of anonymous C unions that are not Java fields are declared by each
 * struct in {@link #unionMembers()} as (Java field, byte offset inside it); every union member starts at offset 0
 * of its union, so those offsets are the union semantics, not measured numbers.
 *
 * <p>Not thread-safe, like every JNA {@link Structure}.
 */
public abstract class AbiStruct extends Structure {

    /** A C union member that is not a Java field: it lives {@code delta} bytes into Java field {@code field}. */
    protected record UnionMember(String field, int delta) {}

    protected AbiStruct() {
        super();
    }

    protected AbiStruct(Pointer memory) {
        super(memory);
    }

    /** C union members reachable by name that are not Java fields; empty by default. */
    protected Map<String, UnionMember> unionMembers() {
        return Map.of();
    }

    /**
     * Byte offset of a field given by its C path, e.g. {@code "remoteEndpoint.loc"} or {@code "transferInfo.rw.len"}.
     *
     * @throws IllegalArgumentException if the path names no field of this struct
     */
    public final int offsetOf(String path) {
        UnionMember member = unionMembers().get(path);
        if (member != null) {
            return fieldOffset(member.field()) + member.delta();
        }
        int dot = path.indexOf('.');
        if (dot < 0) {
            return fieldOffset(path);
        }
        String head = path.substring(0, dot);
        Object nested;
        try {
            nested = getClass().getField(head).get(this);
        } catch (ReflectiveOperationException e) {
            throw new IllegalArgumentException("no field " + head + " in " + getClass().getSimpleName(), e);
        }
        if (!(nested instanceof AbiStruct)) {
            throw new IllegalArgumentException(head + " in " + getClass().getSimpleName() + " is not a struct");
        }
        return fieldOffset(head) + ((AbiStruct) nested).offsetOf(path.substring(dot + 1));
    }
}
