package org.hcomm.shuffle.benchmarks.ab;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.FontMetrics;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.geom.AffineTransform;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import javax.imageio.ImageIO;

/**
 * The PNG chart: grouped bars, one group per cell, one bar per configuration; a bar is the configuration's median
 * reduce-stage time divided by builtin's median in the same cell, its whisker the min–max over the repetitions
 * (also divided by builtin's median), with a dashed line at 1.0. When the preset has one size, executor count and
 * serializer the groups are the workloads; otherwise there is one panel per workload and the groups are its cells.
 */
final class RatioChart {
    static final Color[] COLORS = {
        new Color(0x9e9e9e), // builtin
        new Color(0x546e7a), // builtin-network
        new Color(0xd9531e), // hcomm
        new Color(0xf2a97e), // hcomm-tcp
        new Color(0x7b5ea7), // hcomm-communicator
        new Color(0x2e7d32), // hcomm-arena
        new Color(0x00838f), // hcomm-window
    };
    static final Color TEXT = new Color(0x212121);
    private static final int HEADER = 92;
    private static final int PANEL_TITLE = 26;
    private static final int PLOT_H = 340;
    private static final int LABELS = 58;
    private static final int LEFT = 84;
    private static final int RIGHT = 140;
    private static final int BAR_W = 30;
    static final Font TITLE = new Font(Font.SANS_SERIF, Font.BOLD, 17);
    static final Font NORMAL = new Font(Font.SANS_SERIF, Font.PLAIN, 13);
    private static final Font BOLD = new Font(Font.SANS_SERIF, Font.BOLD, 14);
    static final Font SMALL = new Font(Font.SANS_SERIF, Font.PLAIN, 11);

    private RatioChart() {
    }

    /** One bar group: its labels and, per configuration, {median, min, max} ÷ builtin's median (NaN if none). */
    private record Group(List<String> labels, double[][] ratios) {
    }

    static void write(Preset preset, List<RunResult> results, Path file) throws IOException {
        List<ShuffleConfig> configs = preset.configs();
        // the baseline: Spark's shuffle as shipped, or (when the preset leaves it out, e.g. between hosts, where
        // builtin would read no file directly either) Spark's shuffle through the network
        ShuffleConfig baseline = configs.contains(ShuffleConfig.BUILTIN) ? ShuffleConfig.BUILTIN : configs.get(0);
        String baseName = baseline.label();
        boolean varies = preset.sizesMb().size() > 1 || preset.executors().size() > 1
                || preset.serializers().size() > 1;
        Map<String, List<Group>> panels = new LinkedHashMap<>();
        double top = 1.2;
        for (Preset.Cell cell : preset.cells()) {
            List<RunResult> mine = results.stream().filter(r -> r.cell().equals(cell)).toList();
            Map<ShuffleConfig, Stats> reduce = SummaryReport.reduceStats(preset, mine);
            Stats base = reduce.get(baseline);
            double[][] ratios = new double[configs.size()][];
            for (int c = 0; c < configs.size(); c++) {
                Stats s = reduce.get(configs.get(c));
                if (base == null || base.n() == 0 || s.n() == 0) {
                    ratios[c] = new double[] {Double.NaN, Double.NaN, Double.NaN};
                } else {
                    ratios[c] = new double[] {s.median() / base.median(), s.min() / base.median(),
                        s.max() / base.median()};
                    top = Math.max(top, ratios[c][2] * 1.1);
                }
            }
            String builtin = base == null || base.n() == 0 ? baseName + " failed"
                    : String.format(Locale.ROOT, "%s %.1f s", baseName, base.median());
            List<String> labels = varies
                    ? List.of(Preset.formatMb(cell.targetMb()) + " · " + cell.executors() + " ex · "
                            + cell.serializer(), builtin)
                    : List.of(cell.workload(), Preset.formatMb(cell.targetMb()) + " · " + builtin);
            panels.computeIfAbsent(varies ? cell.workload() : "", k -> new ArrayList<>())
                    .add(new Group(labels, ratios));
        }
        double step = top <= 1.6 ? 0.2 : top <= 3 ? 0.5 : 1.0;
        top = Math.ceil(top / step - 1e-9) * step;

        int maxGroups = panels.values().stream().mapToInt(List::size).max().orElse(1);
        int groupW = Math.max(configs.size() * BAR_W + 60, 150);
        int width = Math.max(Hosts.count() == 0 ? 820 : 1100, LEFT + RIGHT + maxGroups * groupW);
        int panelH = (varies ? PANEL_TITLE : 8) + PLOT_H + LABELS;
        int height = HEADER + panels.size() * panelH + 10;

        BufferedImage img = new BufferedImage(width, height, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = canvas(img);

        g.setColor(TEXT);
        g.setFont(TITLE);
        g.drawString(baseline == ShuffleConfig.BUILTIN
                ? "Reduce-stage time relative to Spark's built-in shuffle (lower is faster)"
                : "Reduce-stage time relative to " + baseName + " (lower is faster)", LEFT, 28);
        g.setFont(NORMAL);
        g.setColor(new Color(0x555555));
        g.drawString(String.format(Locale.ROOT, "preset %s%s · bar: median of %d run(s) ÷ %s's median · "
                + "whisker: min–max · same data, configurations alternating", preset.name(),
                Hosts.count() == 0 ? "" : " · " + Hosts.describe(), preset.reps(), baseName), LEFT, 48);
        int lx = LEFT;
        for (ShuffleConfig c : configs) {
            g.setColor(COLORS[c.ordinal()]);
            g.fillRect(lx, 62, 14, 14);
            g.setColor(TEXT);
            g.drawString(c.label(), lx + 20, 74);
            lx += 20 + g.getFontMetrics().stringWidth(c.label()) + 26;
        }

        int y = HEADER;
        for (Map.Entry<String, List<Group>> panel : panels.entrySet()) {
            if (varies) {
                g.setColor(TEXT);
                g.setFont(BOLD);
                g.drawString(panel.getKey(), LEFT, y + 18);
                y += PANEL_TITLE;
            } else {
                y += 8;
            }
            drawPanel(g, panel.getValue(), configs, baseName, top, step, y, width - LEFT - RIGHT);
            y += PLOT_H + LABELS;
        }
        g.dispose();
        ImageIO.write(img, "png", file.toFile());
    }

    private static void drawPanel(Graphics2D g, List<Group> groups, List<ShuffleConfig> configs, String baseName,
            double top, double step, int plotTop, int plotW) {
        int y0 = plotTop + PLOT_H;
        g.setFont(SMALL);
        FontMetrics fm = g.getFontMetrics();
        for (double v = 0; v <= top + 1e-9; v += step) {
            int yy = yOf(v, top, y0);
            g.setColor(new Color(0xe6e6e6));
            g.drawLine(LEFT, yy, LEFT + plotW, yy);
            g.setColor(new Color(0x444444));
            String label = String.format(Locale.ROOT, "%.1f", v);
            g.drawString(label, LEFT - 8 - fm.stringWidth(label), yy + 4);
        }
        g.setColor(new Color(0x444444));
        g.setStroke(new BasicStroke(1f));
        g.drawLine(LEFT, plotTop, LEFT, y0);
        g.drawLine(LEFT, y0, LEFT + plotW, y0);
        AffineTransform saved = g.getTransform();
        g.setFont(NORMAL);
        g.rotate(-Math.PI / 2);
        String yLabel = "reduce-stage time ÷ " + baseName;
        g.drawString(yLabel, -(plotTop + PLOT_H / 2) - g.getFontMetrics().stringWidth(yLabel) / 2, 26);
        g.setTransform(saved);

        int bars = configs.size();
        int groupW = plotW / Math.max(1, groups.size());
        List<Runnable> valueLabels = new ArrayList<>(); // drawn last, over the 1.0 line
        for (int i = 0; i < groups.size(); i++) {
            Group grp = groups.get(i);
            int gx = LEFT + i * groupW + (groupW - bars * BAR_W) / 2;
            for (int c = 0; c < bars; c++) {
                double[] r = grp.ratios()[c];
                int x = gx + c * BAR_W;
                g.setFont(SMALL);
                if (Double.isNaN(r[0])) {
                    g.setColor(new Color(0xb00020));
                    g.drawString("fail", x + 4, y0 - 6);
                    continue;
                }
                int yy = yOf(r[0], top, y0);
                g.setColor(COLORS[configs.get(c).ordinal()]);
                g.fillRect(x + 2, yy, BAR_W - 4, y0 - yy);
                g.setColor(new Color(0x333333));
                g.setStroke(new BasicStroke(1.2f));
                int ymin = yOf(r[1], top, y0);
                int ymax = yOf(r[2], top, y0);
                int cx = x + BAR_W / 2;
                if (ymax != ymin) {
                    g.drawLine(cx, ymin, cx, ymax);
                    g.drawLine(cx - 4, ymin, cx + 4, ymin);
                    g.drawLine(cx - 4, ymax, cx + 4, ymax);
                }
                String v = String.format(Locale.ROOT, "%.2f", r[0]);
                int vw = g.getFontMetrics().stringWidth(v);
                int vy = Math.min(yy, ymax) - 5;
                valueLabels.add(() -> {
                    g.setFont(SMALL);
                    g.setColor(Color.WHITE);
                    g.fillRect(cx - vw / 2 - 1, vy - 10, vw + 2, 12);
                    g.setColor(new Color(0x333333));
                    g.drawString(v, cx - vw / 2, vy);
                });
            }
            int ly = y0 + 20;
            g.setColor(TEXT);
            g.setFont(NORMAL);
            for (String line : grp.labels()) {
                int w = g.getFontMetrics().stringWidth(line);
                g.drawString(line, LEFT + i * groupW + groupW / 2 - w / 2, ly);
                g.setFont(SMALL);
                g.setColor(new Color(0x555555));
                ly += 17;
            }
        }
        int y1 = yOf(1.0, top, y0);
        g.setColor(new Color(0x111111));
        g.setStroke(new BasicStroke(1.5f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10, new float[] {7, 5}, 0));
        g.drawLine(LEFT, y1, LEFT + plotW, y1);
        g.setStroke(new BasicStroke(1f));
        g.setFont(SMALL);
        g.drawString("1.0 = " + baseName, LEFT + plotW + 6, y1 + 4);
        valueLabels.forEach(Runnable::run);
    }

    /** The image's graphics, antialiased, on a white background. */
    static Graphics2D canvas(BufferedImage img) {
        Graphics2D g = img.createGraphics();
        g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
        g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
        g.setColor(Color.WHITE);
        g.fillRect(0, 0, img.getWidth(), img.getHeight());
        return g;
    }

    private static int yOf(double v, double top, int y0) {
        return (int) Math.round(y0 - v / top * PLOT_H);
    }
}
