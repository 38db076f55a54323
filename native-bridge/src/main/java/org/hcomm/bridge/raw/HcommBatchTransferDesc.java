package org.hcomm.bridge.raw;

import com.sun.jna.Pointer;
import com.sun.jna.Structure.FieldOrder;
import java.util.Map;

/**
 * {@code HcommBatchTransferDesc}: 64 bytes, align 8 (docs/HCOMM_ABI.md §2.12). The 56-byte {@code transferInfo} union is
 * modelled by its read/write member {@link TransferInfo#rw} followed by padding bytes.
 */
@FieldOrder({"transType", "reserved", "transferInfo"})
public class HcommBatchTransferDesc extends AbiStruct {
    public static final int SIZE = 64;

    /** HcommTransferType. */
    public int transType;
    public int reserved;
    public TransferInfo transferInfo = new TransferInfo();

    /** The {@code transferInfo} union: 56 bytes, align 8. */
    @FieldOrder({"rw", "rawsTail"})
    public static class TransferInfo extends AbiStruct {
        public static final int SIZE = 56;

        private static final Map<String, UnionMember> UNION = Map.of("raws", new UnionMember("rw", 0));

        public ReadWrite rw = new ReadWrite();
        public byte[] rawsTail = new byte[SIZE - ReadWrite.SIZE];

        @Override
        protected Map<String, UnionMember> unionMembers() {
            return UNION;
        }
    }

    /** The {@code rw} member: {@code uint64 len; void* dst; const void* src}. */
    @FieldOrder({"len", "dst", "src"})
    public static class ReadWrite extends AbiStruct {
        public static final int SIZE = 24;

        public long len;
        public Pointer dst;
        public Pointer src;
    }
}
