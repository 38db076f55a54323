package org.apache.spark.shuffle.hcomm.internal.fetch;

import java.io.IOException;
import java.io.InputStream;
import java.util.function.Function;

/**
 * The bytes of one reduce partition, read straight from the receive buffer chunks its pieces landed in; reading
 * makes the fetcher land the piece (and issue the next wave). Confined to the task's thread.
 */
final class PartStream extends InputStream {
    private final OneSidedBlockFetcher fetcher;
    private final WavePlan.Part part;
    private long pos;

    PartStream(OneSidedBlockFetcher fetcher, WavePlan.Part part) {
        this.fetcher = fetcher;
        this.part = part;
        this.pos = part.start();
    }

    @Override
    public int read() {
        if (pos >= part.end()) {
            return -1;
        }
        WavePlan.Piece p = landedPiece();
        int b = p.chunk.view.get(p.chunkOffset + (int) (pos - p.start)) & 0xFF;
        pos++;
        return b;
    }

    @Override
    public int read(byte[] b, int off, int len) {
        if (pos >= part.end()) {
            return -1;
        }
        if (len == 0) {
            return 0;
        }
        WavePlan.Piece p = landedPiece();
        int inPiece = (int) (pos - p.start);
        int n = (int) Math.min(Math.min(len, p.length - inPiece), part.end() - pos);
        p.chunk.view.get(p.chunkOffset + inPiece, b, off, n);
        pos += n;
        return n;
    }

    @Override
    public int available() {
        return (int) Math.min(Integer.MAX_VALUE, part.end() - pos);
    }

    /** The landed piece holding {@code pos}. */
    private WavePlan.Piece landedPiece() {
        if (fetcher.isClosed()) {
            throw new IllegalStateException("block " + part.blockId() + " read after its task finished");
        }
        return fetcher.landedPieceAt(pos);
    }

    /** Turns a failure to decode a block (corrupt or cut bytes) into the fetch failure {@code corrupt} makes. */
    static final class CorruptionGuard extends InputStream {
        private final InputStream in;
        private final Function<IOException, RuntimeException> corrupt;

        CorruptionGuard(InputStream in, Function<IOException, RuntimeException> corrupt) {
            this.in = in;
            this.corrupt = corrupt;
        }

        @Override
        public int read() {
            try {
                return in.read();
            } catch (IOException e) {
                throw corrupt.apply(e);
            }
        }

        @Override
        public int read(byte[] b, int off, int len) {
            try {
                return in.read(b, off, len);
            } catch (IOException e) {
                throw corrupt.apply(e);
            }
        }

        @Override
        public int available() throws IOException {
            return in.available();
        }

        @Override
        public void close() throws IOException {
            in.close();
        }
    }
}
