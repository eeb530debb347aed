// Build steps beside cargo's own:
// 1. The shared library's SONAME tracks the major ABI version (see Makefile for the symlink chain);
//    its exports carry the version node of src/capi/librshmem.map, and src/capi/aliases.ld gives
//    routines their second names (pshmem_ profiling names, OSHMEM's shmemx_ names).
// 2. Machine code for the library's own GPU kernels. The kernels ship as PTX (src/cuda/*.ptx,
//    committed), which any CUDA driver compiles on first use: 0.1-1 s per module with a cold
//    driver cache, paid again in every fresh container. Where a `ptxas` is found at build time,
//    each module is also assembled for the data-centre architectures below and the cubins are
//    embedded; the library loads the one that fits the GPU and falls back to the PTX otherwise
//    (src/cuda/image.rs). No ptxas: a PTX-only library that works the same, only slower to
//    start. RSHMEM_PTXAS=<path> names the assembler, RSHMEM_PTXAS=none turns this off.
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

/// sm_80 also runs on 8.6/8.7/8.9, sm_100 on 10.3, sm_120 on 12.1 (same major, higher minor).
const ARCHS: [u32; 4] = [80, 90, 100, 120];

fn main() {
    let major = env!("CARGO_PKG_VERSION_MAJOR");
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,librshmem.so.{major}");
    // Exports and symbol versions (scripts/link-gcc drops rustc's own version script), and the
    // second names: OSHMEM's shmemx_ names and the pshmem_ profiling names.
    let dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    println!("cargo:rustc-cdylib-link-arg=-Wl,--version-script={dir}/src/capi/librshmem.map");
    println!("cargo:rustc-cdylib-link-arg={dir}/src/capi/aliases.ld");
    println!("cargo:rerun-if-changed=src/capi/librshmem.map");
    println!("cargo:rerun-if-changed=src/capi/aliases.ld");
    println!("cargo:rerun-if-changed=build.rs");
    build_identity();
    kernel_cubins();
}

/// RSHMEM_BUILD_COMMIT (short hash, "-dirty" with uncommitted changes; "unknown" outside git)
/// and RSHMEM_BUILD_DATE (UTC; SOURCE_DATE_EPOCH for reproducible builds) for rshmem-info.
/// Reruns when HEAD moves, so the commit is current after a commit, checkout or rebase.
fn build_identity() {
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let commit = match git(&["rev-parse", "--short=12", "HEAD"]) {
        Some(hash) => {
            let dirty = !Command::new("git")
                .args(["diff", "--quiet", "HEAD", "--", "src", "include", "device", "build.rs", "Cargo.toml"])
                .status()
                .is_ok_and(|s| s.success());
            if dirty {
                format!("{hash}-dirty")
            } else {
                hash
            }
        }
        None => "unknown".into(),
    };
    let branch = git(&["rev-parse", "--symbolic-full-name", "HEAD"]).filter(|r| r.starts_with("refs/"));
    // Only files that exist: cargo reruns a build script on every build while one is missing.
    let watched = [Some("HEAD".to_string()), branch];
    let paths = watched.into_iter().flatten().filter_map(|p| git(&["rev-parse", "--git-path", &p]));
    for path in paths.filter(|p| Path::new(p).exists()) {
        println!("cargo:rerun-if-changed={path}");
    }
    println!("cargo:rerun-if-env-changed=SOURCE_DATE_EPOCH");
    let mut date = Command::new("date");
    date.args(["-u", "+%Y-%m-%d %H:%M UTC"]);
    if let Ok(epoch) = std::env::var("SOURCE_DATE_EPOCH") {
        date.arg(format!("--date=@{epoch}"));
    }
    let date = date.output().ok().filter(|o| o.status.success()).map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    println!("cargo:rustc-env=RSHMEM_BUILD_COMMIT={commit}");
    println!("cargo:rustc-env=RSHMEM_BUILD_DATE={}", date.unwrap_or_else(|| "unknown".into()));
}

/// The library's kernel modules: (name, PTX file). The names are the ones src/cuda/image.rs asks for.
fn kernel_modules() -> Vec<(String, PathBuf)> {
    println!("cargo:rerun-if-changed=src/cuda/kernels.ptx");
    println!("cargo:rerun-if-changed=src/cuda/generated");
    let mut modules = vec![("kernels".to_string(), PathBuf::from("src/cuda/kernels.ptx"))];
    let mut more: Vec<(String, PathBuf)> = std::fs::read_dir("src/cuda/generated")
        .expect("build.rs: src/cuda/generated is missing")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "ptx"))
        .map(|p| (p.file_stem().unwrap().to_string_lossy().into_owned(), p))
        .collect();
    more.sort();
    modules.extend(more);
    modules
}

/// The assembler to use, if any: RSHMEM_PTXAS, then $CUDA_HOME/bin, $PATH, /usr/local/cuda and
/// the nvcc that scripts/install-nvcc.sh installs.
fn find_ptxas() -> Option<PathBuf> {
    for var in ["RSHMEM_PTXAS", "CUDA_HOME", "CUDA_PATH"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    if let Ok(p) = std::env::var("RSHMEM_PTXAS") {
        return (p != "none" && !p.is_empty()).then(|| PathBuf::from(p));
    }
    let mut candidates: Vec<PathBuf> = Vec::new();
    for var in ["CUDA_HOME", "CUDA_PATH"] {
        if let Ok(home) = std::env::var(var) {
            candidates.push(Path::new(&home).join("bin/ptxas"));
        }
    }
    if let Ok(path) = std::env::var("PATH") {
        candidates.extend(std::env::split_paths(&path).map(|d| d.join("ptxas")));
    }
    candidates.push("/usr/local/cuda/bin/ptxas".into());
    if let Ok(libs) = std::fs::read_dir("/opt/cuda13/lib") {
        let mut pythons: Vec<PathBuf> = libs.filter_map(|e| e.ok().map(|e| e.path())).collect();
        pythons.sort();
        candidates.extend(pythons.iter().map(|p| p.join("site-packages/nvidia/cu13/bin/ptxas")));
    }
    candidates.into_iter().find(|p| p.is_file() && Command::new(p).arg("--version").output().is_ok_and(|o| o.status.success()))
}

/// Assembles every module for every architecture the assembler knows; writes `cubins.rs` (into
/// OUT_DIR) with the list of built architectures and one cubin per module and architecture.
fn kernel_cubins() {
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let modules = kernel_modules();
    let ptxas = find_ptxas();
    let mut archs: Vec<u32> = Vec::new();
    let mut version = String::new();
    if let Some(ptxas) = &ptxas {
        version = Command::new(ptxas)
            .arg("--version")
            .output()
            .map(|o| {
                let text = String::from_utf8_lossy(&o.stdout).into_owned();
                let release = text.lines().find_map(|l| l.split_once("release ").map(|(_, r)| r.trim().to_string()));
                format!("ptxas {}", release.unwrap_or_default())
            })
            .unwrap_or_default();
        let jobs: Vec<(usize, u32)> = (0..modules.len()).flat_map(|m| ARCHS.iter().map(move |&a| (m, a))).collect();
        let failed: Mutex<Vec<(u32, String)>> = Mutex::new(Vec::new());
        let next = Mutex::new(0usize);
        let workers = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2).min(8);
        std::thread::scope(|s| {
            for _ in 0..workers {
                s.spawn(|| loop {
                    let i = {
                        let mut n = next.lock().unwrap();
                        *n += 1;
                        *n - 1
                    };
                    let Some(&(m, arch)) = jobs.get(i) else { break };
                    let (name, ptx) = &modules[m];
                    let cubin = out.join(format!("{name}.sm_{arch}.cubin"));
                    if newer_than(&cubin, &[ptx.as_path(), ptxas.as_path()]) {
                        continue; // built by an earlier run of this script (e.g. one for a new commit)
                    }
                    let r = Command::new(ptxas).arg(format!("-arch=sm_{arch}")).arg("-O3").arg(ptx).arg("-o").arg(&cubin).output();
                    if !r.as_ref().is_ok_and(|o| o.status.success()) {
                        let why = r.map(|o| String::from_utf8_lossy(&o.stderr).trim().to_string()).unwrap_or_else(|e| e.to_string());
                        failed.lock().unwrap().push((arch, format!("{name}: {why}")));
                    }
                });
            }
        });
        let failed = failed.into_inner().unwrap();
        for arch in ARCHS {
            // An architecture ships for every module or for none (an older ptxas may not know it).
            match failed.iter().find(|(a, _)| *a == arch) {
                None => archs.push(arch),
                Some((_, why)) => {
                    println!("cargo:warning=rshmem: no sm_{arch} machine code for the library's kernels ({}): {why}", ptxas.display())
                }
            }
        }
    } else {
        let why =
            if std::env::var("RSHMEM_PTXAS").is_ok() { "RSHMEM_PTXAS=none" } else { "no ptxas found (set RSHMEM_PTXAS or CUDA_HOME)" };
        println!("cargo:warning=rshmem: {why}: the library's GPU kernels ship as PTX only and are compiled by the driver on first use");
    }

    let mut code = String::from("// Generated by build.rs: the architectures built and each module's cubins.\n");
    code += &format!("pub const ARCHS: &[u32] = &{archs:?};\n");
    code += &format!("pub const PTXAS: &str = {:?};\n", if archs.is_empty() { String::new() } else { version });
    code += "#[repr(C, align(16))]\nstruct Aligned<const N: usize>([u8; N]);\n";
    let mut arms = String::new();
    for (m, (name, _)) in modules.iter().enumerate() {
        let mut table = Vec::new();
        for arch in &archs {
            let path = out.join(format!("{name}.sm_{arch}.cubin"));
            let len = std::fs::metadata(&path).map(|m| m.len()).expect("build.rs: cubin written");
            code += &format!("static M{m}_{arch}: Aligned<{len}> = Aligned(*include_bytes!({:?}));\n", path.display().to_string());
            table.push(format!("({arch}, &M{m}_{arch}.0)"));
        }
        code += &format!("static M{m}: [(u32, &[u8]); {}] = [{}];\n", table.len(), table.join(", "));
        arms += &format!("        {name:?} => &M{m},\n");
    }
    code += &format!(
        "pub fn cubins(module: &str) -> &'static [(u32, &'static [u8])] {{\n    match module {{\n{arms}        _ => &[],\n    }}\n}}\n"
    );
    std::fs::write(out.join("cubins.rs"), code).expect("build.rs: writing cubins.rs");
}

/// Whether `file` exists and was modified after every one of `inputs`.
fn newer_than(file: &Path, inputs: &[&Path]) -> bool {
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let Some(t) = modified(file) else { return false };
    inputs.iter().all(|i| modified(i).is_some_and(|ti| ti < t))
}
