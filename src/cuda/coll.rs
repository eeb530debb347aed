//! The library's on-stream collective kernels (src/cuda/kernels/*.cu, compiled to PTX in
//! src/cuda/generated/ by scripts/gen_ptx.sh and committed): loading, argument layouts and launches.
//!
//! `coll.ptx` (barrier, broadcast/fcollect/alltoall) is loaded with the first collective;
//! each `reduce_<kind>.ptx` (every reduction operator for one element kind) on the first
//! reduction of that kind, `ll.ptx` (small broadcast/fcollect/alltoall through the device
//! library) on the first small one, so a program loads (and, without machine code for its GPU,
//! JIT-compiles) only what it uses; image.rs picks the cubin or the PTX. The argument structs
//! mirror the ones in kernels/common.cuh; `param_sizes_match_the_ptx` checks them against the
//! parameter sizes the PTX declares.

use std::collections::HashMap;
use std::ffi::{c_void, CStr, CString};
use std::sync::Mutex;

use super::image::{self, Image};
use super::sys::{CUfunction, CUmodule, CUstream};
use super::{driver, CuResult, Driver};

/// Largest team an on-stream collective serves (RK_MAX_TEAM).
pub const MAX_TEAM: usize = 128;
/// Threads per block of the data kernels (RK_THREADS).
pub const THREADS: u32 = 512;
/// 16-byte vectors one block moves per pass (RK_THREADS threads, up to 4 in flight each).
pub const VECTORS_PER_BLOCK: usize = THREADS as usize * 4;
/// Chunk flag words per PE in the runtime area: the most chunks a two-phase kernel cuts one
/// slice into (RK_CHUNKS).
pub const CHUNKS: usize = 128;

/// rk_sync: the team, the flag words and step counts (on the device, so that a launch captured
/// in a CUDA graph takes new steps at every replay) and the steps of one launch.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct SyncArgs {
    pub flags: u64,
    pub steps: u64,
    pub heap_stride: i64,
    pub tickets: u64,
    /// This PE's chunk flags (CHUNKS u32 per world PE).
    pub chunks: u64,
    pub mype: i32,
    pub start: i32,
    pub stride: i32,
    pub size: i32,
    pub my: i32,
    pub total: i32,
}

/// rk_gather_args.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GatherArgs {
    pub s: SyncArgs,
    pub dest: u64,
    pub src: u64,
    pub nbytes: u64,
    pub dest_step: u64,
    pub src_off: u64,
    pub only: i32,
    /// Non-zero: a broadcast (`only` its root) pushed by the non-roots (rk_broadcast_push).
    pub push: i32,
}

/// rk_reduce_args.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ReduceArgs {
    pub s: SyncArgs,
    pub dest: u64,
    pub src: u64,
    pub n: u64,
    pub src_off: u64,
    pub stage: u64,
    pub mode: i32,
    /// REDUCE_TWO_PHASE: chunks per slice (1..=CHUNKS).
    pub chunks: i32,
}

/// rk_ll_args (kernels/ll.cu): one small broadcast, fcollect or alltoall by the device
/// library's block collective.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct LlArgs {
    pub dest: u64,
    pub src: u64,
    pub nbytes: u64,
    pub team: i32,
    pub what: i32,
    pub root: i32,
    pub pad: i32,
}

/// LlArgs::what.
pub const LL_BROADCAST: i32 = 0;
pub const LL_FCOLLECT: i32 = 1;
pub const LL_ALLTOALL: i32 = 2;
/// Threads of the rk_ll block (RK_LL_THREADS).
pub const LL_THREADS: u32 = 256;

/// Synchronisation steps each kernel takes with every member (the host advances its pair
/// counts by this much per launch).
pub const BARRIER_STEPS: u32 = 1;
pub const GATHER_STEPS: u32 = 2;
pub const REDUCE_DIRECT_STEPS: u32 = 2;
pub const REDUCE_TWO_PHASE_STEPS: u32 = 3;

/// Reduction modes (rk_reduce_args::mode): every PE reduces everything; two phases; staged;
/// pushed.
pub const REDUCE_DIRECT: i32 = 0;
pub const REDUCE_TWO_PHASE: i32 = 1;
pub const REDUCE_STAGED: i32 = 2;
pub const REDUCE_PUSH: i32 = 3;

/// Declares a fieldless enum from one table of `Variant = "name"`: the enum, `ALL` (every
/// variant, in table order) and `name()`. With `images "prefix"`, also `image()`: the committed
/// module `generated/<prefix><name>.ptx`, named `<prefix><name>`.
macro_rules! named_enum {
    ($(#[$m:meta])* $vis:vis enum $t:ident { $($v:ident = $n:literal),* $(,)? }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        $vis enum $t { $($v),* }

        impl $t {
            pub const ALL: [$t; [$($n),*].len()] = [$($t::$v),*];

            pub fn name(self) -> &'static str {
                match self { $($t::$v => $n),* }
            }
        }
    };
    ($(#[$m:meta])* $vis:vis enum $t:ident images $p:literal { $($v:ident = $n:literal),* $(,)? }) => {
        named_enum!($(#[$m])* $vis enum $t { $($v = $n),* });

        impl $t {
            fn image(self) -> Image {
                match self {
                    $($t::$v => Image { name: concat!($p, $n), ptx: concat!(include_str!(concat!("generated/", $p, $n, ".ptx")), "\0") }),*
                }
            }
        }
    };
}

named_enum! {
    /// Element kinds of the reduction kernels (one PTX module each).
    pub enum Kind images "reduce_" {
        U8 = "u8", U16 = "u16", U32 = "u32", U64 = "u64",
        I8 = "i8", I16 = "i16", I32 = "i32", I64 = "i64",
        F16 = "f16", Bf16 = "bf16", F32 = "f32", F64 = "f64",
    }
}

impl Kind {
    pub fn size(self) -> usize {
        match self {
            Kind::U8 | Kind::I8 => 1,
            Kind::U16 | Kind::I16 | Kind::F16 | Kind::Bf16 => 2,
            Kind::U32 | Kind::I32 | Kind::F32 => 4,
            Kind::U64 | Kind::I64 | Kind::F64 => 8,
        }
    }

    fn is_float(self) -> bool {
        matches!(self, Kind::F16 | Kind::Bf16 | Kind::F32 | Kind::F64)
    }

    /// The kernel kind that computes `op` on this kind: bitwise operators, sum and product on
    /// integers act on the bits of the width, so signed kinds use the unsigned kernels.
    pub fn for_op(self, op: RedOp) -> Kind {
        match (op, self) {
            (RedOp::Max | RedOp::Min, k) => k,
            (_, Kind::I8) => Kind::U8,
            (_, Kind::I16) => Kind::U16,
            (_, Kind::I32) => Kind::U32,
            (_, Kind::I64) => Kind::U64,
            (_, k) => k,
        }
    }

    /// Whether a kernel for `op` on this kind exists (floating kinds have no bitwise ops).
    pub fn supports(self, op: RedOp) -> bool {
        !(self.is_float() && matches!(op, RedOp::And | RedOp::Or | RedOp::Xor))
    }
}

named_enum! {
    /// Reduction operators (NVSHMEM's names).
    pub enum RedOp { And = "and", Or = "or", Xor = "xor", Max = "max", Min = "min", Sum = "sum", Prod = "prod" }
}

pub const COLL: Image = Image { name: "coll", ptx: concat!(include_str!("generated/coll.ptx"), "\0") };
pub const LL: Image = Image { name: "ll", ptx: concat!(include_str!("generated/ll.ptx"), "\0") };

/// The names of every module here (for image.rs's test that each has its cubins).
pub fn module_names() -> Vec<&'static str> {
    [COLL.name, LL.name].into_iter().chain(Kind::ALL.iter().map(|k| k.image().name)).collect()
}

/// A loaded module; unloaded on drop.
struct Module(CUmodule);

// SAFETY: module handles may be used from any thread with their context current.
unsafe impl Send for Module {}
// SAFETY: as for Send: every use goes through the driver, which serializes what it must.
unsafe impl Sync for Module {}

impl Module {
    fn load(image: Image) -> CuResult<Module> {
        image::load(image).map(Module)
    }

    fn function(&self, d: &Driver, name: &CStr) -> CuResult<CUfunction> {
        let mut f: CUfunction = std::ptr::null_mut();
        cu!(d, cuModuleGetFunction(&mut f, self.0, name.as_ptr()))?;
        Ok(f)
    }
}

impl Drop for Module {
    fn drop(&mut self) {
        if let Ok(d) = driver() {
            let _ = cu!(d, cuModuleUnload(self.0));
        }
    }
}

#[derive(Clone, Copy)]
struct Func(CUfunction);
// SAFETY: function handles may be used from any thread with their context current.
unsafe impl Send for Func {}
// SAFETY: as for Send: a launch only reads the handle.
unsafe impl Sync for Func {}

/// The collective kernels of one context.
pub struct CollKernels {
    _coll: Module,
    barrier: Func,
    gather: Func,
    reduce_modules: Mutex<HashMap<Kind, Module>>,
    reduce_fns: Mutex<HashMap<(RedOp, Kind), Func>>,
}

impl CollKernels {
    /// Loads coll.ptx into the current context (the reduction modules come on first use).
    pub fn load() -> CuResult<CollKernels> {
        let d = driver()?;
        let coll = Module::load(COLL)?;
        let barrier = Func(coll.function(d, c"rk_barrier")?);
        let gather = Func(coll.function(d, c"rk_gather")?);
        Ok(CollKernels { _coll: coll, barrier, gather, reduce_modules: Mutex::new(HashMap::new()), reduce_fns: Mutex::new(HashMap::new()) })
    }

    /// The kernel for `op` on `kind` (already mapped with `Kind::for_op`), loading its module
    /// into the current context on first use.
    fn reduce_fn(&self, op: RedOp, kind: Kind) -> CuResult<CUfunction> {
        if let Some(f) = self.reduce_fns.lock().unwrap_or_else(|p| p.into_inner()).get(&(op, kind)) {
            return Ok(f.0);
        }
        let d = driver()?;
        let mut modules = self.reduce_modules.lock().unwrap_or_else(|p| p.into_inner());
        if let std::collections::hash_map::Entry::Vacant(e) = modules.entry(kind) {
            e.insert(Module::load(kind.image())?);
        }
        let name = CString::new(format!("rk_reduce_{}_{}", op.name(), kind.name())).expect("no NUL in kernel names");
        let f = modules[&kind].function(d, &name)?;
        self.reduce_fns.lock().unwrap_or_else(|p| p.into_inner()).insert((op, kind), Func(f));
        Ok(f)
    }

    /// Enqueues the one-block barrier kernel.
    ///
    /// # Safety
    /// The addresses in `args` must be this PE's runtime area (flag words and tickets) inside
    /// a heap window mapped for every member, live until the kernel has run on `stream`.
    pub unsafe fn barrier(&self, stream: CUstream, args: &SyncArgs) -> CuResult<()> {
        let mut a = *args;
        launch(self.barrier.0, 1, MAX_TEAM as u32, stream, (&mut a as *mut SyncArgs).cast())
    }

    /// Enqueues a broadcast/fcollect/alltoall kernel of `grid` blocks.
    ///
    /// # Safety
    /// As for `barrier`; `dest` must be this PE's memory for `nbytes` at every `k * dest_step`
    /// and `src + src_off` a symmetric range of `nbytes` on every member.
    pub unsafe fn gather(&self, stream: CUstream, grid: u32, args: &GatherArgs) -> CuResult<()> {
        let mut a = *args;
        launch(self.gather.0, grid, THREADS, stream, (&mut a as *mut GatherArgs).cast())
    }

    /// Enqueues a reduction kernel of `grid` blocks for `op` on `kind`.
    ///
    /// # Safety
    /// As for `barrier`; `dest` (n elements) and `src + src_off` (n elements) must be
    /// symmetric ranges on every member.
    pub unsafe fn reduce(&self, stream: CUstream, grid: u32, op: RedOp, kind: Kind, args: &ReduceArgs) -> CuResult<()> {
        let f = self.reduce_fn(op, kind)?;
        let mut a = *args;
        launch(f, grid, THREADS, stream, (&mut a as *mut ReduceArgs).cast())
    }
}

/// The low-latency kernel (ll.ptx: the device library's block collectives), in a module of its
/// own that holds a copy of the device state, which the runtime writes in after loading.
pub struct LlKernel {
    module: Module,
    ll: Func,
}

impl LlKernel {
    /// Loads ll.ptx into the current context.
    pub fn load() -> CuResult<LlKernel> {
        let module = Module::load(LL)?;
        let ll = Func(module.function(driver()?, c"rk_ll")?);
        Ok(LlKernel { module, ll })
    }

    /// The module, for writing the device state into it.
    pub fn module(&self) -> CUmodule {
        self.module.0
    }

    /// Enqueues one small collective (one block).
    ///
    /// # Safety
    /// The module must hold the job's device state; `args` must name a team with low-latency
    /// slots, ranges of this PE's symmetric heap and a size the device collective takes.
    pub unsafe fn launch(&self, stream: CUstream, args: &LlArgs) -> CuResult<()> {
        let mut a = *args;
        launch(self.ll.0, 1, LL_THREADS, stream, (&mut a as *mut LlArgs).cast())
    }
}

/// Launches `f` with its one argument struct at `arg` (copied by the driver at launch).
fn launch(f: CUfunction, grid: u32, block: u32, stream: CUstream, arg: *mut c_void) -> CuResult<()> {
    let d = driver()?;
    let mut params: [*mut c_void; 1] = [arg];
    cu!(d, cuLaunchKernel(f, grid, 1, 1, block, 1, 1, 0, stream, params.as_mut_ptr(), std::ptr::null_mut()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(ptx: &str) -> Vec<(String, usize)> {
        // `.visible .entry NAME(` then `.param .align 8 .b8 NAME_param_0[SIZE]`
        let mut out = Vec::new();
        let mut lines = ptx.lines();
        while let Some(l) = lines.next() {
            if let Some(rest) = l.strip_prefix(".visible .entry ") {
                let name = rest.trim_end_matches('(').to_string();
                let p = lines.next().unwrap_or_default();
                let size = p.rsplit('[').next().and_then(|s| s.trim_end_matches(']').parse().ok()).unwrap_or(0);
                out.push((name, size));
            }
        }
        out
    }

    #[test]
    fn param_sizes_match_the_ptx() {
        let coll = entries(COLL.ptx);
        assert!(coll.contains(&("rk_barrier".into(), std::mem::size_of::<SyncArgs>())), "{coll:?}");
        assert!(coll.contains(&("rk_gather".into(), std::mem::size_of::<GatherArgs>())), "{coll:?}");
        assert_eq!(entries(LL.ptx), vec![("rk_ll".to_string(), std::mem::size_of::<LlArgs>())]);
        for kind in Kind::ALL {
            let e = entries(kind.image().ptx);
            assert!(!e.is_empty(), "no kernels in reduce_{}.ptx", kind.name());
            for (name, size) in &e {
                assert_eq!(*size, std::mem::size_of::<ReduceArgs>(), "{name}");
            }
        }
    }

    #[test]
    fn every_table_entry_has_its_kernel() {
        for kind in Kind::ALL {
            for op in [RedOp::And, RedOp::Or, RedOp::Xor, RedOp::Max, RedOp::Min, RedOp::Sum, RedOp::Prod] {
                if !kind.supports(op) {
                    continue;
                }
                let k = kind.for_op(op);
                let name = format!("rk_reduce_{}_{}", op.name(), k.name());
                assert!(entries(k.image().ptx).iter().any(|(n, _)| *n == name), "missing {name}");
            }
        }
    }

    /// The PTX assembles for Hopper wherever ptxas is installed (CI: scripts/install-nvcc.sh;
    /// scripts/gen_ptx.sh also checks the oldest target, sm_80).
    #[test]
    fn ptx_assembles_when_ptxas_is_there() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src/cuda/generated");
        let mut files = vec!["coll.ptx".to_string(), "ll.ptx".to_string()];
        files.extend(Kind::ALL.iter().map(|k| format!("reduce_{}.ptx", k.name())));
        for f in files {
            match crate::cuda::ptxas_for_hopper(&format!("{dir}/{f}")) {
                None => return eprintln!("skipped: no ptxas"),
                Some(r) => r.unwrap_or_else(|e| panic!("{f}: {e}")),
            }
        }
    }
}
