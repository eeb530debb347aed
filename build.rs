// The shared library's SONAME tracks the major ABI version (see Makefile for the symlink chain).
fn main() {
    let major = env!("CARGO_PKG_VERSION_MAJOR");
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,librshmem.so.{major}");
    println!("cargo:rerun-if-changed=build.rs");
}
