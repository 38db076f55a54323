package org.hcomm.bridge.read;

import java.util.ArrayList;
import java.util.List;
import org.hcomm.bridge.endpoint.ChannelSet;

/**
 * The distinct channels a batch of reads went to, in first-use order (cheap for the usual one or few channels).
 * Not thread-safe: owned by one {@link ReadStrategy}.
 */
final class TouchedChannels {
    private final List<ChannelSet.Channel> channels = new ArrayList<>();
    private ChannelSet.Channel last;

    void add(ChannelSet.Channel c) {
        if (c == last) {
            return;
        }
        last = c;
        for (int i = channels.size() - 1; i >= 0; i--) {
            if (channels.get(i) == c) {
                return;
            }
        }
        channels.add(c);
    }

    List<ChannelSet.Channel> list() {
        return channels;
    }

    boolean isEmpty() {
        return channels.isEmpty();
    }

    void clear() {
        channels.clear();
        last = null;
    }
}
