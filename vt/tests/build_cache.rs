//! The fetched libghostty-vt does not make the next build run the build script again: it is a rerun trigger,
//! so it must not be newer than the run that wrote it (issue 17: a second `cargo run` rebuilt vt and the server).

#[test]
fn the_fetched_library_is_dated_long_before_any_build() {
    if std::env::var_os("LIBGHOSTTY_VT_DIR").is_some_and(|dir| !dir.is_empty()) {
        // A supplied library is the user's own file, left as it is.
        return;
    }
    let library = std::path::Path::new(env!("OPENCODE_PTY_VT_LIBDIR")).join("libghostty-vt.so");
    let modified = std::fs::metadata(&library).and_then(|m| m.modified()).expect("the fetched library");
    assert_eq!(modified, std::time::UNIX_EPOCH + std::time::Duration::from_secs(86_400), "{}", library.display());
}
