package org.hcomm.bridge.transport;

import java.util.ArrayList;
import java.util.List;
import org.hcomm.bridge.communicator.CommStream;
import org.hcomm.bridge.communicator.Communicator;
import org.hcomm.bridge.error.HcommException;
import org.hcomm.bridge.error.HcommStatus;

/**
 * Reads on one pooled stream; each landed read is copied to its region's mirror when the batch completes. The
 * communicator is claimed from a batch's first read to its flush; the OS thread that filled it flushes it
 * ({@link ReadBatch}'s rule, which HComm's batch mode needs anyway).
 */
final class CommunicatorBatch implements ReadBatch {
    private final CommunicatorTransport transport;
    private final Communicator comm;
    private final CommStream stream;
    private final List<long[]> landing = new ArrayList<>();
    private final List<CommPeers.Peer> touched = new ArrayList<>();
    /** The RoCE channels read since the last flush, each to get one ACK notify before the flush. */
    private final List<CommPeers.Link> ackDue = new ArrayList<>();
    private Communicator.Claim claim;
    private boolean closed;

    CommunicatorBatch(CommunicatorTransport transport, Communicator comm, CommStream stream) {
        this.transport = transport;
        this.comm = comm;
        this.stream = stream;
    }

    @Override
    public void read(PeerChannels.PeerChannel channel, long dst, long src, long length) throws TransportException {
        CommPeers.Peer p = (CommPeers.Peer) channel;
        CommPeers.Link link = p.link();
        if (link == null) {
            throw new TransportException("HcommReadOnThread", HcommStatus.HCCL_E_NOT_FOUND.code(),
                    "no channel to " + p.peerId() + ": " + p.failure(), null, p);
        }
        if (length < 0 || src < 0 || src > link.size() - length) {
            throw refused(p, "read of [" + src + ", +" + length + ") outside the HCCL buffer of " + p.peerId()
                    + " (" + link.size() + " bytes as channel " + p.name() + " gave it)");
        }
        long own = comm.bufferAddress();
        if (dst < own || dst - own > comm.bufferSize() - length) {
            throw refused(p, "read from " + p.peerId() + " into 0x" + Long.toHexString(dst) + " +" + length
                    + ", outside this member's HCCL buffer");
        }
        try {
            if (claim == null) {
                claim = comm.claim();
            }
            stream.read(link.handle(), dst, link.base() + src, length);
        } catch (HcommException | IllegalStateException e) {
            TransportException t = e instanceof HcommException h
                    ? new TransportException(h.call(), h.code(), "read from " + p.peerId() + ": " + h.getMessage(),
                    h, p)
                    : new TransportException("HcommReadOnThread", HcommStatus.HCCL_E_PARA.code(),
                    "read from " + p.peerId() + ": " + e.getMessage(), e, p);
            abandon(t);
            throw t;
        }
        landing.add(new long[] {dst, length});
        if (!touched.contains(p)) {
            touched.add(p);
        }
        if (link.roce() && !ackDue.contains(link)) {
            ackDue.add(link);
        }
    }

    /** HCCL_E_PARA for {@code p}, after the batch's earlier reads were ended and waited for. */
    private TransportException refused(CommPeers.Peer p, String what) {
        TransportException t = new TransportException("HcommReadOnThread", HcommStatus.HCCL_E_PARA.code(), what,
                null, p);
        abandon(t);
        return t;
    }

    /** Ends the batch after a refused read: its earlier reads are flushed and waited for, the claim let go. */
    private void abandon(TransportException failure) {
        try {
            issueEnd();
            stream.await();
        } catch (HcommException | IllegalStateException e) {
            failure.addSuppressed(e);
        } finally {
            landing.clear();
            touched.clear();
        }
    }

    /** The ACK notifies due, {@code HcommBatchModeEnd}, then the claim let go (each step runs). */
    private void issueEnd() {
        try {
            for (CommPeers.Link l : ackDue) {
                stream.notifyPeer(l.handle(), Communicator.Notify.ACK.index());
            }
        } finally {
            ackDue.clear();
            try {
                stream.flush();
            } finally {
                Communicator.Claim c = claim;
                claim = null;
                if (c != null) {
                    c.close();
                }
            }
        }
    }

    @Override
    public void flush() throws TransportException {
        try {
            issueEnd();
        } catch (HcommException e) {
            throw TransportBase.wrap(e);
        }
    }

    @Override
    public void await() throws TransportException {
        try {
            issueEnd();
            stream.await();
            for (long[] l : landing) {
                transport.land(l[0], l[1]);
            }
        } catch (HcommException e) {
            throw new TransportException(e.call(), e.code(), e.getMessage(), e, touched.size() == 1
                    ? touched.get(0) : null);
        } finally {
            landing.clear();
            touched.clear();
        }
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            issueEnd(); // ends a batch left open (and lets the claim go) before its reads are waited for
        } catch (RuntimeException e) {
            // a failed read of a batch being thrown away does not matter
        }
        try {
            stream.await(); // lets its reads finish before the stream is reused
        } catch (RuntimeException e) {
            // as above
        }
        transport.retire(this, stream);
    }
}
