package org.apache.spark.shuffle.hcomm.internal.rpc;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.ObjectStreamClass;
import java.io.Serializable;

import org.apache.spark.rpc.RpcEndpointRef;

/**
 * How {@link Messages} travel through Spark's RPC: as {@code Object[]{TAG, bytes}} (plus an
 * {@link RpcEndpointRef} when one rides along), i.e. only JDK and Spark classes. Spark deserialises RPC messages
 * with its own class loader, which does not see the plugin's classes when the plugin came with {@code --jars};
 * the bytes are decoded here with the plugin's class loader instead.
 */
public final class Wire {
    public static final String TAG = "hcomm-shuffle/1";

    /** A decoded message and the endpoint reference that came with it (or null). */
    public record Packet(Object message, RpcEndpointRef ref) {
    }

    private Wire() {
    }

    public static Object[] pack(Serializable message) {
        return new Object[] {TAG, encode(message)};
    }

    public static Object[] pack(Serializable message, RpcEndpointRef ref) {
        return new Object[] {TAG, encode(message), ref};
    }

    public static boolean isPacket(Object wire) {
        return wire instanceof Object[] a && a.length >= 2 && TAG.equals(a[0]) && a[1] instanceof byte[];
    }

    public static Packet unpack(Object wire) {
        if (!isPacket(wire)) {
            throw new IllegalArgumentException("not an HComm shuffle message: " + wire);
        }
        Object[] a = (Object[]) wire;
        return new Packet(decode((byte[]) a[1]), a.length > 2 ? (RpcEndpointRef) a[2] : null);
    }

    /** The message inside a reply, or null for a null reply. */
    public static Object reply(Object wire) {
        return wire == null ? null : unpack(wire).message();
    }

    private static byte[] encode(Serializable message) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(256);
        try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
            out.writeObject(message);
        } catch (IOException e) {
            throw new IllegalStateException("cannot encode " + message.getClass().getSimpleName(), e);
        }
        return bytes.toByteArray();
    }

    private static Object decode(byte[] bytes) {
        try (ObjectInputStream in = new PluginObjectInputStream(new ByteArrayInputStream(bytes))) {
            return in.readObject();
        } catch (IOException | ClassNotFoundException e) {
            throw new IllegalStateException("cannot decode an HComm shuffle message", e);
        }
    }

    /** Resolves classes with the plugin's class loader. */
    private static final class PluginObjectInputStream extends ObjectInputStream {
        PluginObjectInputStream(InputStream in) throws IOException {
            super(in);
        }

        @Override
        protected Class<?> resolveClass(ObjectStreamClass desc) throws IOException, ClassNotFoundException {
            try {
                return Class.forName(desc.getName(), false, Wire.class.getClassLoader());
            } catch (ClassNotFoundException e) {
                return super.resolveClass(desc);
            }
        }
    }
}
