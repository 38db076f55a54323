package org.hcomm.bridge.install;

import com.sun.jna.Native;
import com.sun.jna.Platform;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * What this host offers the binding, found without loading anything: the library file that would be loaded and
 * why (provider, explicit path, {@code $ASCEND_HOME_PATH}, the search order), the HComm headers of a CANN install,
 * and its version where the install says. The loader and the doctor both find the library through it.
 *
 * <p>Search order: the explicit file when one is named (nothing else is tried); else for {@code cann} first
 * {@code $ASCEND_HOME_PATH/<arch>-linux/lib64}, then the directories of {@code jna.library.path},
 * {@code java.library.path} and {@code LD_LIBRARY_PATH}; for {@code soft} last the library bundled in the jar.
 */
public record Install(Provider provider, String ascendHome, Location library, Path headers, String version) {

    /** Where the library is: how it was found ({@code explicit}, {@code system}, {@code bundled}), or not. */
    public record Location(String how, File file, List<String> tried) {
        public boolean found() {
            return file != null;
        }

        /** {@code how:path}, or {@code not found}. */
        public String describe() {
            return found() ? how + ":" + file.getAbsolutePath() : "not found";
        }
    }

    /** The host's CPU architecture as CANN names its directories. */
    public static String arch() {
        return Platform.isARM() ? "aarch64" : "x86_64";
    }

    /** Looks at this host for {@code provider}; {@code explicitLibrary} may be null or empty. */
    public static Install discover(Provider provider, String explicitLibrary) {
        String home = System.getenv("ASCEND_HOME_PATH");
        home = home == null || home.isBlank() ? null : home;
        Location lib = locate(provider, explicitLibrary, home);
        Path headers = null;
        String version = null;
        if (provider == Provider.CANN && home != null && fromInstall(lib, home)) {
            // the install's headers and version speak for its own library only
            Path dir = archDir(home).resolve("include").resolve("hcomm");
            headers = Files.isDirectory(dir) ? dir : null;
            version = cannVersion(home).orElse(null);
        }
        return new Install(provider, home, lib, headers, version);
    }

    /**
     * The install's HCCL headers ({@code <arch>-linux/include/hccl}: {@code hccl_types.h}, {@code hccl_res.h}, and
     * from CANN 9.x {@code hccl_channel.h}), which declare the communicator path's structs; null unless the library
     * is this install's own (like {@link #headers()}) and the directory exists. CANN 8.5 has this directory and no
     * {@code include/hcomm}.
     */
    public Path hcclHeaders() {
        if (provider != Provider.CANN || !libraryFromAscendHome()) {
            return null;
        }
        Path dir = archDir(ascendHome).resolve("include").resolve("hccl");
        return Files.isDirectory(dir) ? dir : null;
    }

    /** Whether the library found is the one of the CANN install at {@code $ASCEND_HOME_PATH}. */
    public boolean libraryFromAscendHome() {
        return ascendHome != null && fromInstall(library, ascendHome);
    }

    private static boolean fromInstall(Location lib, String home) {
        if (!lib.found()) {
            return false;
        }
        try { // the directory it was found in, not where a link in it points: lib64 may link to a package
            return lib.file().getAbsoluteFile().getParentFile().getCanonicalFile().toPath()
                    .startsWith(archDir(home).toFile().getCanonicalFile().toPath());
        } catch (IOException e) {
            return false;
        }
    }

    /** {@code $ASCEND_HOME_PATH/<arch>-linux}. */
    public static Path archDir(String ascendHome) {
        return Path.of(ascendHome, arch() + "-linux");
    }

    /** The version files a CANN install may carry, in the order read. */
    static List<Path> versionFiles(String ascendHome) {
        return List.of(Path.of(ascendHome, "version.cfg"), Path.of(ascendHome, "version.info"),
                archDir(ascendHome).resolve("ascend_toolkit_install.info"));
    }

    private static Optional<String> cannVersion(String home) {
        for (Path f : versionFiles(home)) {
            try {
                for (String line : Files.readAllLines(f, StandardCharsets.UTF_8)) {
                    String l = line.trim();
                    int eq = l.indexOf('=');
                    if (eq > 0 && l.substring(0, eq).trim().toLowerCase().endsWith("version")) {
                        return Optional.of(l.substring(eq + 1).trim() + " (" + f + ")");
                    }
                }
            } catch (IOException e) {
                // absent or unreadable: try the next one
            }
        }
        return Optional.empty();
    }

    private static Location locate(Provider provider, String explicit, String ascendHome) {
        List<String> tried = new ArrayList<>();
        if (explicit != null && !explicit.isBlank()) {
            tried.add("explicit " + explicit);
            File f = new File(explicit);
            return new Location("explicit", f.isFile() ? f : null, tried);
        }
        String fileName = System.mapLibraryName(provider.libraryName());
        for (String dir : systemDirs(provider, ascendHome)) {
            File f = new File(dir, fileName);
            tried.add(f.getPath());
            if (f.isFile()) {
                return new Location("system", f, tried);
            }
        }
        if (provider == Provider.SOFT) {
            tried.add("classpath:" + Platform.RESOURCE_PREFIX + "/" + fileName);
            return new Location("bundled", extractedSoft(), tried);
        }
        return new Location("system", null, tried);
    }

    private static File extracted;

    /** The bundled soft HComm, extracted once per process (so the checks and the loader open the same file). */
    private static synchronized File extractedSoft() {
        if (extracted == null) {
            try {
                extracted = Native.extractFromResourcePath(Provider.SOFT.libraryName(),
                        Install.class.getClassLoader());
            } catch (IOException e) {
                return null;
            }
        }
        return extracted;
    }

    private static Set<String> systemDirs(Provider provider, String ascendHome) {
        Set<String> dirs = new LinkedHashSet<>();
        if (provider == Provider.CANN && ascendHome != null) {
            dirs.add(archDir(ascendHome).resolve("lib64").toString());
        }
        addPath(dirs, System.getProperty("jna.library.path"));
        addPath(dirs, System.getProperty("java.library.path"));
        addPath(dirs, System.getenv("LD_LIBRARY_PATH"));
        return dirs;
    }

    private static void addPath(Set<String> dirs, String path) {
        if (path == null) {
            return;
        }
        for (String d : path.split(File.pathSeparator)) {
            if (!d.isBlank()) {
                dirs.add(d);
            }
        }
    }
}
