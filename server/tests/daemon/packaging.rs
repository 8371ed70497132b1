//! The release archive (`packaging/dist.sh`, `just dist`) works where it is unpacked, with no build tree: the
//! binary finds the libghostty-vt beside it, answers `--version`, and runs a short session once installed
//! (`install.sh PREFIX`, `just install PREFIX`); the archive carries the licences NOTICE names, the shell
//! completions and man pages the binary generates (installed under `PREFIX/share`), and the binary is stripped
//! (its debug info in a file beside it) with a run path of `$ORIGIN` alone.

use std::path::Path;
use std::process::Command;

use crate::support::{WAIT, binary, run_bounded};

fn repository() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the repository")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn the_archive_unpacks_installs_and_runs_on_its_own_library() {
    let out = tempfile::tempdir().unwrap();
    let mut dist = Command::new("bash");
    dist.arg(repository().join("packaging/dist.sh")).arg("--binary").arg(binary()).arg("--out").arg(out.path());
    let built = run_bounded(dist, b"", WAIT * 2);
    assert!(built.status.success(), "{}", text(&built.stderr));
    let archive = text(&built.stdout).lines().last().expect("the archive's path").to_owned();
    let name = Path::new(&archive).file_name().unwrap().to_str().unwrap().trim_end_matches(".tar.gz").to_owned();
    assert!(name.starts_with("opencode-pty-") && name.ends_with("-x86_64-unknown-linux-gnu"), "{name}");

    // The completions and man pages the binary generates ride along (`tar -t` lists them).
    let mut list = Command::new("tar");
    list.arg("-tzf").arg(&archive);
    let listed = text(&run_bounded(list, b"", WAIT).stdout);
    for file in [
        "completions/opencode-pty.bash",
        "completions/_opencode-pty",
        "completions/opencode-pty.fish",
        "man/opencode-pty.1",
        "man/opencode-pty-attach.1",
        "man/opencode-pty-status.1",
        "man/opencode-pty-list.1",
    ] {
        assert!(listed.lines().any(|line| line == format!("{name}/{file}")), "{file} is in the archive:\n{listed}");
    }

    let unpacked = tempfile::tempdir().unwrap();
    let mut tar = Command::new("tar");
    tar.arg("-xzf").arg(&archive).arg("-C").arg(unpacked.path());
    assert!(run_bounded(tar, b"", WAIT).status.success());
    let folder = unpacked.path().join(&name);
    for file in ["opencode-pty", "libghostty-vt.so.0", "LICENSE", "NOTICE", "LICENSE.ghostty", "LICENSE.apache-2.0"] {
        assert!(folder.join(file).is_file(), "{file} is in the archive");
    }
    let notice = std::fs::read_to_string(folder.join("NOTICE")).unwrap();
    for component in ["Ghostty", "simdutf", "Google Highway", "Wuffs", opencode_pty_vt::ffi::GHOSTTY_REVISION] {
        assert!(notice.contains(component), "NOTICE names {component}:\n{notice}");
    }
    // Shipped stripped, its debug info beside it, and with no run path but `$ORIGIN`: nothing of the build folder.
    let sections = |file: &str| {
        let mut readelf = Command::new("readelf");
        readelf.arg("-S").arg("-W").arg(folder.join(file));
        text(&run_bounded(readelf, b"", WAIT).stdout)
    };
    let (shipped, debug) = (sections("opencode-pty"), sections("opencode-pty.debug"));
    assert!(!shipped.contains(".debug_line") && !shipped.contains(".symtab"), "stripped:\n{shipped}");
    assert!(shipped.contains(".gnu_debuglink"), "linked to its debug info:\n{shipped}");
    assert!(debug.contains(".debug_line"), "the debug info:\n{debug}");
    let mut dynamic = Command::new("readelf");
    dynamic.arg("-d").arg(folder.join("opencode-pty"));
    let dynamic = text(&run_bounded(dynamic, b"", WAIT).stdout);
    assert!(dynamic.contains("Library runpath: [$ORIGIN]\n"), "{dynamic}");
    let bytes = std::fs::read(folder.join("opencode-pty")).unwrap();
    let build = repository().join("target");
    let build = build.to_str().unwrap().as_bytes();
    assert!(!bytes.windows(build.len()).any(|window| window == build), "the binary names the build folder");
    // The library that loads is the one beside the binary, not the build tree's.
    let mut ldd = Command::new("ldd");
    ldd.arg(folder.join("opencode-pty")).env_remove("LD_LIBRARY_PATH");
    let linked = text(&run_bounded(ldd, b"", WAIT).stdout);
    let expected = format!("libghostty-vt.so.0 => {}", folder.join("libghostty-vt.so.0").display());
    assert!(linked.contains(&expected), "{linked}");

    let prefix = tempfile::tempdir().unwrap();
    let mut install = Command::new("bash");
    install.arg(folder.join("install.sh")).arg(prefix.path());
    let installed = run_bounded(install, b"", WAIT);
    assert!(installed.status.success(), "{}", text(&installed.stderr));
    // Where bash-completion, zsh's fpath, fish and man look under the prefix.
    for (installed, shipped) in [
        ("share/bash-completion/completions/opencode-pty", "completions/opencode-pty.bash"),
        ("share/zsh/site-functions/_opencode-pty", "completions/_opencode-pty"),
        ("share/fish/vendor_completions.d/opencode-pty.fish", "completions/opencode-pty.fish"),
        ("share/man/man1/opencode-pty.1", "man/opencode-pty.1"),
        ("share/man/man1/opencode-pty-attach.1", "man/opencode-pty-attach.1"),
    ] {
        let read = |path: &Path| std::fs::read(path).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
        assert_eq!(read(&prefix.path().join(installed)), read(&folder.join(shipped)), "{installed}");
    }
    let bash = prefix.path().join("share/bash-completion/completions/opencode-pty");
    assert!(text(&std::fs::read(bash).unwrap()).contains("complete -F "), "a bash completion script");
    // Unpacked folder gone: the installed copy stands on its own.
    drop(unpacked);
    let starter = prefix.path().join("bin/opencode-pty");
    let mut version = Command::new(&starter);
    version.arg("--version").env_remove("LD_LIBRARY_PATH");
    let answered = run_bounded(version, b"", WAIT);
    assert!(text(&answered.stdout).starts_with("opencode-pty "), "{}", text(&answered.stderr));
    let runtime = tempfile::tempdir().unwrap();
    let mut play = Command::new(&starter);
    play.args(["play", "--name", "installed", "--runtime-dir"]).arg(runtime.path()).env_remove("LD_LIBRARY_PATH");
    let session = run_bounded(play, b"new sh\nrun echo hello-from-$((6*7))\nquit\n", WAIT * 2);
    let said = text(&session.stdout);
    assert!(session.status.success(), "{said}\n{}", text(&session.stderr));
    assert!(said.contains("hello-from-42"), "the installed daemon ran a terminal:\n{said}");
}
