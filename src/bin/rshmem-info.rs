//! rshmem-info: what this build is and how it would run here (options like nvshmem-info's).

use std::fmt::Write as _;
use std::io::Write as _;

use rshmem::env::{self, Setting, SETTINGS};

const USAGE: &str = "usage: rshmem-info [option]
With no option: the build, the transports and GPUs of this host, and every setting.
  -a, --all        every setting: current value, where it came from, default, description
  -e, --env        only the settings given in the environment
  -r, --rest       every setting as reStructuredText (as nvshmem-info -r): a definition list,
                   each with its variables, default, other names and meaning
  -m, --markdown   every setting as a Markdown table (README.md's environment table)
  --routes         inside a job (rshmemrun -n 4 --hosts a:2,b:2 rshmem-info --routes): each PE
                   prints how it reaches every PE: PE 0 -> PE 2: fabric(tcp;ofi_rxm) or shm
  -V, --version    version, commit and build date
  -h, --help       this text
Values are checked as shown: an invalid one is marked and the exit status is 1; so is a
RSHMEM_/SHMEM_/NVSHMEM_ variable that is no setting (a misspelling: the closest name is given).";

/// Commit and date of the build (build.rs).
const COMMIT: &str = env!("RSHMEM_BUILD_COMMIT");
const BUILD_DATE: &str = env!("RSHMEM_BUILD_DATE");

fn main() {
    let arg = std::env::args().nth(1);
    let mut out = String::new();
    let mut ok = true;
    match arg.as_deref() {
        None => ok = report(&mut out),
        Some("-a" | "--all") => ok = settings(&mut out, |_| true),
        Some("-e" | "--env") => ok = settings(&mut out, |s| env::lookup(*s).is_some()),
        Some("-r" | "--rest") => out = rest(),
        Some("-m" | "--markdown") => out = env::markdown_table(),
        Some("--routes") => ok = routes(&mut out),
        Some("-V" | "--version") => out = version() + "\n",
        Some("-h" | "--help") => out = format!("{USAGE}\n"),
        Some(other) => {
            eprintln!("rshmem-info: unknown option {other}\n{USAGE}");
            std::process::exit(2);
        }
    }
    emit(&out);
    std::process::exit(if ok { 0 } else { 1 });
}

/// Writes the output; a reader that went away (`rshmem-info | head`) ends the program quietly.
fn emit(text: &str) {
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout.write_all(text.as_bytes()).and_then(|_| stdout.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("rshmem-info: cannot write the output: {e}");
        std::process::exit(1);
    }
}

fn version() -> String {
    format!(
        "rshmem {} (commit {COMMIT}, built {BUILD_DATE}); OpenSHMEM 1.5 (Open MPI OSHMEM ABI), NVSHMEM 3.4.5 API",
        env!("CARGO_PKG_VERSION")
    )
}

/// One setting's lines; false when its value is not valid.
fn setting(out: &mut String, s: &Setting) -> bool {
    let (source, value) = env::current(*s);
    let verdict = env::check(*s, &value);
    let _ = writeln!(out, "  {:<28} = {:<12} [{}; default {}]", s.name, value, source, shown(s.default));
    let _ = writeln!(out, "  {:<28}   {}", "", s.help);
    if let Err(why) = &verdict {
        let _ = writeln!(out, "  {:<28}   INVALID: {why}", "");
    }
    verdict.is_ok()
}

/// Every setting in reStructuredText (plain docutils, no Sphinx directives): a title, then a
/// definition list with one item per setting: a field list (its variables, default, other names)
/// and its meaning.
fn rest() -> String {
    let mut out = String::from("Environment variables\n=====================\n\n");
    out += "Every setting NAME is read as ``RSHMEM_NAME``, then ``SHMEM_NAME``, then ``NVSHMEM_NAME``.\n\n";
    for s in SETTINGS {
        let _ = writeln!(out, "``{}``", s.name);
        let _ = writeln!(out, "   :Variables: ``RSHMEM_{0}``, ``SHMEM_{0}``, ``NVSHMEM_{0}``", s.name);
        let default = if s.default.is_empty() { "(empty)".to_string() } else { format!("``{}``", s.default) };
        let _ = writeln!(out, "   :Default: {default}");
        if !s.aliases.is_empty() {
            let aliases: Vec<String> = s.aliases.iter().map(|a| format!("``{a}``")).collect();
            let _ = writeln!(out, "   :Also read as: {}", aliases.join(", "));
        }
        let _ = writeln!(out, "\n   {}\n", rest_text(s.help));
    }
    out
}

/// Plain text as ReST: the characters that would start markup (emphasis, literals, substitutions,
/// a reference's trailing underscore as in "RSHMEM_/SHMEM_") escaped.
fn rest_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let ends_word = c == '_' && !chars.peek().is_some_and(|n| n.is_alphanumeric() || *n == '_');
        if matches!(c, '\\' | '`' | '*' | '|') || ends_word {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

fn shown(default: &str) -> &str {
    if default.is_empty() {
        "(empty)"
    } else {
        default
    }
}

fn settings(out: &mut String, wanted: impl Fn(&Setting) -> bool) -> bool {
    let _ = writeln!(out, "Settings (RSHMEM_<NAME> overrides SHMEM_<NAME>, which overrides NVSHMEM_<NAME>):");
    let mut ok = true;
    for s in SETTINGS.iter().filter(|s| wanted(s)) {
        ok &= setting(out, s);
    }
    let all_known = unknown_variables(out);
    ok && all_known
}

/// The environment's RSHMEM_/SHMEM_/NVSHMEM_ variables that no setting reads (a misspelt name
/// silently does nothing; the library warns at init, this says it before the job); false if any.
fn unknown_variables(out: &mut String) -> bool {
    let names = std::env::vars_os().filter_map(|(k, _)| k.into_string().ok());
    let unknown = env::unknown_variables(names);
    for line in &unknown {
        let _ = writeln!(out, "  UNKNOWN: {line}");
    }
    unknown.is_empty()
}

fn report(out: &mut String) -> bool {
    let _ = writeln!(out, "{}", version());
    let _ = writeln!(out, "build: {} profile, target {}", if cfg!(debug_assertions) { "debug" } else { "release" }, std::env::consts::ARCH);
    let _ = writeln!(out);
    let _ = writeln!(out, "Transports (which one each PE pair takes: rshmem-info --routes):");
    let _ = writeln!(out, "  shm     CPU PEs on one host: loads/stores into mapped peer heaps (always available)");
    let _ = writeln!(out, "  fabric  CPU PEs on other hosts: libfabric RMA and atomics");
    let _ = writeln!(out, "  p2p     GPU PEs on one host: loads/stores/atomics into mapped peer GPU heaps (needs peer access)");
    let _ = writeln!(out, "  ibgda   GPU PEs across the network: GPU threads post to the NIC (which NIC: the IBGDA section below)");
    let _ = writeln!(out, "  proxy   GPU PEs across the network without IBGDA: a host thread carries device operations");
    for line in rshmem::ibgda::hw::info_lines() {
        let _ = writeln!(out, "  {line}");
    }
    let _ = writeln!(out);
    for line in rshmem::cuda::info::report() {
        let _ = writeln!(out, "{line}");
    }
    let (_, size) = env::current(env::SYMMETRIC_SIZE);
    let (_, gran) = env::current(env::CUMEM_GRANULARITY);
    let _ = writeln!(out, "Library kernels: {}", rshmem::cuda::image::describe());
    let _ = writeln!(out, "GPU heap: NVSHMEM_SYMMETRIC_SIZE={size} reserved per PE (virtual; backed as allocations need it), grown in chunks of NVSHMEM_CUMEM_GRANULARITY={gran}");
    let _ = writeln!(out);
    for line in rshmem::ibgda::info::lines() {
        let _ = writeln!(out, "{line}");
    }
    let _ = writeln!(out);
    settings(out, |_| true)
}

/// Joins the job it runs in (shmem_init), writes this PE's row of the route table, leaves it.
fn routes(out: &mut String) -> bool {
    let st = match rshmem::runtime::init(0) {
        Ok(st) => st,
        Err(e) => {
            eprintln!("rshmem-info: --routes needs a job to join (rshmemrun -n N rshmem-info --routes): {e}");
            return false;
        }
    };
    let network = st.net.as_ref().map(|n| n.describe()).unwrap_or_default();
    for line in st.routes.pair_lines(&network) {
        let _ = writeln!(out, "{line}");
    }
    rshmem::runtime::finalize().is_ok()
}
