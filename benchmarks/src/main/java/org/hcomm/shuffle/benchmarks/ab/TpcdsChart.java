package org.hcomm.shuffle.benchmarks.ab;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Graphics2D;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import javax.imageio.ImageIO;

/**
 * The TPC-DS PNG chart, one row per TPC-DS cell: on the left each configuration's median power-run time (a run's
 * sum of the query times) over builtin's, on the right the {@link TpcdsReport#MOVERS} queries that
 * move most, each configuration's median time over builtin's, with the builtin seconds under each query.
 */
final class TpcdsChart {
    private static final int ROW_H = 330;
    private static final int PLOT_H = 230;
    private static final int TOP = 70;
    private static final int LEFT = 60;
    private static final int TOTAL_W = 260;
    private static final int GROUP_W = 92;

    private TpcdsChart() {
    }

    static void write(Preset preset, List<RunResult> results, Path file) throws IOException {
        List<Preset.Cell> cells = preset.cells().stream().filter(c -> c.workload().startsWith("tpcds")).toList();
        List<ShuffleConfig> configs = preset.configs();
        int width = LEFT + TOTAL_W + 40 + TpcdsReport.MOVERS * GROUP_W + 30;
        int height = TOP + cells.size() * ROW_H;
        BufferedImage img = new BufferedImage(width, height, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = RatioChart.canvas(img);
        g.setColor(RatioChart.TEXT);
        g.setFont(RatioChart.TITLE);
        g.drawString("TPC-DS power run: time relative to Spark's built-in shuffle (lower is faster)", LEFT, 26);
        int lx = LEFT;
        g.setFont(RatioChart.NORMAL);
        for (ShuffleConfig c : configs) {
            g.setColor(RatioChart.COLORS[c.ordinal()]);
            g.fillRect(lx, 40, 12, 12);
            g.setColor(RatioChart.TEXT);
            g.drawString(c.label(), lx + 16, 51);
            lx += 16 + g.getFontMetrics().stringWidth(c.label()) + 22;
        }
        int y = TOP;
        for (Preset.Cell cell : cells) {
            List<RunResult> mine = results.stream().filter(r -> r.cell().equals(cell) && r.ok()).toList();
            double base = Stats.of(runsOf(mine, ShuffleConfig.BUILTIN), TpcdsReport::totalSeconds).median();
            List<double[]> total = new ArrayList<>();
            for (ShuffleConfig c : configs) {
                total.add(new double[] {Stats.of(runsOf(mine, c), TpcdsReport::totalSeconds).median() / base});
            }
            List<String> movers = TpcdsReport.movers(preset, mine, TpcdsReport.MOVERS);
            List<double[]> byQuery = new ArrayList<>();
            List<String> labels = new ArrayList<>();
            for (String q : movers) {
                Map<ShuffleConfig, Double> m = TpcdsReport.medians(preset, mine, q);
                double b = m.getOrDefault(ShuffleConfig.BUILTIN, Double.NaN);
                byQuery.add(configs.stream().mapToDouble(c -> m.get(c) / b).toArray());
                labels.add(q + String.format(Locale.ROOT, " (%.1f s)", b));
            }
            double top = 1.2;
            for (double[] v : total) {
                top = Math.max(top, v[0] * 1.1);
            }
            for (double[] v : byQuery) {
                for (double x : v) {
                    top = Double.isNaN(x) ? top : Math.max(top, x * 1.1);
                }
            }
            g.setColor(RatioChart.TEXT);
            g.setFont(RatioChart.TITLE.deriveFont(13f));
            g.drawString(cell.label() + String.format(Locale.ROOT, ": builtin %.0f s in all; queries that move most",
                    base), LEFT, y + 14);
            int y0 = y + 24 + PLOT_H;
            axis(g, top, y0, width);
            double[] totals = new double[configs.size()];
            for (int c = 0; c < configs.size(); c++) {
                totals[c] = total.get(c)[0];
            }
            group(g, configs, totals, LEFT + 20, TOTAL_W - 40, top, y0, "power run (sum)");
            for (int i = 0; i < byQuery.size(); i++) {
                group(g, configs, byQuery.get(i), LEFT + TOTAL_W + 40 + i * GROUP_W, GROUP_W - 10, top, y0,
                        labels.get(i));
            }
            y += ROW_H;
        }
        g.dispose();
        ImageIO.write(img, "png", file.toFile());
    }

    private static List<RunResult> runsOf(List<RunResult> runs, ShuffleConfig c) {
        return runs.stream().filter(r -> r.config() == c).toList();
    }

    private static void axis(Graphics2D g, double top, int y0, int width) {
        g.setFont(RatioChart.SMALL);
        double step = top <= 1.6 ? 0.2 : top <= 3 ? 0.5 : 1.0;
        for (double v = 0; v <= top + 1e-9; v += step) {
            int yy = (int) Math.round(y0 - v / top * PLOT_H);
            g.setColor(new Color(0xe6e6e6));
            g.drawLine(LEFT, yy, width - 20, yy);
            g.setColor(new Color(0x444444));
            g.drawString(String.format(Locale.ROOT, "%.1f", v), LEFT - 30, yy + 4);
        }
        int one = (int) Math.round(y0 - 1.0 / top * PLOT_H);
        g.setColor(new Color(0x111111));
        g.setStroke(new BasicStroke(1.2f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10, new float[] {6, 4}, 0));
        g.drawLine(LEFT, one, width - 20, one);
        g.setStroke(new BasicStroke(1f));
    }

    /** One group of bars, one per configuration, with its label under the axis. */
    private static void group(Graphics2D g, List<ShuffleConfig> configs, double[] ratios, int x, int w, double top,
            int y0, String label) {
        int barW = Math.max(4, w / configs.size());
        g.setFont(RatioChart.SMALL);
        for (int c = 0; c < configs.size(); c++) {
            if (Double.isNaN(ratios[c])) {
                continue;
            }
            int yy = (int) Math.round(y0 - ratios[c] / top * PLOT_H);
            g.setColor(RatioChart.COLORS[configs.get(c).ordinal()]);
            g.fillRect(x + c * barW + 1, yy, barW - 2, y0 - yy);
            if (barW >= 18) {
                g.setColor(new Color(0x333333));
                g.drawString(String.format(Locale.ROOT, "%.2f", ratios[c]), x + c * barW, yy - 3);
            }
        }
        g.setColor(RatioChart.TEXT);
        g.drawString(label, x, y0 + 16);
    }
}
