//! Gives the fuzz targets an rpath to libghostty-vt (the checkpoint target calls it): `vt`'s own link arguments
//! do not reach dependents.

fn main() {
    if let Ok(dir) = std::env::var("DEP_GHOSTTY_VT_LIBDIR") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,$ORIGIN:{dir}");
    }
}
