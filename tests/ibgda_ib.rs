//! The rdma-core layer is loaded at run time: librshmem itself must not depend on libibverbs or
//! libmlx5, so a program on a machine without rdma-core still loads it.

#[test]
fn librshmem_does_not_link_rdma_core() {
    let so = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/release/librshmem.so");
    if !so.exists() {
        eprintln!("{} not built (run cargo build --release): skipping", so.display());
        return;
    }
    let out = std::process::Command::new("readelf").arg("-d").arg(&so).output().expect("readelf (binutils)");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("NEEDED"), "readelf printed no dynamic section:\n{text}");
    for lib in ["libibverbs", "libmlx5", "libcuda"] {
        assert!(!text.contains(lib), "librshmem.so links {lib} at load time:\n{text}");
    }
}

#[test]
fn discovery_answers_in_plain_words() {
    let s = rshmem::ib::discovery_summary();
    // On this machine: either rdma-core is missing or there is no device; both are plain text.
    assert!(!s.is_empty() && !s.contains("panicked"), "{s}");
}
