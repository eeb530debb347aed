//! The one place that reads environment variables.
//!
//! Every setting has a short name (`SYMMETRIC_SIZE`). It is looked up as `RSHMEM_<name>` first
//! (our override), then as `SHMEM_<name>` (OpenSHMEM), then `NVSHMEM_<name>` (NVSHMEM), then
//! any extra alias in the table, then the default. `rshmem-info` prints this table.

use crate::error::{Error, Result};

/// One configurable setting. Each is a constant of this module (`env::QP_DEPTH`), so code
/// looks a setting up by an item, and a misspelt key does not compile:
/// ```
/// let (_variable, depth) = rshmem::env::current(rshmem::env::QP_DEPTH);
/// assert!(!depth.is_empty());
/// ```
/// ```compile_fail
/// let (_variable, depth) = rshmem::env::current(rshmem::env::QP_DEPHT);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Setting {
    pub name: &'static str,
    pub default: &'static str,
    /// Extra accepted names (other implementations' spellings).
    pub aliases: &'static [&'static str],
    pub help: &'static str,
}

/// Declares each setting as a constant named as its short name, and SETTINGS, the list of
/// them all in this order (rshmem-info, README.md and rshmem(3) show it;
/// scripts/gen_env_table.py reads it from this file).
macro_rules! settings {
    ($($name:ident { default: $default:literal, aliases: [$($alias:literal),* $(,)?], help: $help:literal $(,)? })*) => {
        $(
            #[doc = $help]
            pub const $name: Setting = Setting { name: stringify!($name), default: $default, aliases: &[$($alias),*], help: $help };
        )*
        /// Every setting, in the order rshmem-info and the README list them.
        pub const SETTINGS: &[Setting] = &[$($name),*];
    };
}

settings! {
    SYMMETRIC_SIZE {
        default: "1G",
        aliases: ["SHMEM_SYMMETRIC_HEAP_SIZE", "SMA_SYMMETRIC_SIZE"],
        help: "bytes per PE the program may allocate on the symmetric heap (suffix K, M, G, T; rounded up to 2 MiB; the runtime's own area comes on top; reserved, backed on first touch); GPU mode: the heap grows past it up to MAX_MEMORY_PER_GPU",
    }
    DEBUG {
        default: "WARN",
        aliases: [],
        help: "log level: NONE, WARN, INFO, TRACE (every collective, barrier and allocation with its PEs and size, and the start-up steps); SHMEM_DEBUG set to anything else means INFO",
    }
    VERSION {
        default: "",
        aliases: [],
        help: "set (to anything but 0/no/false/off): PE 0 prints the library version at start-up",
    }
    INFO {
        default: "",
        aliases: [],
        help: "set (to anything but 0/no/false/off): PE 0 prints every setting with its value, default and meaning at start-up",
    }
    ABORT_ON_OOM {
        default: "0",
        aliases: [],
        help: "1: running out of symmetric heap ends the job (as before); 0: shmem_malloc and friends return NULL with a warning",
    }
    SYMMETRIC_STATICS {
        default: "1",
        aliases: [],
        help: "make the program's global and static variables remotely accessible (0 to disable)",
    }
    BOOTSTRAP {
        default: "auto",
        aliases: [],
        help: "how PEs find each other: auto, rshmemrun, PMI, PMI2, PMIX, MPI, UID, single (any case)",
    }
    BOOTSTRAP_TIMEOUT {
        default: "60",
        aliases: [],
        help: "seconds to wait for all PEs at start-up before giving up and naming the missing ones",
    }
    BOOTSTRAP_IFNAME {
        default: "",
        aliases: [],
        help: "network interface(s) of the cross-host rendezvous, like NCCL_SOCKET_IFNAME: a name prefix (eth), =exact name, ^ to exclude, comma-separated; empty: the first non-loopback interface that is up (IPv4 before IPv6)",
    }
    LAUNCH_AGENT {
        default: "ssh",
        aliases: [],
        help: "rshmemrun --hosts: the command that starts rshmemrun on another host, called as AGENT host command... (like hydra's -bootstrap-exec)",
    }
    // ---- IBGDA (GPU-initiated InfiniBand; src/ibgda, src/ib) ----
    IBGDA_NIC {
        default: "auto",
        aliases: [],
        help: "who plays the NIC for IBGDA: auto (a ConnectX if its init self-test passes, else the proxy transport), hw (a ConnectX, or an error) or model (the software HCA model)",
    }
    IBGDA_NUM_RC_PER_PE {
        default: "2",
        aliases: [],
        help: "IBGDA RC queue pairs per remote PE (0: use DC only)",
    }
    IBGDA_NUM_DCI {
        default: "1",
        aliases: [],
        help: "IBGDA DC initiators per PE (<= 0: one per SM)",
    }
    IBGDA_NUM_DCT {
        default: "2",
        aliases: [],
        help: "IBGDA DC targets per PE",
    }
    IBGDA_DCI_MAP_BY {
        default: "cta",
        aliases: [],
        help: "which DCI a GPU thread uses: cta, sm, warp or dct (by target PE)",
    }
    IBGDA_RC_MAP_BY {
        default: "cta",
        aliases: [],
        help: "which of a PE's RC QPs a GPU thread uses: cta, sm or warp",
    }
    DISABLE_P2P {
        default: "0",
        aliases: [],
        help: "GPU mode: reach other PEs' GPUs through the network path (IBGDA) even where P2P works (1 to enable; tests the network path on one host)",
    }
    QP_DEPTH {
        default: "1024",
        aliases: [],
        help: "IBGDA send queue depth in 64-byte blocks (a power of two, 16 to 32768)",
    }
    IBGDA_NUM_REQUESTS_IN_BATCH {
        default: "32",
        aliases: [],
        help: "IBGDA: while other threads keep posting on a QP, ring its doorbell at least every this many blocks (rounded up to a power of two)",
    }
    IBGDA_MODEL_THREADS {
        default: "1",
        aliases: [],
        help: "IBGDA software HCA model: host threads playing the NIC of each PE (QPs are spread over them)",
    }
    IBGDA_MODEL_SINK {
        default: "0",
        aliases: [],
        help: "IBGDA software HCA model: 1 to move no data (consume doorbells, complete signaled WQEs): measures the GPU post rate",
    }
    IBGDA_MODEL_SQ {
        default: "gpu",
        aliases: [],
        help: "IBGDA software HCA model: where send queues live: gpu (as with a NIC; the model copies WQEs out) or host (pinned, mapped into the GPU)",
    }
    HCA_LIST {
        default: "",
        aliases: [],
        help: "IBGDA on a NIC: RDMA devices to use, first that exists wins (e.g. mlx5_0,mlx5_1; a :port suffix is ignored); empty: the NIC closest to the GPU",
    }
    IB_GID_INDEX {
        default: "0",
        aliases: [],
        help: "IBGDA on a NIC: GID index of the port (RoCE v2 usually needs 3)",
    }
    IB_TRAFFIC_CLASS {
        default: "0",
        aliases: [],
        help: "IBGDA on a NIC: traffic class of the queue pairs' address vectors",
    }
    IB_SL {
        default: "0",
        aliases: [],
        help: "IBGDA on a NIC: service level of the queue pairs' address vectors",
    }
    PMIX_LIBRARY {
        default: "libpmix.so.2",
        aliases: [],
        help: "the PMIx client library loaded under Open MPI's mpirun/oshrun (name or path)",
    }
    // ---- multi-host: libfabric (src/fabric) and node identity (src/transport/node.rs) ----
    FABRIC_LIBRARY {
        default: "libfabric.so.1",
        aliases: [],
        help: "the libfabric library loaded for PEs on other hosts (name or path)",
    }
    FABRIC_PROVIDER {
        default: "auto",
        aliases: [],
        help: "libfabric provider for PEs on other hosts (e.g. verbs;ofi_rxm, efa, cxi, tcp;ofi_rxm); auto: hardware first, else tcp;ofi_rxm (FI_PROVIDER also limits the choice)",
    }
    FABRIC_DOMAIN {
        default: "auto",
        aliases: [],
        help: "libfabric domain (interface or NIC, e.g. eth0, mlx5_0) to use; auto: the first one that is not loopback",
    }
    FABRIC_TIMEOUT {
        default: "60",
        aliases: [],
        help: "seconds a fabric operation may wait for its completion before it is reported as stuck",
    }
    FABRIC_TRUSTED_NETWORK {
        default: "0",
        aliases: [],
        help: "1: only the job's hosts can reach the network, so a provider that makes its own guessable memory keys (FI_MR_PROV_KEY) may be used; 0: only providers that take rshmem's random 64-bit keys",
    }
    HOSTNAME {
        default: "",
        aliases: [],
        help: "tests: the host name this PE reports (PEs share memory only when host name, boot id and network namespace all match)",
    }
    WAIT_SPIN_US {
        default: "auto",
        aliases: [],
        help: "microseconds a waiting PE polls before it starts yielding its core; auto: up to 1000 when this host's PEs fit its CPUs (less once a yield shows the core is contended), else 0",
    }
    HANG_TIMEOUT {
        default: "10",
        aliases: [],
        help: "seconds a wait, barrier, collective or allocation may wait before it says which PE it waits for (then again at 2x, 4x ...); 0 never",
    }
    HANG_ACTION {
        default: "warn",
        aliases: [],
        help: "what a wait past HANG_TIMEOUT does: warn (say so and keep waiting) or abort (say so and end the job)",
    }
    REGISTER_SYMMETRIC_SPACE {
        default: "4G",
        aliases: [],
        help: "GPU mode: address space per PE, beside the heap, for the user allocations nvshmemx_buffer_register_symmetric maps (reserved, not allocated)",
    }
    MAX_MEMORY_PER_GPU {
        default: "256G",
        aliases: [],
        help: "GPU mode: as in NVSHMEM, the GPU symmetric heap grows on demand past SYMMETRIC_SIZE up to this many bytes per PE (address space reserved at init, GPU memory taken as allocations need it; large jobs get less, never below SYMMETRIC_SIZE)",
    }
    CUMEM_GRANULARITY {
        default: "512M",
        aliases: [],
        help: "GPU mode: the GPU symmetric heap grows (collectively) in chunks of at least this size",
    }
    HEAP_MAP_AHEAD {
        default: "1",
        aliases: [],
        help: "GPU mode: 1 prepares the GPU symmetric heap's growth ahead of need: init maps one CUMEM_GRANULARITY chunk past the runtime area, and a background thread keeps one more chunk created and exported (not mapped), which the next growth exchanges and maps ahead of need in the background, so growths within the chunk mapped ahead wait for neither; 0 maps only what allocations need (smallest footprint, slower growth)",
    }
    DEVICE_CHECKS {
        default: "0",
        aliases: [],
        help: "GPU mode: device-side checks of PE numbers and heap addresses (1 to enable)",
    }
    KERNEL_PTX {
        default: "0",
        aliases: [],
        help: "GPU mode: 1 loads the library's own kernels from PTX (driver-compiled) even where its machine code fits the GPU",
    }
    COLL_WARM {
        default: "1",
        aliases: [],
        help: "GPU mode: 1 loads the on-stream collective kernels and the 32-bit integer reduction module at init and launches each once, empty, where they load as machine code, so that the first collective finds them ready; 0 leaves them to the first collective",
    }
}

/// Variables rshmem's own launcher and bootstrap set for the PEs (not settings a user sets).
pub const LAUNCHER_VARS: &[&str] =
    &["RSHMEM_RANK", "RSHMEM_NPES", "RSHMEM_STAR_ADDR", "RSHMEM_CONTROL_FD", "RSHMEM_JOB_SECRET", "RSHMEM_LAUNCH_CPUS"];

/// Variables of other OpenSHMEM/NVSHMEM implementations (NVSHMEM, Open MPI's OSHMEM, Sandia
/// OpenSHMEM, Cray SHMEM) that rshmem does not implement: real job scripts set them, so they
/// get no misspelling warning. A trailing or inner `*` matches any text; a name under a
/// pattern that is within 2 edits of one of ours is still reported.
pub const FOREIGN_VARS: &[&str] = &[
    "NVSHMEM_REMOTE_TRANSPORT",
    "NVSHMEM_BOOTSTRAP_*",
    "NVSHMEM_IB_*",
    "NVSHMEM_IBGDA_*",
    "NVSHMEM_ENABLE_*",
    "NVSHMEM_DISABLE_*",
    "NVSHMEM_DEBUG_*",
    "NVSHMEM_CUDA_*",
    "NVSHMEM_CUMEM_HANDLE_TYPE",
    "NVSHMEM_HCA_PE_MAPPING",
    "NVSHMEM_HCA_PREFIX",
    "NVSHMEM_LIBFABRIC_*",
    "NVSHMEM_UCX_*",
    "NVSHMEM_NVTX",
    "NVSHMEM_MAX_TEAMS",
    "NVSHMEM_MAX_P2P_GPUS",
    "NVSHMEM_ASSERT_ATOMICS_SYNC",
    "NVSHMEM_BYPASS_ACCESSIBILITY_CHECK",
    "NVSHMEM_TEAM_*",
    "NVSHMEM_REDUCE_*",
    "NVSHMEM_FCOLLECT_*",
    "NVSHMEM_BCAST_*",
    "NVSHMEM_REDUCESCATTER_*",
    "NVSHMEM_ALLTOALL_*",
    "NVSHMEM_BARRIER_*",
    "NVSHMEM_HOME",
    "NVSHMEM_PREFIX",
    "NVSHMEM_DIR",
    "SHMEM_OFI_*",
    "SHMEM_XPMEM_*",
    "SHMEM_CMA_*",
    "SHMEM_BOUNCE_*",
    "SHMEM_MAX_BOUNCE_BUFFERS",
    "SHMEM_*_ALGORITHM",
    "SHMEM_*_RADIX",
    "SHMEM_COLL_*",
    "SHMEM_SYMMETRIC_HEAP_*",
    "SHMEM_TRAP_ON_ABORT",
    "SHMEM_BACKTRACE",
    "SHMEM_TEAMS_MAX",
    "SHMEM_TEAM_SHARED_ONLY_SELF",
    "SHMEM_PROGRESS_INTERVAL",
    "SHMEM_ENV_DISPLAY",
    "SHMEM_VERSION_DISPLAY",
    "SHMEM_DEBUG_FILE",
    "SHMEM_HOME",
];

/// Variables rshmem's own tools read, not the library: the compiler wrappers (scripts/oshcc.in:
/// the C and C++ compilers), the build (build.rs: which ptxas), the scripts (an install's
/// prefix; the throw-away Slurm cluster) and the CUDA tests (nvrtc.cu). Users export them in the
/// shells their jobs start from, so they get no misspelling warning. build.rs's two stamps are
/// here because cargo also sets them for the programs `cargo test` and `cargo run` start.
pub const TOOL_VARS: &[&str] = &[
    "RSHMEM_CC",
    "RSHMEM_CXX",
    "RSHMEM_PTXAS",
    "RSHMEM_PREFIX",
    "RSHMEM_NETNS_PREFIX",
    "RSHMEM_SLURM_CPUS",
    "RSHMEM_NVRTC",
    "RSHMEM_INCLUDE",
    "RSHMEM_BUILD_COMMIT",
    "RSHMEM_BUILD_DATE",
];

/// Every variable name rshmem reads: each setting under its three prefixes and its aliases.
fn known_names() -> Vec<String> {
    let mut names: Vec<String> = LAUNCHER_VARS.iter().chain(TOOL_VARS).map(|v| v.to_string()).collect();
    for s in SETTINGS {
        names.extend(["RSHMEM_", "SHMEM_", "NVSHMEM_"].iter().map(|p| format!("{p}{}", s.name)));
        names.extend(s.aliases.iter().map(|a| a.to_string()));
    }
    names
}

/// Levenshtein distance (names are short ASCII).
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, &ca) in a.iter().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let next = (diag + usize::from(ca != cb)).min(row[j] + 1).min(row[j + 1] + 1);
            diag = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

/// `name` matches a FOREIGN_VARS pattern (`*` matches any text, at most one per pattern).
fn matches_pattern(name: &str, pattern: &str) -> bool {
    match pattern.split_once('*') {
        None => name == pattern,
        Some((head, tail)) => name.len() >= head.len() + tail.len() && name.starts_with(head) && name.ends_with(tail),
    }
}

/// One warning for each RSHMEM_/SHMEM_/NVSHMEM_ variable in `vars` that rshmem does not know,
/// naming the closest known name; variables of other implementations (FOREIGN_VARS) pass.
pub fn unknown_variables<I: IntoIterator<Item = String>>(vars: I) -> Vec<String> {
    let known = known_names();
    let mut warnings = Vec::new();
    for var in vars {
        if !["RSHMEM_", "SHMEM_", "NVSHMEM_"].iter().any(|p| var.starts_with(p)) || known.contains(&var) {
            continue;
        }
        let Some((dist, closest)) = known.iter().map(|k| (edit_distance(&var, k), k)).min() else { continue };
        let foreign_exact = FOREIGN_VARS.iter().any(|p| !p.contains('*') && *p == var);
        let foreign_family = FOREIGN_VARS.iter().any(|p| p.contains('*') && matches_pattern(&var, p));
        if foreign_exact || (foreign_family && dist > 2) {
            continue;
        }
        warnings.push(format!(
            "environment variable {var} is not a setting rshmem knows (ignored); did you mean {closest}? (rshmem-info lists them all)"
        ));
    }
    warnings
}

/// Whether a flag setting (VERSION, INFO) is on: set to anything but a false boolean.
pub fn flag_on(setting: Setting) -> bool {
    lookup(setting).is_some_and(|(_, v)| parse_bool(&v) != Some(false))
}

/// Whether a 0/1 setting (its default, when unset) is a true boolean (1, y, yes, true, on).
pub fn enabled(setting: Setting) -> bool {
    parse_bool(&current(setting).1) == Some(true)
}

/// The settings with their values, defaults and meanings (SHMEM_INFO / NVSHMEM_INFO, rshmem-info).
pub fn settings_report() -> Vec<String> {
    let mut lines = Vec::new();
    for s in SETTINGS {
        let (source, value) = current(*s);
        lines.push(format!(
            "  {:<22} = {:<10} [{}; default {}]",
            s.name,
            value,
            source,
            if s.default.is_empty() { "unset" } else { s.default }
        ));
        lines.push(format!("  {:<22}   {}", "", s.help));
    }
    lines
}

/// The variable that sets `setting` and its value, in precedence order; None when unset.
pub fn lookup(setting: Setting) -> Option<(String, String)> {
    let mut candidates: Vec<String> = ["RSHMEM_", "SHMEM_", "NVSHMEM_"].iter().map(|p| format!("{p}{}", setting.name)).collect();
    candidates.extend(setting.aliases.iter().map(|a| a.to_string()));
    candidates.into_iter().find_map(|var| std::env::var(&var).ok().filter(|v| !v.is_empty()).map(|v| (var, v)))
}

/// The value in force for a setting and where it came from ("default" when unset).
pub fn current(setting: Setting) -> (String, String) {
    lookup(setting).unwrap_or_else(|| ("default".into(), setting.default.into()))
}

/// Parses a byte size such as `1G`, `512M`, `64KiB`, `1.5g` or `4096`.
pub fn parse_size(text: &str) -> Option<usize> {
    let t = text.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let value: f64 = num.parse().ok()?;
    let mult: f64 = match unit.trim().to_ascii_uppercase().trim_end_matches("IB").trim_end_matches('B') {
        "" => 1.0,
        "K" => 1024.0,
        "M" => 1024.0 * 1024.0,
        "G" => 1024.0 * 1024.0 * 1024.0,
        "T" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    };
    let bytes = value * mult;
    (bytes.is_finite() && bytes >= 0.0 && bytes < usize::MAX as f64).then_some(bytes as usize)
}

pub fn parse_bool(text: &str) -> Option<bool> {
    match text.trim().to_ascii_lowercase().as_str() {
        "1" | "y" | "yes" | "true" | "on" => Some(true),
        "0" | "n" | "no" | "false" | "off" => Some(false),
        _ => None,
    }
}

/// The bootstrap names the BOOTSTRAP setting accepts, in any case (NVSHMEM's spellings
/// included), and the one each means here. PMI2 is served by the PMI-1 client: MPICH's hydra
/// answers both on the same descriptor.
const CHOICES: [(&str, &str); 9] = [
    ("auto", "auto"),
    ("rshmemrun", "rshmemrun"),
    ("pmi", "pmi"),
    ("pmi1", "pmi"),
    ("pmi2", "pmi"),
    ("pmix", "pmix"),
    ("mpi", "mpi"),
    ("uid", "uid"),
    ("single", "single"),
];
/// The valid values, for the error that names them.
pub const CHOICES_TEXT: &str = "one of auto, rshmemrun, PMI, PMI2, PMIX, MPI, UID or single (any case)";

/// The bootstrap a BOOTSTRAP value means, if it is valid.
pub fn parse_choice(text: &str) -> Option<&'static str> {
    let t = text.trim().to_ascii_lowercase();
    CHOICES.iter().find(|(name, _)| *name == t).map(|(_, means)| *means)
}

/// Log verbosity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogLevel {
    None,
    Warn,
    Info,
    Trace,
}

/// Every setting, parsed and checked once at init.
#[derive(Clone, Debug)]
pub struct Config {
    pub symmetric_size: usize,
    pub log_level: LogLevel,
    pub symmetric_statics: bool,
    pub bootstrap: String,
    pub bootstrap_timeout_s: f64,
    /// None: decide from the PE and CPU counts at init (see runtime::wait).
    pub wait_spin_us: Option<u32>,
    /// Seconds before a wait reports itself; 0: never.
    pub hang_timeout_s: f64,
    /// HANG_ACTION=abort.
    pub hang_abort: bool,
}

fn bad(var: &str, value: &str, expected: &str) -> Error {
    Error::invalid("shmem_init", format!("environment variable {var}={value:?} is not valid: expected {expected}"))
}

impl Config {
    pub fn from_env() -> Result<Config> {
        Config::from_lookup(current)
    }

    /// Parses the settings as `get(setting)` gives them: (variable, value). check() uses it to
    /// judge one value with every other setting at its default.
    pub fn from_lookup(get: impl Fn(Setting) -> (String, String)) -> Result<Config> {
        let (var, v) = get(SYMMETRIC_SIZE);
        let symmetric_size = parse_size(&v).filter(|s| *s > 0).ok_or_else(|| bad(&var, &v, "a positive size such as 512M or 2G"))?;
        let (var, v) = get(DEBUG);
        let log_level = match v.trim().to_ascii_uppercase().as_str() {
            "NONE" => LogLevel::None,
            "WARN" => LogLevel::Warn,
            "INFO" | "VERSION" => LogLevel::Info,
            "TRACE" | "ABORT" => LogLevel::Trace,
            // OpenSHMEM: SHMEM_DEBUG set to any value enables debugging output.
            _ if var == "SHMEM_DEBUG" => LogLevel::Info,
            "0" => LogLevel::None,
            "1" => LogLevel::Warn,
            "2" => LogLevel::Info,
            "3" => LogLevel::Trace,
            _ => return Err(bad(&var, &v, "NONE, WARN, INFO or TRACE")),
        };
        let (var, v) = get(SYMMETRIC_STATICS);
        let symmetric_statics = parse_bool(&v).ok_or_else(|| bad(&var, &v, "0 or 1"))?;
        let (var, v) = get(BOOTSTRAP);
        let bootstrap = parse_choice(&v).ok_or_else(|| bad(&var, &v, CHOICES_TEXT))?.to_string();
        let (var, v) = get(BOOTSTRAP_TIMEOUT);
        let bootstrap_timeout_s: f64 =
            v.trim().parse().ok().filter(|t: &f64| *t > 0.0).ok_or_else(|| bad(&var, &v, "a positive number of seconds"))?;
        let (var, v) = get(WAIT_SPIN_US);
        let wait_spin_us = match v.trim() {
            "auto" => None,
            t => Some(t.parse().map_err(|_| bad(&var, &v, "auto or a whole number of microseconds"))?),
        };
        let (var, v) = get(HANG_TIMEOUT);
        let hang_timeout_s: f64 = v
            .trim()
            .parse()
            .ok()
            .filter(|t: &f64| t.is_finite() && *t >= 0.0)
            .ok_or_else(|| bad(&var, &v, "a number of seconds (0: never)"))?;
        let (var, v) = get(HANG_ACTION);
        let hang_abort = match v.trim().to_ascii_lowercase().as_str() {
            "warn" => false,
            "abort" => true,
            _ => return Err(bad(&var, &v, "warn or abort")),
        };
        Ok(Config {
            symmetric_size,
            log_level,
            symmetric_statics,
            bootstrap,
            bootstrap_timeout_s,
            wait_spin_us,
            hang_timeout_s,
            hang_abort,
        })
    }
}

/// Whether `value` is acceptable for `setting` (rshmem-info shows the verdict): the
/// runtime's own parse for the settings `Config` reads, else the shape of the default (a whole
/// number, a size, 0/1); free-form settings pass.
pub fn check(setting: Setting, value: &str) -> std::result::Result<(), String> {
    let var = lookup(setting).map(|(var, _)| var).unwrap_or_else(|| format!("RSHMEM_{}", setting.name));
    // A setting Config reads (it rejects a value no parser accepts) is judged by Config alone.
    if config_with(setting, &var, "\u{7f}?").is_err() {
        return config_with(setting, &var, value).map(|_| ()).map_err(|e| e.message);
    }
    let default = setting.default;
    let fits = if default == "0" || default == "1" {
        parse_bool(value).is_some()
    } else if default.parse::<i64>().is_ok() {
        value.trim().parse::<i64>().is_ok()
    } else if default.len() > 1 && default[..default.len() - 1].parse::<u64>().is_ok() && parse_size(default).is_some() {
        parse_size(value).is_some_and(|n| n > 0)
    } else {
        true
    };
    let expected = if default == "0" || default == "1" {
        "0 or 1"
    } else if default.parse::<i64>().is_ok() {
        "a whole number"
    } else {
        "a size such as 512M or 2G"
    };
    if fits {
        Ok(())
    } else {
        Err(format!("{var}={value:?}: expected {expected}"))
    }
}

/// Config with every setting at its default but `setting`, which is `value` (read from `var`).
fn config_with(setting: Setting, var: &str, value: &str) -> Result<Config> {
    Config::from_lookup(
        |s| {
            if s.name == setting.name {
                (var.to_string(), value.to_string())
            } else {
                ("default".into(), s.default.into())
            }
        },
    )
}

/// README.md's environment table (Markdown), one row per setting; scripts/gen_env_table.py
/// writes the same table from this file's source.
pub fn markdown_table() -> String {
    let mut out = String::from("| setting | default | meaning |\n| --- | --- | --- |\n");
    for s in SETTINGS {
        let default = if s.default.is_empty() { "(empty)".to_string() } else { format!("`{}`", s.default) };
        let mut meaning = s.help.replace('|', "\\|");
        if !s.aliases.is_empty() {
            let aliases: Vec<String> = s.aliases.iter().map(|a| format!("`{a}`")).collect();
            meaning += &format!(". Also read as {}", aliases.join(", "));
        }
        out += &format!("| `{}` | {} | {} |\n", s.name, default, meaning);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_units() {
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("64K"), Some(65536));
        assert_eq!(parse_size("64KiB"), Some(65536));
        assert_eq!(parse_size("512m"), Some(512 << 20));
        assert_eq!(parse_size("1.5G"), Some(3 << 29));
        assert_eq!(parse_size("2T"), Some(2 << 40));
        assert_eq!(parse_size("12X"), None);
        assert_eq!(parse_size("G"), None);
        assert_eq!(parse_size("-1"), None);
    }

    #[test]
    fn values_are_checked_one_by_one() {
        let msg = check(DEBUG, "LOUD").unwrap_err();
        assert!(msg.contains("DEBUG=\"LOUD\"") && msg.contains("NONE, WARN, INFO or TRACE"), "{msg}");
        assert!(check(DEBUG, "info").is_ok());
        assert!(check(SYMMETRIC_SIZE, "2G").is_ok());
        assert!(check(SYMMETRIC_SIZE, "lots").unwrap_err().contains("positive size"));
        assert!(check(CUMEM_GRANULARITY, "0").unwrap_err().contains("a size such as"));
        assert!(check(QP_DEPTH, "abc").unwrap_err().contains("a whole number"));
        assert!(check(DEVICE_CHECKS, "yes").is_ok());
        assert!(check(DEVICE_CHECKS, "maybe").unwrap_err().contains("0 or 1"));
        assert!(check(HCA_LIST, "mlx5_0").is_ok());
        assert!(check(BOOTSTRAP_TIMEOUT, "2.5").is_ok(), "Config's own parse decides, not the default's shape");
    }

    #[test]
    fn markdown_table_has_a_row_per_setting() {
        let table = markdown_table();
        assert_eq!(table.lines().count(), SETTINGS.len() + 2);
        assert!(table.contains("| `SYMMETRIC_SIZE` | `1G` |"), "{table}");
        assert!(table.contains("Also read as `SHMEM_SYMMETRIC_HEAP_SIZE`, `SMA_SYMMETRIC_SIZE`"), "{table}");
    }

    #[test]
    fn each_setting_is_named_once() {
        let mut names: Vec<&str> = SETTINGS.iter().map(|s| s.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), SETTINGS.len(), "two settings share a name");
        assert_eq!(QP_DEPTH.name, "QP_DEPTH");
        assert_eq!(SETTINGS.iter().find(|s| s.name == "IB_SL").map(|s| s.default), Some(IB_SL.default));
    }

    #[test]
    fn booleans_parse() {
        assert_eq!(parse_bool("YES"), Some(true));
        assert_eq!(parse_bool("off"), Some(false));
        assert_eq!(parse_bool("maybe"), None);
    }

    #[test]
    fn rshmem_overrides_shmem_overrides_nvshmem() {
        // A name no other test uses, so parallel tests do not race on it.
        let probe = Setting { name: "PRECEDENCE_PROBE", default: "", aliases: &[], help: "" };
        std::env::set_var("NVSHMEM_PRECEDENCE_PROBE", "nv");
        assert_eq!(lookup(probe).unwrap(), ("NVSHMEM_PRECEDENCE_PROBE".into(), "nv".into()));
        std::env::set_var("SHMEM_PRECEDENCE_PROBE", "sh");
        assert_eq!(lookup(probe).unwrap().1, "sh");
        std::env::set_var("RSHMEM_PRECEDENCE_PROBE", "rs");
        assert_eq!(lookup(probe).unwrap().1, "rs");
        std::env::set_var("RSHMEM_PRECEDENCE_PROBE", "");
        assert_eq!(lookup(probe).unwrap().1, "sh", "an empty value counts as unset");
        std::env::remove_var("RSHMEM_PRECEDENCE_PROBE");
        std::env::remove_var("SHMEM_PRECEDENCE_PROBE");
        std::env::remove_var("NVSHMEM_PRECEDENCE_PROBE");
        assert_eq!(current(probe), ("default".into(), "".into()));
    }

    #[test]
    fn misspelled_variables_name_the_closest_setting() {
        let w = unknown_variables(["RSHMEM_SYMMETRIC_SIZ".to_string()]);
        assert_eq!(w.len(), 1);
        assert!(
            w[0].contains("RSHMEM_SYMMETRIC_SIZ is not a setting rshmem knows (ignored); did you mean RSHMEM_SYMMETRIC_SIZE?"),
            "{}",
            w[0]
        );
        let w = unknown_variables(["SHMEM_HANG_TIMOUT".to_string(), "NVSHMEM_BOOTSTARP".to_string()]);
        assert!(w[0].contains("did you mean SHMEM_HANG_TIMEOUT?") && w[1].contains("did you mean NVSHMEM_BOOTSTRAP?"), "{w:?}");
        // Known names, launcher variables, other implementations' variables and other
        // prefixes stay quiet.
        let quiet = [
            "RSHMEM_DEBUG",
            "SHMEM_SYMMETRIC_HEAP_SIZE",
            "SMA_SYMMETRIC_SIZE",
            "RSHMEM_RANK",
            "NVSHMEM_REMOTE_TRANSPORT",
            "NVSHMEM_BOOTSTRAP_PMI",
            "SHMEM_OFI_PROVIDER",
            "SHMEM_BARRIER_ALGORITHM",
            "NVSHMEM_IB_ENABLE_IBGDA",
            "PATH",
            "OMPI_COMM_WORLD_RANK",
        ];
        assert_eq!(unknown_variables(quiet.iter().map(|s| s.to_string())), Vec::<String>::new());
        // A pattern does not hide a near miss of one of ours.
        let w = unknown_variables(["NVSHMEM_IBGDA_NUM_DCII".to_string()]);
        assert!(w.len() == 1 && w[0].contains("did you mean NVSHMEM_IBGDA_NUM_DCI?"), "{w:?}");
    }

    #[test]
    fn the_tools_variables_are_known() {
        // The README tells users to export RSHMEM_PREFIX (scripts) and RSHMEM_PTXAS (build).
        let tools = ["RSHMEM_CC", "RSHMEM_CXX", "RSHMEM_PTXAS", "RSHMEM_PREFIX"];
        assert_eq!(unknown_variables(tools.iter().map(|s| s.to_string())), Vec::<String>::new());
    }

    #[test]
    fn nvshmem_spellings_of_the_bootstrap_are_understood() {
        for (text, means) in [
            ("MPI", "mpi"),
            ("mpi", "mpi"),
            ("PMI", "pmi"),
            ("PMI2", "pmi"),
            ("PMIX", "pmix"),
            ("PMIx", "pmix"),
            ("UID", "uid"),
            (" auto ", "auto"),
        ] {
            assert_eq!(parse_choice(text), Some(means), "{text}");
        }
        assert_eq!(parse_choice("shmem"), None);
        assert_eq!(parse_choice("plugin"), None);
        for name in ["PMI", "PMI2", "PMIX", "MPI", "UID", "rshmemrun"] {
            assert!(CHOICES_TEXT.contains(name), "{name} missing from the list in the error");
        }
    }

    #[test]
    fn edit_distances() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("SAME", "SAME"), 0);
        assert!(matches_pattern("SHMEM_REDUCE_ALGORITHM", "SHMEM_*_ALGORITHM"));
        assert!(!matches_pattern("SHMEM_ALGORITHM", "SHMEM_*_ALGORITHM"));
    }

    proptest::proptest! {
        #[test]
        fn any_byte_count_round_trips(n in 0usize..(1usize << 50)) {
            proptest::prop_assert_eq!(parse_size(&n.to_string()), Some(n));
        }
        #[test]
        fn kilobytes_scale(n in 0usize..(1usize << 30)) {
            proptest::prop_assert_eq!(parse_size(&format!("{n}K")), Some(n * 1024));
        }
    }
}
