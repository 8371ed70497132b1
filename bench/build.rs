//! Gives the harness an rpath to libghostty-vt (its in-process parse baseline links `vt`): `vt`'s own link
//! arguments do not reach dependents, so every crate that links `vt` directly repeats them.

fn main() {
    if let Ok(dir) = std::env::var("DEP_GHOSTTY_VT_LIBDIR") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,$ORIGIN:{dir}");
    }
}
