//! PMIx client for Open MPI's `mpirun`/`oshrun` (and other PMIx launchers), with libpmix
//! loaded at run time: a program that never runs under PMIx never needs the library.
//!
//! Rank 0 puts its star address (PMIx_Put, global scope) and commits; a fence over the whole
//! namespace that collects data makes it visible; every rank gets it from rank 0. The PMIx
//! session stays open until process exit (PMIx_Finalize then), so re-initialisation works.
//!
//! Without libpmix the job is refused: Open MPI's environment (OMPI_COMM_WORLD_RANK/SIZE, a
//! job id) is no private channel for the job secret.

use std::ffi::{c_char, c_void, CStr, CString};
use std::sync::Mutex;
use std::time::Duration;

use super::{Bootstrap, JobStar, KeyValueStore};
use crate::error::{Error, Result};

pub const ENV_RANK: &str = "PMIX_RANK";
pub const ENV_NAMESPACE: &str = "PMIX_NAMESPACE";
pub const ENV_OMPI_RANK: &str = "OMPI_COMM_WORLD_RANK";

pub fn detected() -> bool {
    std::env::var_os(ENV_RANK).is_some() || std::env::var_os(ENV_OMPI_RANK).is_some()
}

fn err(what: impl std::fmt::Display) -> Error {
    Error::bootstrap(format!("bootstrap (PMIx): {what}"))
}

/// The PMIx ABI subset we use: our own definitions of the layouts in pmix_common.h (PMIx 4.x;
/// the sizes are checked by the tests below against the installed header when there is one).
pub mod abi {
    use std::ffi::c_char;

    pub const MAX_NSLEN: usize = 255;
    pub const MAX_KEYLEN: usize = 511;
    pub type Status = i32;
    pub const SUCCESS: Status = 0;
    pub type Rank = u32;
    pub const RANK_WILDCARD: Rank = u32::MAX - 1;
    pub type DataType = u16;
    pub const BOOL: DataType = 1;
    pub const STRING: DataType = 3;
    pub const INT: DataType = 6;
    pub const UINT32: DataType = 14;
    pub type Scope = u8;
    pub const GLOBAL: Scope = 3;
    pub const KEY_JOB_SIZE: &str = "pmix.job.size";
    pub const KEY_COLLECT_DATA: &str = "pmix.collect";
    pub const KEY_TIMEOUT: &str = "pmix.timeout";

    /// pmix_proc_t
    #[repr(C)]
    #[derive(Clone, Copy)]
    pub struct Proc {
        pub nspace: [c_char; MAX_NSLEN + 1],
        pub rank: Rank,
    }

    /// The union inside pmix_value_t: only the members we touch, padded to its full size
    /// (its largest member is three pointers wide).
    #[repr(C)]
    #[derive(Clone, Copy)]
    pub union ValueData {
        pub flag: bool,
        pub string: *mut c_char,
        pub integer: i32,
        pub uint32: u32,
        pub size: usize,
        pub pad: [u64; 3],
    }

    /// pmix_value_t
    #[repr(C)]
    #[derive(Clone, Copy)]
    pub struct Value {
        pub ty: DataType,
        pub data: ValueData,
    }

    /// pmix_info_t
    #[repr(C)]
    #[derive(Clone, Copy)]
    pub struct Info {
        pub key: [c_char; MAX_KEYLEN + 1],
        pub flags: u32,
        pub value: Value,
    }

    fn copy_str<const N: usize>(text: &str) -> [c_char; N] {
        let mut out = [0 as c_char; N];
        for (o, b) in out.iter_mut().zip(text.bytes().take(N - 1)) {
            *o = b as c_char;
        }
        out
    }

    impl Proc {
        pub fn new(nspace: &[c_char; MAX_NSLEN + 1], rank: Rank) -> Proc {
            Proc { nspace: *nspace, rank }
        }
        pub fn empty() -> Proc {
            Proc { nspace: [0; MAX_NSLEN + 1], rank: 0 }
        }
    }

    impl Info {
        pub fn new(key: &str, value: Value) -> Info {
            Info { key: copy_str(key), flags: 0, value }
        }
    }

    impl Value {
        pub fn boolean(b: bool) -> Value {
            Value { ty: BOOL, data: ValueData { pad: [0; 3] } }.with(|v| v.data.flag = b)
        }
        pub fn int(i: i32) -> Value {
            Value { ty: INT, data: ValueData { pad: [0; 3] } }.with(|v| v.data.integer = i)
        }
        /// A string value borrowing `s` (PMIx copies what it keeps).
        pub fn string(s: &std::ffi::CStr) -> Value {
            Value { ty: STRING, data: ValueData { pad: [0; 3] } }.with(|v| v.data.string = s.as_ptr().cast_mut())
        }
        fn with(mut self, f: impl FnOnce(&mut Value)) -> Value {
            f(&mut self);
            self
        }
    }
}

type InitFn = unsafe extern "C" fn(*mut abi::Proc, *mut abi::Info, usize) -> abi::Status;
type FinalizeFn = unsafe extern "C" fn(*const abi::Info, usize) -> abi::Status;
type PutFn = unsafe extern "C" fn(abi::Scope, *const c_char, *mut abi::Value) -> abi::Status;
type CommitFn = unsafe extern "C" fn() -> abi::Status;
type FenceFn = unsafe extern "C" fn(*const abi::Proc, usize, *const abi::Info, usize) -> abi::Status;
type GetFn = unsafe extern "C" fn(*const abi::Proc, *const c_char, *const abi::Info, usize, *mut *mut abi::Value) -> abi::Status;
type ErrorStringFn = unsafe extern "C" fn(abi::Status) -> *const c_char;
type AbortFn = unsafe extern "C" fn(i32, *const c_char, *mut abi::Proc, usize) -> abi::Status;

/// Run-time loading of a C library: the only unsafe code of this module's loader.
mod dl {
    use super::*;

    /// A loaded library; deliberately never unloaded (no Drop): code it started may still run.
    pub struct Library(*mut c_void);

    // SAFETY: a dlopen handle is a process-wide token; dlsym may be called from any thread.
    unsafe impl Send for Library {}

    impl Library {
        pub fn open(name: &str) -> std::result::Result<Library, String> {
            let c = CString::new(name).map_err(|_| format!("library name {name:?} contains a NUL byte"))?;
            // SAFETY: dlopen takes a NUL-terminated path; RTLD_GLOBAL lets the library's own
            // plug-ins resolve its symbols.
            let h = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL) };
            if h.is_null() {
                return Err(last_error());
            }
            Ok(Library(h))
        }

        /// The address of `name`, as a function pointer of type `F`.
        ///
        /// # Safety
        /// `F` must be the `unsafe extern "C" fn` type of the symbol's C declaration.
        pub unsafe fn symbol<F: Copy>(&self, name: &str) -> std::result::Result<F, String> {
            assert_eq!(std::mem::size_of::<F>(), std::mem::size_of::<*mut c_void>());
            let c = CString::new(name).map_err(|_| format!("symbol name {name:?} contains a NUL byte"))?;
            // SAFETY: the handle is live (never closed) and the name NUL-terminated.
            let p = unsafe { libc::dlsym(self.0, c.as_ptr()) };
            if p.is_null() {
                return Err(format!("symbol {name} not found: {}", last_error()));
            }
            // SAFETY: the caller guarantees F is the symbol's function pointer type, and the
            // sizes match (asserted above).
            Ok(unsafe { std::mem::transmute_copy::<*mut c_void, F>(&p) })
        }
    }

    fn last_error() -> String {
        // SAFETY: dlerror returns NULL or a NUL-terminated string valid until the next dl call.
        let e = unsafe { libc::dlerror() };
        if e.is_null() {
            return "unknown dlopen error".into();
        }
        // SAFETY: non-null result of dlerror, read at once.
        unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned()
    }
}

/// The libpmix entry points we call.
struct Api {
    _lib: dl::Library,
    init: InitFn,
    finalize: FinalizeFn,
    put: PutFn,
    commit: CommitFn,
    fence: FenceFn,
    get: GetFn,
    error_string: ErrorStringFn,
    abort: AbortFn,
}

impl Api {
    fn load(name: &str) -> std::result::Result<Api, String> {
        let lib = dl::Library::open(name)?;
        // SAFETY: each type alias above is the C prototype of that PMIx function (pmix.h).
        unsafe {
            Ok(Api {
                init: lib.symbol("PMIx_Init")?,
                finalize: lib.symbol("PMIx_Finalize")?,
                put: lib.symbol("PMIx_Put")?,
                commit: lib.symbol("PMIx_Commit")?,
                fence: lib.symbol("PMIx_Fence")?,
                get: lib.symbol("PMIx_Get")?,
                error_string: lib.symbol("PMIx_Error_string")?,
                abort: lib.symbol("PMIx_Abort")?,
                _lib: lib,
            })
        }
    }

    fn describe(&self, status: abi::Status) -> String {
        // SAFETY: PMIx_Error_string returns a static NUL-terminated string for any status.
        let s = unsafe { (self.error_string)(status) };
        if s.is_null() {
            return format!("status {status}");
        }
        // SAFETY: non-null static string from libpmix.
        format!("{} ({status})", unsafe { CStr::from_ptr(s) }.to_string_lossy())
    }

    fn check(&self, what: &str, status: abi::Status) -> Result<()> {
        if status == abi::SUCCESS {
            Ok(())
        } else {
            Err(err(format!("{what} failed: {}", self.describe(status))))
        }
    }
}

/// A PMIx session: the library, and who we are.
struct Pmix {
    api: Api,
    me: abi::Proc,
    size: usize,
    timeout: Duration,
}

// SAFETY: the session only holds plain data and the library handle; PMIx client calls are
// thread-safe, and the session is used under a mutex anyway.
unsafe impl Send for Pmix {}

impl Pmix {
    fn start(api: Api, timeout: Duration) -> Result<Pmix> {
        let mut me = abi::Proc::empty();
        // SAFETY: `me` is a writable pmix_proc_t; no info array is passed.
        let rc = unsafe { (api.init)(&mut me, std::ptr::null_mut(), 0) };
        api.check("PMIx_Init", rc)?;
        let mut s = Pmix { api, me, size: 0, timeout };
        let job = abi::Proc::new(&s.me.nspace, abi::RANK_WILDCARD);
        s.size = s.get_u32(&job, abi::KEY_JOB_SIZE)? as usize;
        if s.size == 0 || s.me.rank as usize >= s.size {
            return Err(err(format!("PMIx says this is rank {} of a job of {}", s.me.rank, s.size)));
        }
        Ok(s)
    }

    /// PMIx_Get; the result is released before returning.
    fn get_value<T>(&self, proc_: &abi::Proc, key: &str, read: impl FnOnce(&abi::Value) -> Result<T>) -> Result<T> {
        let k = CString::new(key).map_err(|_| err("key with a NUL byte"))?;
        let info = [abi::Info::new(abi::KEY_TIMEOUT, abi::Value::int(self.timeout_secs()))];
        let mut out: *mut abi::Value = std::ptr::null_mut();
        // SAFETY: valid proc, NUL-terminated key, one info entry, and a place for the result.
        let rc = unsafe { (self.api.get)(proc_, k.as_ptr(), info.as_ptr(), info.len(), &mut out) };
        self.api.check(&format!("PMIx_Get({key}) from rank {}", proc_.rank as i64), rc)?;
        if out.is_null() {
            return Err(err(format!("PMIx_Get({key}) returned no value")));
        }
        // SAFETY: PMIx returned a valid, malloc'd pmix_value_t that we now own.
        let v = unsafe { *out };
        let result = read(&v);
        // SAFETY: releasing what PMIx allocated, as its PMIX_VALUE_RELEASE does: the string
        // payload (if any), then the value itself; both come from malloc.
        unsafe {
            if v.ty == abi::STRING && !v.data.string.is_null() {
                libc::free(v.data.string.cast());
            }
            libc::free(out.cast());
        }
        result
    }

    fn get_u32(&self, proc_: &abi::Proc, key: &str) -> Result<u32> {
        self.get_value(proc_, key, |v| match v.ty {
            // SAFETY: the type tag says which union member is live.
            abi::UINT32 => Ok(unsafe { v.data.uint32 }),
            // SAFETY: as above.
            abi::INT => Ok(unsafe { v.data.integer } as u32),
            t => Err(err(format!("{key} has PMIx type {t}, expected uint32"))),
        })
    }

    fn timeout_secs(&self) -> i32 {
        self.timeout.as_secs_f64().ceil().min(i32::MAX as f64) as i32
    }
}

impl KeyValueStore for Pmix {
    fn put(&mut self, key: &str, value: &str) -> Result<()> {
        let (k, v) = (CString::new(key), CString::new(value));
        let (Ok(k), Ok(v)) = (k, v) else { return Err(err("key or value with a NUL byte")) };
        let mut val = abi::Value::string(&v);
        // SAFETY: NUL-terminated key; `val` points at `v`, alive for the call (PMIx copies it).
        let rc = unsafe { (self.api.put)(abi::GLOBAL, k.as_ptr(), &mut val) };
        self.api.check("PMIx_Put", rc)?;
        // SAFETY: no arguments.
        let rc = unsafe { (self.api.commit)() };
        self.api.check("PMIx_Commit", rc)
    }

    fn fence(&mut self) -> Result<()> {
        let info = [
            abi::Info::new(abi::KEY_COLLECT_DATA, abi::Value::boolean(true)),
            abi::Info::new(abi::KEY_TIMEOUT, abi::Value::int(self.timeout_secs())),
        ];
        // SAFETY: NULL procs means every process of our namespace; the info array is valid.
        let rc = unsafe { (self.api.fence)(std::ptr::null(), 0, info.as_ptr(), info.len()) };
        self.api.check("PMIx_Fence (waiting for every PE to reach shmem_init)", rc)
    }

    fn get_from_rank0(&mut self, key: &str) -> Result<String> {
        let rank0 = abi::Proc::new(&self.me.nspace, 0);
        self.get_value(&rank0, key, |v| {
            if v.ty != abi::STRING {
                return Err(err(format!("{key} has PMIx type {}, expected a string", v.ty)));
            }
            // SAFETY: a STRING value holds a NUL-terminated string (or NULL).
            let p = unsafe { v.data.string };
            if p.is_null() {
                return Err(err(format!("{key} is an empty string")));
            }
            // SAFETY: non-null NUL-terminated string owned by the value, read before release.
            Ok(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
        })
    }
}

static SESSION: Mutex<Option<Pmix>> = Mutex::new(None);

/// The library to load: RSHMEM_PMIX_LIBRARY, else the soname of PMIx 4.x/5.x clients.
fn library_name() -> String {
    crate::env::current(crate::env::PMIX_LIBRARY).1
}

/// Connects to the PMIx server (once per process) and joins the job's star; without libpmix,
/// uses Open MPI's environment instead (see the module comment).
pub fn bootstrap(timeout: Duration) -> Result<Box<dyn Bootstrap>> {
    let mut guard = SESSION.lock().unwrap_or_else(|p| p.into_inner());
    let epoch = super::next_star_epoch();
    if guard.is_none() {
        let lib = library_name();
        match Api::load(&lib) {
            Ok(api) => *guard = Some(Pmix::start(api, timeout)?),
            Err(why) => return ompi_env_fallback(&lib, &why),
        }
    }
    let pmix = guard.as_mut().expect("set above");
    let (rank, size) = (pmix.me.rank as usize, pmix.size);
    let key = format!("rshmem.star.{epoch}");
    JobStar::join(pmix, &key, rank, size, timeout, "pmix")?.on_global_exit(abort_job).per_host()
}

/// shmem_global_exit under PMIx: PMIx_Abort asks the launcher to end every process of the
/// job. Open MPI's mpirun also ends a job whose process exits early, Slurm's srun (without
/// --kill-on-bad-exit) does not: there, PEs on other hosts would wait on.
fn abort_job(status: i32) {
    // try_lock: never wait here; the session is only busy during init and at exit.
    if let Ok(guard) = SESSION.try_lock() {
        if let Some(s) = guard.as_ref() {
            let msg = CString::new(format!("rshmem: PE {} called shmem_global_exit({status})", s.me.rank)).unwrap_or_default();
            // SAFETY: a NUL-terminated message; NULL procs (0 of them) means every process of
            // our namespace. The launcher may end this process before the call returns.
            let rc = unsafe { (s.api.abort)(status, msg.as_ptr(), std::ptr::null_mut(), 0) };
            if rc != abi::SUCCESS {
                crate::log::warn(&format!("bootstrap (PMIx): PMIx_Abort failed: {}", s.api.describe(rc)));
            }
        }
    }
}

/// Without libpmix an Open MPI job has no channel private to the job: everything in its
/// environment (job id, ranks) is known to other local users, so no secret could reach the PEs.
/// Refuse rather than run a job anybody could join.
fn ompi_env_fallback(lib: &str, why: &str) -> Result<Box<dyn Bootstrap>> {
    Err(err(format!(
        "libpmix could not be loaded ({lib}: {why}). Without it this Open MPI job has no private channel to share its job secret, \
         and rshmem does not start a job other users could join. Install libpmix (Debian: libpmix2) or point RSHMEM_PMIX_LIBRARY at it, \
         or start the job with `rshmemrun -n N prog`"
    )))
}

/// Calls PMIx_Finalize if a session is open (at process exit).
pub fn finalize_session() {
    let mut guard = SESSION.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(s) = guard.take() {
        // SAFETY: no info array.
        let rc = unsafe { (s.api.finalize)(std::ptr::null(), 0) };
        if let Err(e) = s.api.check("PMIx_Finalize", rc) {
            crate::log::warn(&e.to_string());
        }
        // Dropping the session leaves the library loaded (Library never calls dlclose): its
        // threads may outlive finalize by a moment.
    }
}

#[cfg(test)]
mod tests {
    use super::abi::*;
    use super::*;
    use std::mem::{align_of, offset_of, size_of};

    /// The layouts of pmix_common.h (PMIx 4.2) on x86-64 and aarch64 Linux.
    #[test]
    fn layouts_match_pmix_4() {
        assert_eq!(size_of::<Proc>(), 260);
        assert_eq!(offset_of!(Proc, rank), 256);
        assert_eq!(size_of::<Value>(), 32);
        assert_eq!(align_of::<Value>(), 8);
        assert_eq!(offset_of!(Value, data), 8);
        assert_eq!(size_of::<Info>(), 552);
        assert_eq!(offset_of!(Info, flags), 512);
        assert_eq!(offset_of!(Info, value), 520);
    }

    /// Where the PMIx header is installed (Debian's libpmix-dev), compare with the C compiler.
    #[test]
    fn layouts_match_the_installed_header() {
        let inc = ["/usr/lib/x86_64-linux-gnu/pmix2/include", "/usr/include", "/usr/local/include"]
            .into_iter()
            .find(|d| std::path::Path::new(d).join("pmix_common.h").exists());
        let Some(inc) = inc else {
            eprintln!("pmix_common.h not installed; skipped");
            return;
        };
        let dir = std::env::temp_dir().join(format!("rshmem-pmix-layout-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let src = dir.join("l.c");
        std::fs::write(
            &src,
            "#include <stdio.h>\n#include <stddef.h>\n#include <pmix_common.h>\nint main(void){printf(\"%zu %zu %zu %zu %zu %zu %zu %u %d %d %d %d %d\",\
             sizeof(pmix_proc_t),offsetof(pmix_proc_t,rank),sizeof(pmix_value_t),offsetof(pmix_value_t,data),\
             sizeof(pmix_info_t),offsetof(pmix_info_t,flags),offsetof(pmix_info_t,value),(unsigned)PMIX_RANK_WILDCARD,\
             PMIX_BOOL,PMIX_STRING,PMIX_INT,PMIX_UINT32,PMIX_GLOBAL);return 0;}\n",
        )
        .unwrap();
        let exe = dir.join("l");
        let built = std::process::Command::new("cc").arg(&src).arg(format!("-I{inc}")).arg("-o").arg(&exe).status();
        if !built.map(|s| s.success()).unwrap_or(false) {
            eprintln!("no C compiler for the PMIx header; skipped");
            return;
        }
        let out = std::process::Command::new(&exe).output().unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        let want = format!(
            "{} {} {} {} {} {} {} {} {} {} {} {} {}",
            size_of::<Proc>(),
            offset_of!(Proc, rank),
            size_of::<Value>(),
            offset_of!(Value, data),
            size_of::<Info>(),
            offset_of!(Info, flags),
            offset_of!(Info, value),
            RANK_WILDCARD,
            BOOL,
            STRING,
            INT,
            UINT32,
            GLOBAL
        );
        assert_eq!(String::from_utf8_lossy(&out.stdout), want);
    }

    #[test]
    fn info_and_values_are_built_as_pmix_expects() {
        let i = Info::new(KEY_COLLECT_DATA, Value::boolean(true));
        // SAFETY: reading back what we wrote.
        assert!(unsafe { i.value.data.flag });
        assert_eq!(i.value.ty, BOOL);
        let key: Vec<u8> = i.key.iter().take_while(|c| **c != 0).map(|c| *c as u8).collect();
        assert_eq!(key, b"pmix.collect");
        let long = "k".repeat(600);
        assert_eq!(Info::new(&long, Value::int(1)).key[MAX_KEYLEN], 0);
    }

    #[test]
    fn a_missing_library_is_reported_by_name() {
        let e = Api::load("librshmem-no-such-pmix.so.9").err().unwrap();
        assert!(e.contains("librshmem-no-such-pmix.so.9"), "{e}");
    }

    #[test]
    fn the_installed_library_has_every_entry_point() {
        match Api::load("libpmix.so.2") {
            Ok(_) => {}
            Err(e) if e.contains("cannot open") || e.contains("No such file") => eprintln!("libpmix not installed; skipped"),
            Err(e) => panic!("{e}"),
        }
    }
}
