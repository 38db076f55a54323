package org.apache.spark.shuffle.hcomm.internal.ui;

import java.util.function.Supplier;

import org.apache.spark.shuffle.hcomm.internal.compat.SummaryPage;
import org.apache.spark.ui.SparkUI;
import org.apache.spark.ui.SparkUITab;

/**
 * The "HComm" tab of a Spark UI (live or history), at {@code /hcomm/}: one page, rendered from a
 * {@link ShuffleSummary} got anew on each request. Attaching it is the caller's (the driver component, the history
 * server's plugin).
 */
public final class ShuffleTab extends SparkUITab {
    public static final String PREFIX = "hcomm";

    public ShuffleTab(SparkUI parent, Supplier<ShuffleSummary> summary) {
        super(parent, PREFIX);
        attachPage(SummaryPage.create(this, SummaryHtml.TITLE, () -> SummaryHtml.render(summary.get())));
    }

    @Override
    public String name() {
        return "HComm";
    }
}
