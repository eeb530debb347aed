//! The DevX path where no RDMA device exists: our mlx5dv declarations against the real
//! headers, every DevX entry point present in the installed libmlx5, the hardware IBGDA
//! refusing cleanly (no device; and, with libibverbs masked out of the file system, no
//! rdma-core at all) with words that name the software HCA model.

#[path = "ibgda_common/mod.rs"]
mod ibgda_common;

use std::collections::BTreeSet;
use std::process::Command;

use rshmem::ibgda::gpu::Setup;
use rshmem::ibgda::{Ibgda, Route};

#[test]
fn devx_declarations_match_rdma_core_headers() {
    let exe = ibgda_common::compile("ctest/ib/devx_layout.cpp", "ib_devx_layout", &[]);
    let out = Command::new(&exe).output().expect("run the layout program");
    assert!(out.status.success());
    let c: BTreeSet<String> = String::from_utf8(out.stdout).unwrap().lines().map(str::to_string).collect();
    let mut rust: BTreeSet<String> = rshmem::ib::sys::devx_layout_table().into_iter().collect();
    rust.insert(format!("size mlx5_wqe_av {}", std::mem::size_of::<rshmem::ibgda::mlx5::Av>()));
    rust.insert(format!("field mlx5_wqe_av.rmac {}", std::mem::offset_of!(rshmem::ibgda::mlx5::Av, rmac)));
    assert_eq!(c, rust, "src/ib/sys.rs and <infiniband/mlx5dv.h> disagree");
}

#[test]
fn the_installed_rdma_core_has_every_entry_point_we_call() {
    // rdma-core 44 is installed here (Debian libibverbs1 / ibverbs-providers): loading the
    // tables resolves every symbol, DevX ones included. Without it, the error is the answer.
    match (rshmem::ib::verbs(), rshmem::ib::mlx5()) {
        (Ok(_), Ok(_)) => {}
        (Err(e), _) | (_, Err(e)) => assert!(e.message.contains("could not be loaded") && e.message.contains("install"), "{e}"),
    }
}

fn setup() -> Setup<'static> {
    static BOOT: rshmem::bootstrap::Single = rshmem::bootstrap::Single;
    Setup {
        me: 0,
        npes: 2,
        ctx: std::ptr::null_mut(),
        boot: &BOOT,
        sms: 1,
        heap_bases: vec![0, 0],
        stride: 1 << 20,
        mapped: 1 << 20,
        remote: vec![false, true],
    }
}

/// Ibgda::choose on the hardware NIC asked for explicitly, which must fail here: its message.
fn hardware_refusal() -> String {
    std::env::set_var("RSHMEM_IBGDA_NIC", "hw");
    match Ibgda::choose(&setup()) {
        Ok(_) => panic!("an IBGDA NIC was set up on a machine where none is expected"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn without_a_device_hardware_ibgda_says_so_and_names_the_model() {
    if rshmem::ib::devices().map(|d| !d.is_empty()).unwrap_or(false) {
        eprintln!("this machine has an RDMA device: skipping");
        return;
    }
    let e = hardware_refusal();
    assert!(e.starts_with("nvshmem_init: PE 0 reaches 1 peer(s) only through the network"), "{e}");
    assert!(e.contains("no RDMA") && e.contains("set RSHMEM_IBGDA_NIC=model"), "{e}");

    // Left to auto (the default), the same failure is a decision for the proxy transport, with
    // the reason (runtime/gpu.rs routes PEs on other hosts through the proxy then).
    std::env::remove_var("RSHMEM_IBGDA_NIC");
    match Ibgda::choose(&setup()) {
        Ok(Route::Proxy(why)) => assert!(why.starts_with("PE 0: the NIC set-up failed: ") && why.contains("no RDMA"), "{why}"),
        Ok(Route::Ibgda(_)) => panic!("IBGDA was chosen on a machine without a NIC"),
        Err(e) => panic!("auto must fall back, not fail: {e}"),
    }
}

/// Runs inside the masked mount namespace (see below); a no-op otherwise.
#[test]
fn masked_child() {
    if std::env::var_os("RSHMEM_TEST_LIBIBVERBS_MASKED").is_none() {
        return;
    }
    let e = rshmem::ib::verbs().err().expect("libibverbs is masked").message;
    assert!(e.contains("libibverbs.so.1 could not be loaded") && e.contains("install rdma-core"), "{e}");
    assert!(rshmem::ib::discovery_summary().starts_with("no RDMA: libibverbs.so.1 could not be loaded"));
    let e = hardware_refusal();
    assert!(e.contains("libibverbs.so.1 could not be loaded") && e.contains("RSHMEM_IBGDA_NIC=model"), "{e}");
    let lines = rshmem::ibgda::hw::info_lines();
    assert!(lines[0].contains("no RDMA") && lines[1].contains("not decided") && lines[2].contains("not read"), "{lines:?}");
}

#[test]
fn without_rdma_core_the_library_loads_and_refuses_cleanly() {
    // dependencies.md §3: hide libibverbs in a private mount namespace (needs root and unshare).
    let Ok(lib) = std::fs::canonicalize("/usr/lib/x86_64-linux-gnu/libibverbs.so.1") else {
        eprintln!("libibverbs is not installed: the unmasked tests cover its absence");
        return;
    };
    let me = std::env::current_exe().unwrap();
    let script =
        format!("mount --bind /dev/null {} && exec {} --exact masked_child --nocapture --test-threads 1", lib.display(), me.display());
    let out = match Command::new("unshare").args(["-m", "sh", "-c", &script]).env("RSHMEM_TEST_LIBIBVERBS_MASKED", "1").output() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("unshare unavailable ({e}): skipping");
            return;
        }
    };
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    if !out.status.success() && (text.contains("Operation not permitted") || text.contains("permission denied")) {
        eprintln!("no privilege for a mount namespace here: skipping\n{text}");
        return;
    }
    assert!(out.status.success() && text.contains("1 passed"), "the masked run failed:\n{text}");
    // The CLI too: rshmem-info still runs and says why there is no RDMA.
    let info = std::path::Path::new(env!("CARGO_BIN_EXE_rshmem-info"));
    let script = format!("mount --bind /dev/null {} && exec {}", lib.display(), info.display());
    let out = Command::new("unshare").args(["-m", "sh", "-c", &script]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && text.contains("NICs: no RDMA: libibverbs.so.1 could not be loaded"), "{text}");
}
