//! Layout truth: our mlx5 segment/CQE definitions against rdma-core's <infiniband/mlx5dv.h>
//! (compile-time asserts and byte images in ctest/ibgda/mlx5_layout_check.cpp), whole DC WQEs as
//! the posting path writes them against rdma-core's setters (ctest/ibgda/wqe_image_check.cpp), the
//! Rust mirror against the same program's table, and the IBGDA descriptors' C header against their
//! Rust owner.
//! Also compiles the posting path with nvcc when one is found (CUDA_HOME or PATH).

mod ibgda_common;

use std::collections::BTreeSet;
use std::process::Command;

use ibgda_common::{compile, find_nvcc, repo};

fn run_lines(exe: &std::path::Path) -> Vec<String> {
    let out = Command::new(exe).output().expect("run the layout program");
    assert!(out.status.success(), "{} failed:\n{}", exe.display(), String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().lines().map(str::to_string).collect()
}

#[test]
fn mlx5_segments_match_rdma_core_and_the_rust_mirror() {
    let exe = compile("ctest/ibgda/mlx5_layout_check.cpp", "mlx5_layout_check", &[]);
    let lines = run_lines(&exe);
    // C side: field and size rows; compare as sets with the Rust table.
    let c_rows: BTreeSet<String> = lines.iter().filter(|l| l.starts_with("field ") || l.starts_with("size ")).cloned().collect();
    let rust_rows: BTreeSet<String> = rshmem::ibgda::mlx5::layout_table().into_iter().collect();
    let only_c: Vec<_> = c_rows.difference(&rust_rows).collect();
    let only_rust: Vec<_> = rust_rows.difference(&c_rows).collect();
    assert!(only_c.is_empty() && only_rust.is_empty(), "layout differs:\n C only: {only_c:?}\n Rust only: {only_rust:?}");
    assert!(c_rows.len() > 50, "the C table is suspiciously short: {}", c_rows.len());
    // Constants.
    for (name, value) in rshmem::ibgda::mlx5::constant_table() {
        let want = format!("const {name} {value}");
        assert!(
            lines.contains(&want),
            "constant {name}: C says {:?}, Rust {value}",
            lines.iter().find(|l| l.starts_with(&format!("const {name} ")))
        );
    }
}

#[test]
fn dc_wqes_written_by_the_posting_path_match_rdma_core_setters() {
    let exe = compile("ctest/ibgda/wqe_image_check.cpp", "wqe_image_check", &[]);
    let lines = run_lines(&exe);
    assert!(lines.iter().any(|l| l.contains("match rdma-core")), "{lines:?}");
}

#[test]
fn descriptor_header_matches_its_rust_owner() {
    let exe = compile("ctest/ibgda/state_layout.cpp", "ibgda_state_layout", &[]);
    let lines = run_lines(&exe);
    let c_rows: BTreeSet<String> = lines.iter().filter(|l| l.starts_with("field ") || l.starts_with("size ")).cloned().collect();
    let rust_rows: BTreeSet<String> = rshmem::ibgda::abi::layout_table().into_iter().collect();
    assert_eq!(c_rows, rust_rows, "ibgda_state.h and src/abi/ibgda.rs disagree");
    use rshmem::ibgda::abi::{MAX_REGS, MODEL_VENDOR_DC_KEY, MODEL_VENDOR_NO_DCT, STATE_VERSION};
    for (name, v) in [
        ("STATE_VERSION", STATE_VERSION),
        ("MAX_REGS", MAX_REGS as u32),
        ("MODEL_VENDOR_DC_KEY", MODEL_VENDOR_DC_KEY as u32),
        ("MODEL_VENDOR_NO_DCT", MODEL_VENDOR_NO_DCT as u32),
    ] {
        assert!(lines.contains(&format!("const RSHMEM_IBGDA_{name} {v}")), "RSHMEM_IBGDA_{name} differs from the Rust value {v}");
    }
}

#[test]
fn posting_path_compiles_under_nvcc_when_available() {
    let Some(nvcc) = find_nvcc() else {
        eprintln!("nvcc not found (set CUDA_HOME): skipping the CUDA compile check of device/ibgda");
        return;
    };
    let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("ibgda_device_compile.o");
    let status = Command::new(&nvcc)
        .args(["-std=c++17", "-arch=sm_90", "-c", "-x", "cu"])
        .arg(format!("-I{}", repo().display()))
        .arg(repo().join("ctest/ibgda/device_compile.cu"))
        .arg("-o")
        .arg(&out)
        .status()
        .expect("run nvcc");
    assert!(status.success(), "device/ibgda does not compile under nvcc");
}

#[test]
fn rdma_core_declarations_match_verbs_h_and_mlx5dv_h() {
    let exe = compile("ctest/ibgda/verbs_layout.cpp", "verbs_layout", &[]);
    let c_rows: BTreeSet<String> = run_lines(&exe).into_iter().collect();
    let rust_rows: BTreeSet<String> = rshmem::ib::sys::layout_table().into_iter().collect();
    let only_c: Vec<_> = c_rows.difference(&rust_rows).collect();
    let only_rust: Vec<_> = rust_rows.difference(&c_rows).collect();
    assert!(
        only_c.is_empty() && only_rust.is_empty(),
        "src/ib/sys.rs disagrees with rdma-core:\n C only: {only_c:?}\n Rust only: {only_rust:?}"
    );
}

/// Every CUDA program of the IBGDA route (ctest/ibgda/gpu_*.cu, perftest/ibgda/*.cu) compiles
/// with the device library as the GPU tests and the benchmark build it (-DRSHMEM_IBGDA_ROUTE, the
/// headers arranged as installed: rshmem/device/...), two nvcc at a time. New programs are found
/// by name, so none escapes the check.
#[test]
fn device_route_compiles_under_nvcc_when_available() {
    let Some(nvcc) = find_nvcc() else {
        eprintln!("nvcc not found (set CUDA_HOME): skipping the CUDA compile check of the IBGDA route");
        return;
    };
    let inc = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("ibgda-route-inc-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&inc);
    std::fs::create_dir_all(inc.join("rshmem")).unwrap();
    std::os::unix::fs::symlink(repo().join("device"), inc.join("rshmem/device")).unwrap();
    std::os::unix::fs::symlink(repo().join("include/rshmem/rshmem_abi.h"), inc.join("rshmem/rshmem_abi.h")).unwrap();
    let mut srcs = Vec::new();
    for (dir, prefix) in [("ctest/ibgda", "gpu_"), ("perftest/ibgda", "")] {
        for e in std::fs::read_dir(repo().join(dir)).unwrap() {
            let name = e.unwrap().file_name().into_string().unwrap();
            if name.starts_with(prefix) && name.ends_with(".cu") {
                srcs.push(format!("{dir}/{name}"));
            }
        }
    }
    srcs.sort();
    assert!(srcs.len() >= 6, "expected the IBGDA GPU tests and the benchmark, found {srcs:?}");
    let mut failed = Vec::new();
    for pair in srcs.chunks(2) {
        let children: Vec<_> = pair
            .iter()
            .enumerate()
            .map(|(i, src)| {
                let child = Command::new(&nvcc)
                    .args(["-std=c++17", "-arch=sm_90", "-DRSHMEM_IBGDA_ROUTE", "-Xcompiler", "-Wall", "-c"])
                    .arg(format!("-I{}", inc.display()))
                    .arg(format!("-I{}", repo().join("include").display()))
                    .arg(repo().join(src))
                    .arg("-o")
                    .arg(inc.join(format!("out{i}.o")))
                    .spawn()
                    .expect("run nvcc");
                (src, child)
            })
            .collect();
        for (src, mut child) in children {
            if !child.wait().expect("wait for nvcc").success() {
                failed.push(src.clone());
            }
        }
    }
    let _ = std::fs::remove_dir_all(&inc);
    assert!(failed.is_empty(), "these do not compile with the IBGDA route: {failed:?}");
}
