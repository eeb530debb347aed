//! The library's own device code (`kernels.ptx`): one-thread kernels for what the host cannot
//! do with copies and stream memory operations alone: atomics on GPU memory, and waits with
//! any comparison. Loaded once per context (image.rs: its machine code for this GPU, or the PTX).

use std::ffi::{c_void, CStr};

use super::sys::{CUfunction, CUmodule, CUstream};
use super::image::{self, Image};
use super::{driver, CuResult, Driver};

/// The module (hand-written PTX, plus machine code when the build had ptxas: image.rs).
const IMAGE: Image = Image { name: "kernels", ptx: concat!(include_str!("kernels.ptx"), "\0") };

/// Operations of the `rshmem_amo` kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum AmoOp {
    Add = 0,
    And = 1,
    Or = 2,
    Xor = 3,
    Swap = 4,
    CompareSwap = 5,
    Fetch = 6,
    Set = 7,
}

pub struct Kernels {
    module: CUmodule,
    amo: CUfunction,
    wait_u64: CUfunction,
}

// SAFETY: module and function handles may be used from any thread with their context current.
unsafe impl Send for Kernels {}
unsafe impl Sync for Kernels {}

fn function(d: &Driver, module: CUmodule, name: &CStr) -> CuResult<CUfunction> {
    let mut f: CUfunction = std::ptr::null_mut();
    cu!(d, cuModuleGetFunction(&mut f, module, name.as_ptr()))?;
    Ok(f)
}

impl Kernels {
    /// Loads the module into the current context.
    pub fn load() -> CuResult<Kernels> {
        let d = driver()?;
        let module = image::load(IMAGE)?;
        // Owned from here on: an error below unloads the module (Drop).
        let mut k = Kernels { module, amo: std::ptr::null_mut(), wait_u64: std::ptr::null_mut() };
        k.amo = function(d, module, c"rshmem_amo")?;
        k.wait_u64 = function(d, module, c"rshmem_wait_u64")?;
        Ok(k)
    }

    #[allow(clippy::not_unsafe_ptr_arg_deref)] // handles and parameter pointers go to the driver
    fn launch(&self, f: CUfunction, stream: CUstream, params: &mut [*mut c_void]) -> CuResult<()> {
        let d = driver()?;
        cu!(d, cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, stream, params.as_mut_ptr(), std::ptr::null_mut()))
    }

    /// Enqueues `op` on the `size`-byte (4 or 8) word at device address `addr`; the old value
    /// goes to the 8-byte word at `out` (a device address) unless `out` is 0.
    ///
    /// # Safety
    /// `addr` (aligned to `size`) and `out` (8-byte aligned, or 0) must be device memory the
    /// kernel may write, valid until it runs on `stream`.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn amo(&self, stream: CUstream, addr: u64, a: u64, b: u64, out: u64, op: AmoOp, size: u32) -> CuResult<()> {
        let (mut addr, mut a, mut b, mut out, mut op, mut size) = (addr, a, b, out, op as u32, size);
        let mut params: [*mut c_void; 6] = [
            (&mut addr as *mut u64).cast(),
            (&mut a as *mut u64).cast(),
            (&mut b as *mut u64).cast(),
            (&mut out as *mut u64).cast(),
            (&mut op as *mut u32).cast(),
            (&mut size as *mut u32).cast(),
        ];
        self.launch(self.amo, stream, &mut params)
    }

    /// Enqueues a wait until the 8-byte word at `addr` compares `cmp` (NVSHMEM_CMP_*, 0..=5,
    /// unsigned) with `value`.
    ///
    /// # Safety
    /// `addr` must be an 8-byte aligned device word that stays mapped while the kernel spins.
    pub unsafe fn wait_u64(&self, stream: CUstream, addr: u64, cmp: u32, value: u64) -> CuResult<()> {
        let (mut addr, mut cmp, mut value) = (addr, cmp, value);
        let mut params: [*mut c_void; 3] =
            [(&mut addr as *mut u64).cast(), (&mut cmp as *mut u32).cast(), (&mut value as *mut u64).cast()];
        self.launch(self.wait_u64, stream, &mut params)
    }
}

impl Drop for Kernels {
    fn drop(&mut self) {
        if let Ok(d) = driver() {
            let _ = cu!(d, cuModuleUnload(self.module));
        }
    }
}

#[cfg(test)]
mod tests {
    /// The PTX assembles for Hopper wherever ptxas is installed (CI: scripts/install-nvcc.sh).
    #[test]
    fn ptx_assembles_when_ptxas_is_there() {
        let candidates = ["ptxas", "/usr/local/cuda/bin/ptxas", "/opt/cuda13/lib/python3.11/site-packages/nvidia/cu13/bin/ptxas"];
        let Some(ptxas) = candidates.iter().find(|p| std::process::Command::new(p).arg("--version").output().is_ok()) else {
            eprintln!("skipped: no ptxas");
            return;
        };
        let src = concat!(env!("CARGO_MANIFEST_DIR"), "/src/cuda/kernels.ptx");
        let out = std::env::temp_dir().join(format!("rshmem-kernels-{}.cubin", std::process::id()));
        let r = std::process::Command::new(ptxas).args(["-arch=sm_90", src, "-o"]).arg(&out).output().unwrap();
        let _ = std::fs::remove_file(&out);
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    }
}
