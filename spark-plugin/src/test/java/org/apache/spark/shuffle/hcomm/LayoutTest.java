package org.apache.spark.shuffle.hcomm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.apache.spark.shuffle.hcomm.internal.conf.LogCategory;
import org.junit.jupiter.api.Test;

/**
 * The plugin's rooms (docs/ARCHITECTURE.md, "Packages"), read from the sources. Cohesion is the rule: a class holds
 * one responsibility and a package one role. Sizes are only a hint of where that may have slipped, so a package of
 * more than {@value #CLASSES_HINT} classes or a class (the bridge's too) of more than {@value #LINES_HINT} lines is
 * printed as a warning, not a failure. What fails is structure: packages that depend on each other both ways, and a
 * logger not taken from {@link LogCategory} (whose names operators' log settings rely on).
 */
class LayoutTest {
    /** Classes in a package past which the test warns. */
    private static final int CLASSES_HINT = 12;
    /** Lines in a class past which the test warns. */
    private static final int LINES_HINT = 400;
    private static final Path PLUGIN = Path.of(System.getProperty("user.dir"));
    private static final Pattern PACKAGE = Pattern.compile("^package ([\\w.]+);", Pattern.MULTILINE);
    private static final Pattern IMPORT = Pattern.compile(
            "^import (org\\.apache\\.spark\\.shuffle\\.hcomm[\\w.]*)\\.[A-Z]\\w*;", Pattern.MULTILINE);

    private static List<Path> javaFiles(Path root) throws IOException {
        try (Stream<Path> s = Files.walk(root)) {
            return s.filter(p -> p.toString().endsWith(".java")).sorted().toList();
        }
    }

    private static List<Path> mainSources() throws IOException {
        List<Path> all = new ArrayList<>(javaFiles(PLUGIN.resolve("src/main/java")));
        all.addAll(javaFiles(PLUGIN.resolve("src/compat")));
        return all;
    }

    private static String read(Path p) throws IOException {
        return Files.readString(p, StandardCharsets.UTF_8);
    }

    private static String packageOf(String source) {
        Matcher m = PACKAGE.matcher(source);
        assertTrue(m.find());
        return m.group(1);
    }

    /** Prints a size over its hint; never fails: the size only asks whether the room still holds one role. */
    private static void warn(String what) {
        System.err.println("LayoutTest WARNING (a hint, not a failure): " + what);
    }

    @Test
    void packagesOverTwelveClassesAreWarnedAbout() throws IOException {
        Map<String, Integer> perPackage = new TreeMap<>();
        for (Path p : javaFiles(PLUGIN.resolve("src/main/java"))) {
            if (!p.getFileName().toString().equals("package-info.java")) {
                perPackage.merge(packageOf(read(p)), 1, Integer::sum);
            }
        }
        perPackage.forEach((pkg, n) -> {
            if (n > CLASSES_HINT) {
                warn("package " + pkg + " has " + n + " classes (hint: " + CLASSES_HINT
                        + "); does it still hold one role?");
            }
        });
    }

    @Test
    void classesOverFourHundredLinesAreWarnedAbout() throws IOException {
        List<Path> all = new ArrayList<>(mainSources());
        all.addAll(javaFiles(PLUGIN.resolve("../native-bridge/src/main/java").normalize()));
        for (Path p : all) {
            long lines = read(p).lines().count();
            if (lines > LINES_HINT) {
                warn("class " + p.getFileName().toString().replace(".java", "") + " ("
                        + PLUGIN.getParent().relativize(p.toAbsolutePath().normalize()) + ") has " + lines
                        + " lines (hint: " + LINES_HINT + "); does it still hold one responsibility?");
            }
        }
    }

    @Test
    void packagesDependOnEachOtherOneWay() throws IOException {
        Map<String, Set<String>> deps = new TreeMap<>();
        for (Path p : mainSources()) {
            String source = read(p);
            String pkg = packageOf(source);
            Matcher m = IMPORT.matcher(source);
            while (m.find()) {
                if (!m.group(1).equals(pkg)) {
                    deps.computeIfAbsent(pkg, k -> new TreeSet<>()).add(m.group(1));
                }
            }
        }
        for (String pkg : deps.keySet()) {
            assertTrue(!reaches(deps, pkg, pkg, new TreeSet<>()), pkg + " depends on itself through " + deps);
        }
    }

    private static boolean reaches(Map<String, Set<String>> deps, String from, String to, Set<String> seen) {
        for (String d : deps.getOrDefault(from, Set.of())) {
            if (d.equals(to) || seen.add(d) && reaches(deps, d, to, seen)) {
                return true;
            }
        }
        return false;
    }

    @Test
    void loggersComeFromTheLogCategoriesOfTheFirstLayout() throws IOException {
        for (Path p : mainSources()) {
            String source = read(p);
            boolean own = p.endsWith("LogCategory.java") || p.endsWith("HcommShuffleManager.java");
            assertTrue(own || !source.contains("LoggerFactory.getLogger"), p + " names a logger of its own");
        }
        List<String> names = Stream.of(LogCategory.values()).map(LogCategory::loggerName).sorted().toList();
        assertEquals(Stream.of("DriverState", "ExecutorAgent", "ExecutorRuntime", "HcommShuffleReader",
                "MapOutputPublisher", "PublishingShuffleWriter", "StageChannels")
                .map(n -> "org.apache.spark.shuffle.hcomm.internal." + n).sorted().toList(), names);
    }
}
