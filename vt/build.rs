//! Finds libghostty-vt and links it dynamically.
//!
//! Order: `LIBGHOSTTY_VT_DIR` (a folder a packager or a user who builds Ghostty filled), else the pinned
//! `pyghostty` wheel for the target (x86-64 or AArch64 Linux, glibc) from the Python package index, fetched
//! once with pip into a cache under `target/` and verified by sha256. Both sources must match the Ghostty revision that `src/ffi.rs` was written against.
//! The binaries get an rpath of `$ORIGIN` (an installed binary next to its library) and of the library's
//! folder (everything run from `target/`), and dependents learn the folder through `DEP_GHOSTTY_VT_LIBDIR`.

use std::env;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

/// The pinned Python package that ships the prebuilt library.
const PACKAGE: &str = "pyghostty==0.1.3";
/// One prebuilt library: the Rust target it serves, pip's platform tag, the wheel's file name and sha256 as pip
/// must deliver it, and the sha256 of the library inside.
struct Wheel {
    target: &'static str,
    platform: &'static str,
    file: &'static str,
    sha256: &'static str,
    lib_sha256: &'static str,
}

/// The wheels of the pinned package, one per Linux (glibc) architecture; all carry the same `_cdef.py`.
const WHEELS: [Wheel; 2] = [
    Wheel {
        target: "x86_64-unknown-linux-gnu",
        platform: "manylinux_2_28_x86_64",
        file: "pyghostty-0.1.3-py3-none-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl",
        sha256: "e215282798435d0db2042f4c61ecc9231bf66ea7ec68dbb16a43fe84e9685269",
        lib_sha256: "2c89c656699fa7651e4d433801f1e6e6e6bc5326b6124c2e3646d4db69545822",
    },
    Wheel {
        target: "aarch64-unknown-linux-gnu",
        platform: "manylinux_2_28_aarch64",
        file: "pyghostty-0.1.3-py3-none-manylinux_2_27_aarch64.manylinux_2_28_aarch64.whl",
        sha256: "1bdee612b32083ce3c34a96e0195a1f1f16aeb3090971c9159da7df494bd3822",
        lib_sha256: "8fd97bc67191c7009cf013c4d3e603f692fca4ef585f186ff90990102f56536d",
    },
];
/// The library inside every wheel.
const LIB_IN_WHEEL: &str = "pyghostty/_lib/libghostty-vt.so";
/// The C declarations the library was generated with: our ABI reference, and the proof of its revision.
const CDEF_IN_WHEEL: &str = "pyghostty/_cdef.py";
const CDEF_SHA256: &str = "f2ccbf265b208d00767175b8a5eb6db3398824bb31f1cf1cf1d5169c2ad5881e";
/// Licence texts that travel with the library.
const LICENCES_IN_WHEEL: [&str; 2] =
    ["pyghostty-0.1.3.dist-info/licenses/LICENSE", "pyghostty-0.1.3.dist-info/licenses/LICENSE.ghostty"];
/// The library's file name, and its SONAME, which is what binaries record as NEEDED.
const LIB_FILE: &str = "libghostty-vt.so";
const LIB_SONAME: &str = "libghostty-vt.so.0";
/// In a `LIBGHOSTTY_VT_DIR`, the file that names the Ghostty revision the library was built from.
const REVISION_FILE: &str = "GHOSTTY_REVISION";

/// The modification time the fetched library gets, after the Unix epoch: a day, long before any build.
const FETCHED_MTIME: std::time::Duration = std::time::Duration::from_secs(86_400);

fn main() {
    println!("cargo:rerun-if-env-changed=LIBGHOSTTY_VT_DIR");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=src/ffi.rs");

    let revision = pinned_revision();
    let dir = match env::var_os("LIBGHOSTTY_VT_DIR") {
        Some(dir) if !dir.is_empty() => supplied(Path::new(&dir), &revision),
        _ => fetched(&revision),
    };
    let dir = dir.unwrap_or_else(|message| fail(&message, &revision));

    println!("cargo:rerun-if-changed={}", dir.join(LIB_FILE).display());
    println!("cargo:rustc-link-search=native={}", dir.display());
    println!("cargo:rustc-link-lib=dylib=ghostty-vt");
    // Our own tests, examples and benches; dependents repeat this from DEP_GHOSTTY_VT_LIBDIR.
    println!("cargo:rustc-link-arg=-Wl,-rpath,$ORIGIN:{}", dir.display());
    println!("cargo:libdir={}", dir.display());
    // For the test that the fetched library cannot make the next build run this script again.
    println!("cargo:rustc-env=OPENCODE_PTY_VT_LIBDIR={}", dir.display());
    println!("cargo:revision={revision}");
}

/// Stops the build with a message that says what to install or set: pip when it is missing, the network when
/// pip is there but could not fetch, and in either case the offline route with the revision it needs.
fn fail(message: &str, revision: &str) -> ! {
    eprintln!("\nerror: opencode-pty-vt cannot find libghostty-vt.\n{message}\n");
    let pip = Command::new(python()).args(["-m", "pip", "--version"]).output().is_ok_and(|o| o.status.success());
    if pip {
        eprintln!(
            "pip is installed, so the download itself failed: check that this machine reaches the Python \
             package index (or set PIP_INDEX_URL to a mirror that has {PACKAGE})."
        );
    } else {
        eprintln!(
            "Install Python 3 with pip (`python3 -m pip --version` must work), so the build can fetch {PACKAGE} \
             from the Python package index once into target/."
        );
    }
    eprintln!(
        "Offline: set LIBGHOSTTY_VT_DIR to a folder holding {LIB_FILE}, {LIB_SONAME} (a symlink or copy) and a \
         file {REVISION_FILE} that holds the Ghostty revision this build needs: {revision} (the library from \
         the wheel {} is that build).",
        wheel_for_target().map_or("for this target's architecture, when there is one", |wheel| wheel.file)
    );
    std::process::exit(1);
}

/// The revision `src/ffi.rs` declares in `GHOSTTY_REVISION`.
fn pinned_revision() -> String {
    let ffi = fs::read_to_string("src/ffi.rs").expect("vt/src/ffi.rs is readable");
    ffi.lines()
        .find_map(|line| {
            let rest = line.trim().strip_prefix("pub const GHOSTTY_REVISION: &str = \"")?;
            Some(rest.split('"').next()?.to_owned())
        })
        .expect("vt/src/ffi.rs declares `pub const GHOSTTY_REVISION: &str = \"...\";`")
}

/// Checks a folder given through `LIBGHOSTTY_VT_DIR`.
fn supplied(dir: &Path, revision: &str) -> Result<PathBuf, String> {
    let dir = dir.canonicalize().map_err(|e| format!("LIBGHOSTTY_VT_DIR={} cannot be opened: {e}", dir.display()))?;
    for file in [LIB_FILE, LIB_SONAME] {
        if !dir.join(file).is_file() {
            return Err(format!("LIBGHOSTTY_VT_DIR={} has no {file}.", dir.display()));
        }
    }
    let stated = fs::read_to_string(dir.join(REVISION_FILE))
        .map_err(|e| format!("LIBGHOSTTY_VT_DIR={} has no readable {REVISION_FILE}: {e}", dir.display()))?;
    let stated = stated.trim();
    if !revision_matches(stated, revision) {
        return Err(format!(
            "LIBGHOSTTY_VT_DIR={} holds Ghostty {stated}, but vt/src/ffi.rs is written against {revision}.",
            dir.display()
        ));
    }
    println!("cargo:rerun-if-changed={}", dir.join(REVISION_FILE).display());
    Ok(dir)
}

/// Two revisions match when one is a prefix of the other (short and full hashes), and neither is empty.
fn revision_matches(a: &str, b: &str) -> bool {
    !a.is_empty() && !b.is_empty() && (a.starts_with(b) || b.starts_with(a))
}

/// The cached library from the pinned wheel, fetching it first when the cache is empty.
fn fetched(revision: &str) -> Result<PathBuf, String> {
    let wheel = wheel_for_target()?;
    let cache = target_dir().join("libghostty-vt").join(wheel.sha256.get(..16).unwrap_or(wheel.sha256));
    if cache_is_valid(&cache, wheel) {
        // A cache fetched by an older build script still has the time it was written at.
        date_library(&cache)?;
        return Ok(cache);
    }
    let staging = cache.with_extension(format!("tmp-{}", std::process::id()));
    let _ = fs::remove_dir_all(&staging);
    fs::create_dir_all(&staging).map_err(|e| format!("cannot create {}: {e}", staging.display()))?;
    let result = populate(&staging, wheel, revision);
    if let Err(message) = result {
        let _ = fs::remove_dir_all(&staging);
        return Err(message);
    }
    // Another build may have filled the cache meanwhile; either copy is verified and identical.
    if fs::rename(&staging, &cache).is_err() {
        let _ = fs::remove_dir_all(&staging);
        if !cache_is_valid(&cache, wheel) {
            return Err(format!("cannot move the fetched library into {}", cache.display()));
        }
    }
    Ok(cache)
}

/// The workspace's `target/` folder: the first ancestor of `OUT_DIR` that cargo tagged as a cache directory.
fn target_dir() -> PathBuf {
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    out.ancestors().find(|dir| dir.join("CACHEDIR.TAG").is_file()).map(Path::to_path_buf).unwrap_or(out)
}

/// The pinned wheel for the target cargo builds for (`TARGET`), or why there is none.
fn wheel_for_target() -> Result<&'static Wheel, String> {
    let target = env::var("TARGET").unwrap_or_default();
    WHEELS.iter().find(|wheel| wheel.target == target).ok_or_else(|| {
        let known: Vec<&str> = WHEELS.iter().map(|wheel| wheel.target).collect();
        format!("{PACKAGE} carries a prebuilt library only for {}, not {target}.", known.join(" and "))
    })
}

fn cache_is_valid(dir: &Path, wheel: &Wheel) -> bool {
    dir.join(LIB_SONAME).is_file() && sha256_of(&dir.join(LIB_FILE)).is_ok_and(|sum| sum == wheel.lib_sha256)
}

/// Downloads the wheel into `staging`, verifies it and extracts the library, its ABI reference and licences.
fn populate(staging: &Path, wheel: &Wheel, revision: &str) -> Result<(), String> {
    let requirements = staging.join("requirements.txt");
    fs::write(&requirements, format!("{PACKAGE} --hash=sha256:{}\n", wheel.sha256))
        .map_err(|e| format!("cannot write {}: {e}", requirements.display()))?;
    let wheels = staging.join("wheel");
    let output = Command::new(python())
        .args(["-m", "pip", "download", "--no-deps", "--require-hashes", "--only-binary=:all:"])
        .args(["--platform", wheel.platform, "--python-version", "3.12"])
        .args(["--disable-pip-version-check", "--no-input", "--quiet", "-r"])
        .arg(&requirements)
        .arg("-d")
        .arg(&wheels)
        .output()
        .map_err(|e| format!("Running `{} -m pip` failed: {e}", python()))?;
    if !output.status.success() {
        return Err(format!(
            "`{} -m pip download {PACKAGE}` failed ({}):\n{}",
            python(),
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    let downloaded = wheels.join(wheel.file);
    check_sha256(&downloaded, wheel.sha256)?;

    let script = "import sys, zipfile\n\
                  z = zipfile.ZipFile(sys.argv[1])\n\
                  for pair in sys.argv[3:]:\n    \
                      member, name = pair.split('=', 1)\n    \
                      open(sys.argv[2] + '/' + name, 'wb').write(z.read(member))\n";
    let mut extract = Command::new(python());
    extract.args(["-c", script]).arg(&downloaded).arg(staging);
    extract.arg(format!("{LIB_IN_WHEEL}={LIB_FILE}")).arg(format!("{CDEF_IN_WHEEL}=_cdef.py"));
    for licence in LICENCES_IN_WHEEL {
        let name = licence.rsplit('/').next().unwrap_or(licence);
        extract.arg(format!("{licence}={name}"));
    }
    let output = extract.output().map_err(|e| format!("Running `{}` to unzip the wheel failed: {e}", python()))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(format!("Unzipping {} failed:\n{}", wheel.file, stderr.trim()));
    }
    check_sha256(&staging.join(LIB_FILE), wheel.lib_sha256)?;
    check_sha256(&staging.join("_cdef.py"), CDEF_SHA256)?;

    // The declarations' first line names the Ghostty revision they were generated from.
    let cdef = fs::read_to_string(staging.join("_cdef.py")).map_err(|e| format!("cannot read _cdef.py: {e}"))?;
    let stated = cdef.lines().next().and_then(|line| line.split("from ghostty ").nth(1)).unwrap_or("");
    let stated = stated.split(|c: char| !c.is_ascii_hexdigit()).next().unwrap_or("");
    if !revision_matches(stated, revision) {
        return Err(format!("{PACKAGE} holds Ghostty {stated:?}, but vt/src/ffi.rs is written against {revision}."));
    }
    fs::write(staging.join(REVISION_FILE), format!("{stated}\n")).map_err(|e| e.to_string())?;
    date_library(staging)?;
    std::os::unix::fs::symlink(LIB_FILE, staging.join(LIB_SONAME)).map_err(|e| format!("cannot link SONAME: {e}"))?;
    fs::remove_dir_all(&wheels).map_err(|e| e.to_string())?;
    fs::remove_file(&requirements).map_err(|e| e.to_string())?;
    Ok(())
}

/// Gives the fetched library a time long past. It is a rerun trigger: dated when it was written, it would be
/// newer than the run that wrote it, and the next build would run this script (and rebuild everything above
/// it) again for nothing.
fn date_library(dir: &Path) -> Result<(), String> {
    let path = dir.join(LIB_FILE);
    let dated = std::time::UNIX_EPOCH + FETCHED_MTIME;
    if fs::metadata(&path).and_then(|m| m.modified()).is_ok_and(|time| time == dated) {
        return Ok(());
    }
    let file = fs::File::options().write(true).open(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    file.set_modified(dated).map_err(|e| format!("cannot date {}: {e}", path.display()))
}

/// The Python interpreter: `PYTHON` when set, else `python3`.
fn python() -> String {
    println!("cargo:rerun-if-env-changed=PYTHON");
    env::var("PYTHON").ok().filter(|p| !p.is_empty()).unwrap_or_else(|| "python3".to_owned())
}

fn check_sha256(path: &Path, expected: &str) -> Result<(), String> {
    let actual = sha256_of(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if actual != expected {
        return Err(format!("{} has sha256 {actual}, expected {expected}.", path.display()));
    }
    Ok(())
}

fn sha256_of(path: &Path) -> std::io::Result<String> {
    let mut file = fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hasher.finalize().iter().map(|b| format!("{b:02x}")).collect())
}
