//! When the build cannot get libghostty-vt, its error says what is really wrong: pip missing, or pip there but
//! the download failing (no network), and in both cases the offline route with the Ghostty revision it needs
//! (issue 17). Each case runs the build script for real, in a target folder of its own.

use std::process::Command;

/// Builds this crate with `envs`, in a fresh target folder, without any library at hand; its stderr.
fn failed_build(envs: &[(&str, &str)]) -> String {
    let target = tempfile::tempdir().expect("tempdir");
    let mut command = Command::new(env!("CARGO"));
    command.args(["build", "--offline", "-p", "opencode-pty-vt"]).current_dir(env!("CARGO_MANIFEST_DIR"));
    command.env("CARGO_TARGET_DIR", target.path()).env_remove("LIBGHOSTTY_VT_DIR").envs(envs.iter().copied());
    let output = command.output().expect("cargo");
    assert!(!output.status.success(), "the build cannot succeed without a library");
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn the_build_error_names_the_real_cause_and_the_revision_for_the_offline_route() {
    let revision = opencode_pty_vt::ffi::GHOSTTY_REVISION;
    let without_pip = failed_build(&[("PYTHON", "/nonexistent/python3")]);
    assert!(without_pip.contains("Install Python 3 with pip"), "{without_pip}");
    assert!(without_pip.contains(&format!("the Ghostty revision this build needs: {revision}")), "{without_pip}");
    // pip is there, but the package index cannot be reached.
    let offline = failed_build(&[("PIP_INDEX_URL", "http://127.0.0.1:9/simple"), ("PIP_NO_CACHE_DIR", "1")]);
    if !offline.contains("Running `python3 -m pip` failed") {
        assert!(offline.contains("pip is installed, so the download itself failed"), "{offline}");
        assert!(!offline.contains("Install Python 3 with pip"), "{offline}");
        assert!(offline.contains(revision), "{offline}");
    }
}
