package org.hcomm.shuffle.benchmarks.ab;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Per-query answers of one cell compared with builtin's of the same repetition ({@link QueryAnswers}): for each
 * other configuration and query the worst verdict over the repetitions, and which queries builtin's answers show to
 * depend on the engine (rows that tie on the ORDER BY keys; double or float columns). Real differences (and a
 * repetition without a builtin answer to compare with) fail the suite.
 */
record AnswerCheck(Map<ShuffleConfig, Map<String, QueryAnswers.Comparison>> byConfig, List<String> tiedQueries,
        List<String> floatQueries, List<String> realDifferences) {

    /** The checks of the cells whose runs wrote answers files (the TPC-DS cells). */
    static Map<Preset.Cell, AnswerCheck> of(Preset preset, List<RunResult> results, Path runsDir) {
        Map<Preset.Cell, AnswerCheck> out = new LinkedHashMap<>();
        for (Preset.Cell cell : preset.cells()) {
            List<RunResult> mine = results.stream().filter(r -> r.cell().equals(cell) && r.ok()).toList();
            if (mine.stream().anyMatch(r -> Files.exists(r.answersFile(runsDir)))) {
                out.put(cell, ofCell(preset, mine, runsDir));
            }
        }
        return out;
    }

    private static AnswerCheck ofCell(Preset preset, List<RunResult> mine, Path runsDir) {
        Map<ShuffleConfig, Map<String, QueryAnswers.Comparison>> byConfig = new LinkedHashMap<>();
        LinkedHashSet<String> tied = new LinkedHashSet<>(); // builtin's order: the queries'
        LinkedHashSet<String> floats = new LinkedHashSet<>();
        List<String> problems = new ArrayList<>();
        for (int rep = 0; rep < preset.reps(); rep++) {
            Optional<RunResult> base = RunResult.successful(mine, rep, ShuffleConfig.BUILTIN);
            if (base.isEmpty()) {
                problems.add("repetition " + rep + ": no successful builtin run to compare the answers with");
                continue;
            }
            Map<String, QueryAnswers.Answer> reference = read(base.get().answersFile(runsDir));
            reference.values().forEach(a -> {
                if (a.hasTies()) {
                    tied.add(a.query());
                }
                if (a.hasFloatingPoint()) {
                    floats.add(a.query());
                }
            });
            for (ShuffleConfig c : preset.configs()) {
                Optional<RunResult> run = RunResult.successful(mine, rep, c);
                if (c == ShuffleConfig.BUILTIN || run.isEmpty()) {
                    continue;
                }
                Map<String, QueryAnswers.Answer> other = read(run.get().answersFile(runsDir));
                Map<String, QueryAnswers.Comparison> verdicts = byConfig.computeIfAbsent(c, k -> new LinkedHashMap<>());
                for (QueryAnswers.Answer ref : reference.values()) {
                    QueryAnswers.Answer o = other.get(ref.query());
                    QueryAnswers.Comparison v = o == null
                            ? new QueryAnswers.Comparison(QueryAnswers.Verdict.DIFFERENT, "no answer")
                            : compared(ref, o);
                    verdicts.merge(ref.query(), v, (a, b) -> a.verdict().compareTo(b.verdict()) >= 0 ? a : b);
                    if (v.verdict() == QueryAnswers.Verdict.DIFFERENT) {
                        problems.add(String.format("%s rep %d %s: %s", c.label(), rep, ref.query(), v.detail()));
                    }
                }
            }
        }
        return new AnswerCheck(byConfig, List.copyOf(tied), List.copyOf(floats), problems);
    }

    /** The comparison; one that cannot be made (answers it does not understand) is a real difference, not a crash. */
    private static QueryAnswers.Comparison compared(QueryAnswers.Answer ref, QueryAnswers.Answer other) {
        try {
            return QueryAnswers.compare(ref, other);
        } catch (RuntimeException e) {
            return new QueryAnswers.Comparison(QueryAnswers.Verdict.DIFFERENT, "could not be compared: " + e);
        }
    }

    private static Map<String, QueryAnswers.Answer> read(Path file) {
        try {
            Map<String, QueryAnswers.Answer> out = new LinkedHashMap<>();
            for (QueryAnswers.Answer a : QueryAnswers.parse(Files.readAllLines(file, StandardCharsets.UTF_8))) {
                out.put(a.query(), a);
            }
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException("reading the answers " + file, e);
        } catch (RuntimeException e) {
            throw new IllegalStateException("malformed answers file " + file + ": " + e.getMessage(), e);
        }
    }
}
