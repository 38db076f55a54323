package org.apache.spark.shuffle.hcomm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

/**
 * The repository's documentation stands alone: no source, build file, script or document names a background page
 * that is not in the repository (the project's design inputs were kept beside the checkout once), the in-repo
 * pages it names exist, with the sections cited, and every relative link of the README and of docs/ resolves.
 * A page may move into docs/: from then on it is cited as {@code docs/<name>} (bare inside docs/ and as the text of a
 * link that resolves).
 */
class DocsStandAloneTest {
    private static final Path ROOT = repositoryRoot();
    /** Pages that lived outside the repository; the names are built here so that this file does not name them. */
    private static final List<String> OUTSIDE_PAGES = Stream.of("DESIGN", "HCOMM_ABI", "HCCL_COMMUNICATOR", "LAYOUT",
            "STYLE", "SPARK_TESTING").map(n -> n + ".md").toList();
    /** The folder beside the checkout those pages lived in, as a path ("../x", "/work/x", "x/PAGE.md"). */
    private static final String FOLDER = "sha" + "red";
    private static final Pattern OUTSIDE_FOLDER = Pattern.compile("(?:\\.\\./|/work/)" + FOLDER + "\\b|(?<![\\w./-])"
            + FOLDER + "/[A-Z]");
    /** A citation of the design page by its bare name and a section sign. */
    private static final Pattern DESIGN_CITATION = Pattern.compile("\\b" + "DESIGN" + " \u00a7");
    private static final Pattern DOCS_PAGE = Pattern.compile("(?<![\\w./-])docs/([\\w-]+\\.md)");
    /** A citation of a numbered page: the page, then section numbers ("§2.10", "§3.4, §3.6", "§1-§6"). */
    private static final Pattern SECTION_CITATION = Pattern.compile(
            "(?<![\\w-])(HCOMM_ABI|COMMUNICATOR)\\.md[`)]?((?:\\s*(?:,|and|to|-|\u2013)?\\s*\u00a7\\d+(?:\\.\\d+)?)+)");
    private static final Pattern SECTION_NUMBER = Pattern.compile("\u00a7(\\d+(?:\\.\\d+)?)");
    /** {@code [text](target "title")} or an image; group 2 is the target. */
    private static final Pattern INLINE_LINK = Pattern.compile(
            "!?\\[([^\\]]*)]\\(\\s*<?([^)\\s>]+)>?(?:\\s+\"[^\"]*\")?\\s*\\)");
    private static final Pattern REFERENCE_LINK = Pattern.compile("(?m)^\\s{0,3}\\[[^\\]]+]:\\s*<?(\\S+?)>?(?:\\s|$)");
    private static final Set<String> SCANNED_NAMES = Set.of("Makefile", "run");
    private static final List<String> SCANNED_ENDINGS = List.of(".java", ".scala", ".c", ".h", ".sh", ".py", ".md",
            ".xml", ".properties", ".map", ".config");

    @Test
    void nothingNamesAPageOutsideTheRepository() throws IOException {
        List<String> found = new ArrayList<>();
        for (Path file : scannedFiles()) {
            String rel = ROOT.relativize(file).toString();
            boolean inDocs = file.getParent().equals(ROOT.resolve("docs"));
            String text = read(file);
            if (rel.endsWith(".md")) {
                text = withoutResolvingLinks(file, text);
            }
            String[] lines = text.split("\n", -1);
            for (int i = 0; i < lines.length; i++) {
                String line = lines[i];
                for (String page : OUTSIDE_PAGES) {
                    if (mentionsOutside(line, page, inDocs)) {
                        found.add(rel + ":" + (i + 1) + " names " + page + ": " + line.strip());
                    }
                }
                if (OUTSIDE_FOLDER.matcher(line).find() || DESIGN_CITATION.matcher(line).find()) {
                    found.add(rel + ":" + (i + 1) + " names the folder beside the checkout: " + line.strip());
                }
            }
        }
        assertEquals(List.of(), found, "cite the page in docs/ (docs/HCOMM_ABI.md, docs/COMMUNICATOR.md, "
                + "docs/ARCHITECTURE.md, docs/DEVELOPMENT.md) instead");
    }

    @Test
    void theDocsPagesNamedExistWithTheSectionsCited() throws IOException {
        List<String> found = new ArrayList<>();
        for (Path file : scannedFiles()) {
            String rel = ROOT.relativize(file).toString();
            String text = read(file);
            Matcher page = DOCS_PAGE.matcher(text);
            while (page.find()) {
                if (!Files.isRegularFile(ROOT.resolve("docs").resolve(page.group(1)))) {
                    found.add(rel + " names docs/" + page.group(1) + ", which does not exist");
                }
            }
            Matcher cite = SECTION_CITATION.matcher(text.replaceAll("\\s*\\n\\s*(?:\\*|//|#)?\\s*", " "));
            while (cite.find()) {
                Set<String> sections = sections(ROOT.resolve("docs").resolve(cite.group(1) + ".md"));
                Matcher n = SECTION_NUMBER.matcher(cite.group(2));
                while (n.find()) {
                    if (!sections.contains(n.group(1))) {
                        found.add(rel + " cites " + cite.group(1) + ".md \u00a7" + n.group(1)
                                + ", which it does not have");
                    }
                }
            }
        }
        assertEquals(List.of(), found);
    }

    @Test
    void relativeLinksOfTheReadmeAndDocsResolve() throws IOException {
        List<Path> pages = new ArrayList<>(List.of(ROOT.resolve("README.md")));
        try (Stream<Path> docs = Files.list(ROOT.resolve("docs"))) {
            docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(pages::add);
        }
        List<String> broken = new ArrayList<>();
        int links = 0;
        for (Path page : pages) {
            for (String target : relativeTargets(read(page))) {
                links++;
                if (!Files.exists(resolve(page, target))) {
                    broken.add(ROOT.relativize(page) + " -> " + target);
                }
            }
        }
        assertTrue(links > 0, "no relative link found: the link pattern is wrong");
        assertEquals(List.of(), broken, "relative links to files that do not exist");
    }

    /** Whether a line names {@code page} as a page outside the repository. */
    private static boolean mentionsOutside(String line, String page, boolean inDocs) {
        boolean movedIn = Files.isRegularFile(ROOT.resolve("docs").resolve(page));
        Matcher m = Pattern.compile("(?<![\\w-])" + Pattern.quote(page)).matcher(line);
        while (m.find()) {
            boolean asDocsPath = m.start() >= 5 && line.startsWith("docs/", m.start() - 5);
            if (!movedIn || !(asDocsPath || inDocs)) {
                return true;
            }
        }
        return false;
    }

    /** The text with every link whose target exists taken out (so that its text may name the page it links). */
    private static String withoutResolvingLinks(Path page, String text) {
        Matcher m = INLINE_LINK.matcher(text);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            String target = m.group(2);
            boolean resolves = !isExternal(target) && Files.exists(resolve(page, target));
            m.appendReplacement(out, Matcher.quoteReplacement(resolves ? "" : m.group()));
        }
        m.appendTail(out);
        return out.toString();
    }

    private static List<String> relativeTargets(String markdown) {
        String text = markdown.replaceAll("(?s)```.*?```", "");
        List<String> targets = new ArrayList<>();
        for (Pattern p : List.of(INLINE_LINK, REFERENCE_LINK)) {
            Matcher m = p.matcher(text);
            while (m.find()) {
                String target = m.group(m.groupCount());
                if (!isExternal(target)) {
                    targets.add(target);
                }
            }
        }
        return targets;
    }

    private static boolean isExternal(String target) {
        return target.startsWith("#") || target.matches("^[a-zA-Z][a-zA-Z0-9+.-]*:.*");
    }

    private static Path resolve(Path page, String target) {
        String path = target.replaceAll("[#?].*$", "");
        return path.isEmpty() ? page : page.getParent().resolve(path).normalize();
    }

    /** The section numbers of a page: "2" for "## 2. Types", "2.10" for "### 2.10 HcommChannelDesc". */
    private static Set<String> sections(Path page) throws IOException {
        Set<String> numbers = new TreeSet<>();
        Matcher m = Pattern.compile("(?m)^#{2,4} (\\d+(?:\\.\\d+)?)\\.?\\s").matcher(read(page));
        while (m.find()) {
            numbers.add(m.group(1));
        }
        return numbers;
    }

    /** The repository's files to read: git's list where git answers, else every file outside build output. */
    private static List<Path> scannedFiles() throws IOException {
        List<Path> files = new ArrayList<>();
        for (Path p : repositoryFiles()) {
            String name = p.getFileName().toString();
            if (Files.isRegularFile(p)
                    && (SCANNED_NAMES.contains(name) || SCANNED_ENDINGS.stream().anyMatch(name::endsWith))) {
                files.add(p);
            }
        }
        assertTrue(files.stream().anyMatch(p -> p.endsWith("pom.xml")), "no file found under " + ROOT);
        return files;
    }

    private static List<Path> repositoryFiles() throws IOException {
        try {
            Process git = new ProcessBuilder("git", "ls-files", "-z").directory(ROOT.toFile())
                    .redirectError(ProcessBuilder.Redirect.DISCARD).start();
            byte[] out = git.getInputStream().readAllBytes();
            if (git.waitFor(60, TimeUnit.SECONDS) && git.exitValue() == 0 && out.length > 0) {
                List<Path> files = new ArrayList<>();
                for (String name : new String(out, StandardCharsets.UTF_8).split("\0")) {
                    files.add(ROOT.resolve(name));
                }
                return files;
            }
        } catch (IOException e) {
            // no git here: walk the tree instead
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try (Stream<Path> walk = Files.walk(ROOT)) {
            return walk.filter(p -> Stream.of(ROOT.relativize(p).toString().split("/"))
                    .noneMatch(s -> s.equals("target") || s.equals(".git"))).sorted().toList();
        }
    }

    private static String read(Path p) throws IOException {
        return Files.readString(p, StandardCharsets.UTF_8);
    }

    /** The folder above spark-plugin that holds the parent pom and docs/. */
    private static Path repositoryRoot() {
        Path dir = Path.of(System.getProperty("user.dir")).toAbsolutePath();
        for (Path p = dir; p != null; p = p.getParent()) {
            if (Files.isRegularFile(p.resolve("pom.xml")) && Files.isDirectory(p.resolve("docs"))) {
                return p;
            }
        }
        throw new IllegalStateException("no repository root (pom.xml and docs/) above " + dir);
    }
}
