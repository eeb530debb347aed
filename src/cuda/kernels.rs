//! The library's own device code for what the host cannot do with copies and stream memory
//! operations alone: atomics on GPU memory and waits with any comparison (`kernels.ptx`,
//! hand-written), stores of 1-8 byte values and waits on many variables of any width
//! (`kernels/stream.cu`, compiled by scripts/gen_ptx.sh). Loaded once per context (image.rs:
//! their machine code for this GPU, or the PTX).

use std::ffi::{c_void, CStr};

use super::image::{self, Image};
use super::sys::{CUfunction, CUmodule, CUstream};
use super::{driver, CuResult, Driver};

/// The module (hand-written PTX, plus machine code when the build had ptxas: image.rs).
const IMAGE: Image = Image { name: "kernels", ptx: concat!(include_str!("kernels.ptx"), "\0") };
const STREAM: Image = Image { name: "stream", ptx: concat!(include_str!("generated/stream.ptx"), "\0") };
/// The proxy's remote-AMO taker (`kernels/proxy.cu`).
const PROXY: Image = Image { name: "proxy", ptx: concat!(include_str!("generated/proxy.ptx"), "\0") };

/// The modules loaded here (for image.rs's test that each has its cubins).
pub const MODULE_NAMES: [&str; 3] = [IMAGE.name, STREAM.name, PROXY.name];

/// rk_store's argument (mirrors rk_store_args in kernels/stream.cu).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct StoreArgs {
    pub addr: u64,
    pub value: u64,
    pub size: u32,
    pub pad: u32,
}

/// rk_wait's argument (mirrors rk_wait_args in kernels/stream.cu).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct WaitArgs {
    pub ivars: u64,
    pub nelems: u64,
    /// Device array of `nelems` ints (nonzero: skip that variable), or 0.
    pub status: u64,
    /// Device array of `nelems` compare values, or 0 (then `value` for every variable).
    pub values: u64,
    pub value: u64,
    pub cmp: u32,
    pub size: u32,
    pub is_signed: u32,
    pub pad: u32,
}

/// Declares `AmoOp` from one table: each operation's code in the `rshmem_amo` kernel's `op`
/// parameter and the instruction kernels.ptx runs for it (a test reads the PTX and compares).
macro_rules! amo_ops {
    ($($v:ident = $n:literal $ptx:literal),* $(,)?) => {
        /// Operations of the `rshmem_amo` kernel.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[repr(u32)]
        pub enum AmoOp { $($v = $n),* }

        #[cfg(test)]
        impl AmoOp {
            const ALL: [AmoOp; [$($n),*].len()] = [$(AmoOp::$v),*];

            /// The instruction kernels.ptx runs for this operation (either width).
            fn ptx(self) -> &'static str {
                match self { $(AmoOp::$v => $ptx),* }
            }
        }
    };
}

amo_ops! {
    Add = 0 "atom.sys.global.add.",
    And = 1 "atom.sys.global.and.",
    Or = 2 "atom.sys.global.or.",
    Xor = 3 "atom.sys.global.xor.",
    Swap = 4 "atom.sys.global.exch.",
    CompareSwap = 5 "atom.sys.global.cas.",
    Fetch = 6 "ld.relaxed.sys.global.",
    Set = 7 "atom.sys.global.exch.",
}

pub struct Kernels {
    module: CUmodule,
    stream_module: CUmodule,
    proxy_module: CUmodule,
    amo: CUfunction,
    proxy_amo: CUfunction,
    wait_u64: CUfunction,
    store: CUfunction,
    wait: CUfunction,
}

// SAFETY: module and function handles may be used from any thread with their context current.
unsafe impl Send for Kernels {}
// SAFETY: as for Send: the handles are never written after loading.
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
        let null = std::ptr::null_mut();
        // Owned from here on: an error below unloads what was loaded (Drop).
        let mut k = Kernels {
            module: image::load(IMAGE)?,
            stream_module: null,
            proxy_module: null,
            amo: null,
            proxy_amo: null,
            wait_u64: null,
            store: null,
            wait: null,
        };
        k.stream_module = image::load(STREAM)?;
        k.proxy_module = image::load(PROXY)?;
        k.proxy_amo = function(d, k.proxy_module, c"rk_proxy_amo")?;
        k.amo = function(d, k.module, c"rshmem_amo")?;
        k.wait_u64 = function(d, k.module, c"rshmem_wait_u64")?;
        k.store = function(d, k.stream_module, c"rk_store")?;
        k.wait = function(d, k.stream_module, c"rk_wait")?;
        Ok(k)
    }

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

    /// Enqueues the one-thread taker of the remote AMO posted in the proxy channel at `channel`
    /// (device/rshmem_proxy.cuh `serve_amo`: it runs the AMO unless a device thread took it).
    ///
    /// # Safety
    /// `channel` must be a live proxy channel header the GPU maps, valid until the kernel ends.
    pub unsafe fn proxy_amo(&self, stream: CUstream, channel: u64) -> CuResult<()> {
        let mut ch = channel;
        let mut params: [*mut c_void; 1] = [(&mut ch as *mut u64).cast()];
        self.launch(self.proxy_amo, stream, &mut params)
    }

    /// Enqueues a wait until the 8-byte word at `addr` compares `cmp` (NVSHMEM_CMP_*, 0..=5,
    /// unsigned) with `value`.
    ///
    /// # Safety
    /// `addr` must be an 8-byte aligned device word that stays mapped while the kernel spins.
    pub unsafe fn wait_u64(&self, stream: CUstream, addr: u64, cmp: u32, value: u64) -> CuResult<()> {
        let (mut addr, mut cmp, mut value) = (addr, cmp, value);
        let mut params: [*mut c_void; 3] = [(&mut addr as *mut u64).cast(), (&mut cmp as *mut u32).cast(), (&mut value as *mut u64).cast()];
        self.launch(self.wait_u64, stream, &mut params)
    }

    /// Enqueues a store of the low `size` bytes (1, 2, 4 or 8) of `value` at device address `addr`.
    ///
    /// # Safety
    /// `addr` must be `size`-aligned device memory the kernel may write, mapped until it runs.
    pub unsafe fn store(&self, stream: CUstream, addr: u64, value: u64, size: u32) -> CuResult<()> {
        let mut a = StoreArgs { addr, value, size, pad: 0 };
        self.launch_block(self.store, 1, stream, (&mut a as *mut StoreArgs).cast())
    }

    /// Enqueues a wait until every variable of `args` (not skipped by its status) compares true.
    ///
    /// # Safety
    /// `args.ivars` must be `nelems` aligned variables of `args.size` bytes in device memory,
    /// and `status`/`values` (when not 0) device arrays of `nelems`, all valid until the kernel ends.
    pub unsafe fn wait(&self, stream: CUstream, args: &WaitArgs) -> CuResult<()> {
        let mut a = *args;
        self.launch_block(self.wait, 256, stream, (&mut a as *mut WaitArgs).cast())
    }

    /// One block of `threads` with one argument struct (copied by the driver at launch).
    fn launch_block(&self, f: CUfunction, threads: u32, stream: CUstream, arg: *mut c_void) -> CuResult<()> {
        let d = driver()?;
        let mut params: [*mut c_void; 1] = [arg];
        cu!(d, cuLaunchKernel(f, 1, 1, 1, threads, 1, 1, 0, stream, params.as_mut_ptr(), std::ptr::null_mut()))
    }
}

impl Drop for Kernels {
    fn drop(&mut self) {
        if let Ok(d) = driver() {
            for m in [self.module, self.stream_module, self.proxy_module] {
                if !m.is_null() {
                    let _ = cu!(d, cuModuleUnload(m));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The argument structs match the parameter sizes the PTX declares.
    #[test]
    fn stream_kernel_params_match_the_ptx() {
        let param = |entry: &str| -> usize {
            let at = STREAM.ptx.find(&format!(".entry {entry}(")).expect("entry in stream.ptx");
            let line = STREAM.ptx[at..].lines().nth(1).unwrap_or_default();
            line.rsplit('[').next().and_then(|s| s.trim_end_matches([']', ',']).parse().ok()).unwrap_or(0)
        };
        assert_eq!(param("rk_store"), std::mem::size_of::<StoreArgs>());
        assert_eq!(param("rk_wait"), std::mem::size_of::<WaitArgs>());
    }

    /// `rshmem_amo` runs each operation's instruction when `op` is its code, in both widths:
    /// kernels.ptx guards each one with `setp.eq.u32 %p, %op, <code>;` on the line before.
    #[test]
    fn amo_op_codes_match_the_ptx() {
        let lines: Vec<&str> = IMAGE.ptx.lines().map(str::trim).collect();
        let guards = lines.iter().filter(|l| l.starts_with("setp.eq.u32 %p, %op, ")).count();
        assert_eq!(guards, 2 * AmoOp::ALL.len(), "one guard per operation and width");
        for op in AmoOp::ALL {
            let guard = format!("setp.eq.u32 %p, %op, {};", op as u32);
            let runs: Vec<&str> = lines.windows(2).filter(|w| w[0] == guard).map(|w| w[1]).collect();
            assert_eq!(runs.len(), 2, "{op:?}: a 64-bit and a 32-bit form");
            for run in runs {
                assert!(run.starts_with(&format!("@%p {}", op.ptx())), "{op:?} runs `{run}`");
            }
        }
    }

    /// The PTX assembles for Hopper wherever ptxas is installed (CI: scripts/install-nvcc.sh).
    #[test]
    fn ptx_assembles_when_ptxas_is_there() {
        match crate::cuda::ptxas_for_hopper(concat!(env!("CARGO_MANIFEST_DIR"), "/src/cuda/kernels.ptx")) {
            None => eprintln!("skipped: no ptxas"),
            Some(r) => r.unwrap_or_else(|e| panic!("{e}")),
        }
    }
}
