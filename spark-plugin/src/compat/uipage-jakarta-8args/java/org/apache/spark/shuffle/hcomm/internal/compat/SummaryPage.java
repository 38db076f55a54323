package org.apache.spark.shuffle.hcomm.internal.compat;

import java.util.function.Supplier;

import jakarta.servlet.http.HttpServletRequest;

import org.apache.spark.ui.SparkUITab;
import org.apache.spark.ui.UIUtils;
import org.apache.spark.ui.WebUIPage;
import scala.Option;
import scala.xml.NodeSeq;
import scala.xml.Unparsed;

/**
 * The HComm tab's page, for Spark 4.2 (jakarta.servlet; Spark's page header takes 8 arguments);
 * the twins of this class have the same members. Renders the HTML it is given inside Spark's page header and tab
 * bar.
 */
public final class SummaryPage extends WebUIPage {
    private final SparkUITab tab;
    private final String title;
    private final Supplier<String> body;

    private SummaryPage(SparkUITab tab, String title, Supplier<String> body) {
        super("");
        this.tab = tab;
        this.title = title;
        this.body = body;
    }

    /** The page at the tab's root: {@code body} is HTML, got anew on each request. */
    public static WebUIPage create(SparkUITab tab, String title, Supplier<String> body) {
        return new SummaryPage(tab, title, body);
    }

    @Override
    public NodeSeq render(HttpServletRequest request) {
        String html = body.get();
        return NodeSeq.fromSeq(UIUtils.headerSparkPage(request, title, () -> new Unparsed(html), tab,
                Option.<String>apply(null), false, false, UIUtils.headerSparkPage$default$8()));
    }
}
