//! rshmemrun: starts N PEs of a program on this host, or on several (`--hosts`, see
//! [`remote`]).
//!
//! It runs the bootstrap rendezvous, forwards signals to the PEs, and watches them: when one
//! dies (crash, signal, non-zero exit, shmem_global_exit) it names that PE, stops the others
//! and returns that PE's status. Its children die with it (PR_SET_PDEATHSIG), so `kill -9` of
//! the launcher leaves nothing running and nothing on disk.

mod bind;
mod remote;

use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rshmem::bootstrap::{auth, new_job_secret, star::StarServer, ENV_CONTROL_FD, ENV_CPUS, ENV_RANK, ENV_SECRET, ENV_SIZE, ENV_STAR};
use rshmem::sys::process;

const USAGE: &str = "usage: rshmemrun -n N [--hosts H | --hostfile F] [--] program [args...]
Starts N processing elements (PEs) of program on this host, or on the hosts given.
  -n, -np N        number of PEs (default 1, or every slot of the hosts given; at most 4096 per
                   host, and fewer than RLIMIT_NPROC allows)
  --hosts H        hosts and their slots, e.g. a:4,b:4 (ranks fill each host's slots in order)
  --hostfile F     the same from a file: one host[:slots] per line, # comments
  --bind-to B      core (each PE its own share of the CPUs, near its GPU where there are
                   NVIDIA GPUs), numa (its GPU's NUMA node) or none; default core, or none
                   when PEs outnumber the CPUs this launcher may use
  --report-bindings  print each PE's CPUs on stderr
  -h, --help       this text
  -V, --version    print the version
Environment: RSHMEM_BOOTSTRAP_TIMEOUT (seconds, default 60), and every RSHMEM_/SHMEM_/NVSHMEM_
setting, which the PEs inherit (rshmem-info lists them). With --hosts: RSHMEM_LAUNCH_AGENT
(default ssh) starts rshmemrun on each host as `AGENT host command...`; RSHMEM_BOOTSTRAP_IFNAME
picks the interface the hosts reach this one on.
Signals INT, TERM, HUP, QUIT, USR1 and USR2 are forwarded to every PE; a second INT, TERM, HUP
or QUIT stops them all. When a PE fails, the others are stopped (TERM, then KILL after 2 s).
Exit status: 0 when every PE exits 0; else the status given to shmem_global_exit, or that of
the first PE to fail (128+N when it was killed by signal N).";

/// Signals received and not yet forwarded, one bit per signal number.
static PENDING_SIGNALS: AtomicU64 = AtomicU64::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    PENDING_SIGNALS.fetch_or(1u64 << (sig as u32 & 63), Ordering::SeqCst);
}

/// Signals forwarded to every PE.
const FORWARDED: [libc::c_int; 6] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT, libc::SIGUSR1, libc::SIGUSR2];
/// Of those, the ones that ask the job to end: a second one stops every PE at once.
const TERMINATING: [libc::c_int; 4] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT];

/// The most PEs rshmemrun starts: they all share one host, and every PE's heap header holds a
/// mailbox per PE, so far more PEs than cores only fills the machine.
const MAX_PES: usize = 4096;

struct Args {
    npes: Option<usize>,
    /// None: the default (core, or none when oversubscribed).
    bind: Option<bind::BindTo>,
    report_bindings: bool,
    hosts: Option<Vec<rshmem::bootstrap::hosts::Host>>,
    /// This process is the per-host launcher of a multi-host job (started by the head).
    per_host: bool,
    program: Vec<String>,
}

fn parse_args() -> Result<Args, String> {
    let mut it = std::env::args().skip(1).peekable();
    let (mut npes, mut hosts, mut per_host) = (None, None, false);
    let (mut bind, mut report_bindings) = (None, false);
    while let Some(a) = it.peek().cloned() {
        match a.as_str() {
            "-n" | "-np" | "--np" | "-N" => {
                it.next();
                let v = it.next().ok_or_else(|| format!("{a} needs a number"))?;
                npes = Some(v.parse().ok().filter(|n| *n > 0).ok_or_else(|| format!("{a} {v}: expected a positive number of PEs"))?);
            }
            "--hosts" | "-hosts" | "--host" | "-host" => {
                it.next();
                let v = it.next().ok_or_else(|| format!("{a} needs a list such as a:4,b:4"))?;
                hosts = Some(rshmem::bootstrap::hosts::parse_list(&v)?);
            }
            "--hostfile" | "-hostfile" | "-f" => {
                it.next();
                let path = it.next().ok_or_else(|| format!("{a} needs a file name"))?;
                let text = std::fs::read_to_string(&path).map_err(|e| format!("{a} {path}: {e}"))?;
                hosts = Some(rshmem::bootstrap::hosts::parse_file(&text, &path)?);
            }
            "--bind-to" | "-bind-to" => {
                it.next();
                let v = it.next().ok_or_else(|| format!("{a} needs core, numa or none"))?;
                bind = Some(bind::BindTo::parse(&v)?);
            }
            "--report-bindings" | "-report-bindings" => {
                it.next();
                report_bindings = true;
            }
            "--per-host" => {
                it.next();
                per_host = true;
            }
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            "-V" | "--version" => {
                println!("rshmemrun (rshmem) {}", env!("CARGO_PKG_VERSION"));
                std::process::exit(0);
            }
            "--" => {
                it.next();
                break;
            }
            s if s.starts_with('-') => return Err(format!("unknown option {s}")),
            _ => break,
        }
    }
    let program: Vec<String> = it.collect();
    if program.is_empty() {
        return Err("no program given".into());
    }
    if hosts.is_none() && !per_host {
        check_pe_count(npes.unwrap_or(1), process_limit())?;
    }
    Ok(Args { npes, bind, report_bindings, hosts, per_host, program })
}

/// The soft RLIMIT_NPROC (processes this user may have), if there is one.
fn process_limit() -> Option<u64> {
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes one rlimit into the struct we pass.
    let ok = unsafe { libc::getrlimit(libc::RLIMIT_NPROC, &mut lim) } == 0;
    (ok && lim.rlim_cur != libc::RLIM_INFINITY).then_some(lim.rlim_cur)
}

/// Refuses a PE count that could only end in fork failing, before anything starts.
fn check_pe_count(npes: usize, nproc_limit: Option<u64>) -> Result<(), String> {
    if npes > MAX_PES {
        return Err(format!(
            "-n {npes}: rshmemrun starts at most {MAX_PES} PEs (all on this host); use fewer PEs, or threads inside each PE"
        ));
    }
    if let Some(limit) = nproc_limit {
        // The launcher itself counts too.
        if npes as u64 >= limit {
            return Err(format!(
                "-n {npes}: this user may run only {limit} processes (RLIMIT_NPROC, see ulimit -u), fewer than the {npes} PEs and the launcher; use fewer PEs or raise the limit"
            ));
        }
    }
    Ok(())
}

fn describe(status: i32) -> (String, i32) {
    match process::decode_status(status) {
        Ok(code) => (format!("exited with status {code}"), code),
        Err(sig) => (format!("was killed by signal {sig} ({})", process::signal_name(sig)), 128 + sig),
    }
}

/// The PEs (of this host) and what is known about them.
struct Job {
    /// The rank of `children[0]`; the others follow in order.
    first: usize,
    children: Vec<Child>,
    alive: Vec<bool>,
}

impl Job {
    fn pid(&self, index: usize) -> i32 {
        self.children[index].id() as i32
    }

    fn any_alive(&self) -> bool {
        self.alive.iter().any(|a| *a)
    }

    fn signal_all(&self, sig: i32) {
        for index in 0..self.children.len() {
            if self.alive[index] {
                process::kill(self.pid(index), sig);
            }
        }
    }

    /// Reaps every PE that has ended: (rank, pid, raw status).
    fn reap(&mut self) -> Vec<(usize, i32, i32)> {
        let mut ended = Vec::new();
        while let Some((pid, status)) = process::try_wait_any() {
            if let Some(index) = self.children.iter().position(|c| c.id() as i32 == pid) {
                if self.alive[index] {
                    self.alive[index] = false;
                    ended.push((self.first + index, pid, status));
                }
            }
        }
        ended
    }

    /// Ends every PE still running: SIGTERM, a grace period, then SIGKILL; reaps them all.
    fn stop_all(&mut self) {
        self.signal_all(libc::SIGTERM);
        let deadline = Instant::now() + Duration::from_secs(2);
        while self.any_alive() && Instant::now() < deadline {
            self.reap();
            std::thread::sleep(Duration::from_millis(5));
        }
        self.signal_all(libc::SIGKILL);
        while self.any_alive() {
            if self.reap().is_empty() {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
    }
}

/// The other OpenSHMEM library `program` is linked with when librshmem is not preloaded: a
/// program built with Open MPI's oshcc (liboshmem) or Sandia's (libsma) would never contact this
/// launcher, and each PE would run alone. Looks for the library's name among the program's bytes
/// (its dynamic string table names every library it needs) rather than parsing the ELF file.
fn foreign_shmem(program: &str) -> Option<&'static str> {
    if std::env::var("LD_PRELOAD").is_ok_and(|p| p.contains("librshmem")) {
        return None;
    }
    let path = if program.contains('/') {
        std::path::PathBuf::from(program)
    } else {
        std::env::split_paths(&std::env::var_os("PATH")?).map(|d| d.join(program)).find(|p| p.is_file())?
    };
    let bytes = std::fs::read(path).ok()?;
    ["liboshmem.so", "libsma.so"].into_iter().find(|lib| bytes.windows(lib.len()).any(|w| w == lib.as_bytes()))
}

/// Reads whatever PEs wrote on the control pipe; returns the first shmem_global_exit seen.
fn read_control(control: &mut std::fs::File, pending: &mut String) -> Option<(String, i32)> {
    let mut buf = [0u8; 512];
    while let Ok(n) = control.read(&mut buf) {
        if n == 0 {
            break;
        }
        pending.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    while let Some(nl) = pending.find('\n') {
        let line: String = pending.drain(..=nl).collect();
        let parts: Vec<&str> = line.split_whitespace().collect();
        if let ["exit", pe, status] = parts[..] {
            return Some((pe.to_string(), status.parse().unwrap_or(1)));
        }
    }
    None
}

/// What every PE started here gets in its environment.
struct PeEnv<'a> {
    npes: usize,
    star: &'a str,
    secret_hex: &'a str,
    control_fd: std::os::fd::RawFd,
    /// Settings from the head launcher (per-host role).
    extra: &'a [(String, String)],
    bind: Option<bind::BindTo>,
    report_bindings: bool,
}

/// Makes the child `cmd` starts die with this launcher (`launcher_pid`), and take the default
/// action for the signals the launcher forwards.
fn dies_with_launcher(cmd: &mut Command, launcher_pid: i32) {
    // SAFETY: the closure only makes async-signal-safe calls (prctl, getppid, raise, signal).
    unsafe {
        cmd.pre_exec(move || {
            process::die_with_parent(libc::SIGKILL)?;
            // The launcher may have died before prctl took effect: then go now.
            if process::getppid() != launcher_pid {
                libc::raise(libc::SIGKILL);
            }
            for sig in FORWARDED {
                libc::signal(sig, libc::SIG_DFL);
            }
            Ok(())
        });
    }
}

/// Binds the child `cmd` starts to `cpus` (a failure, e.g. CPUs outside a cgroup, leaves it
/// unbound rather than not starting it).
fn bind_child(cmd: &mut Command, cpus: &[usize]) {
    let set = process::CpuSet::of(cpus);
    // SAFETY: the closure makes one async-signal-safe call (sched_setaffinity) on a set built
    // before fork.
    unsafe {
        cmd.pre_exec(move || {
            let _ = process::set_affinity(&set);
            Ok(())
        });
    }
}

/// Starts the PEs `ranks` of `program`; on failure stops those started and exits.
/// A PE that could not be started: its rank, why (naming the program), and the launcher's
/// exit status for it (127: not found, 126: found but not runnable).
struct StartFailure {
    rank: usize,
    why: String,
    status: i32,
}

/// Starts the PEs of `ranks`; on a failure, stops those already started and says which.
fn start_pes(program: &[String], ranks: std::ops::Range<usize>, env: &PeEnv) -> Result<Job, StartFailure> {
    let launcher_pid = process::getpid();
    let mut job = Job { first: ranks.start, children: Vec::with_capacity(ranks.len()), alive: Vec::new() };
    let host = bind::read_host();
    let cpus = bind::plan(env.bind, ranks.len(), &host);
    for (rank, cpus) in ranks.zip(cpus) {
        let mut cmd = Command::new(&program[0]);
        cmd.args(&program[1..])
            .envs(env.extra.iter().map(|(k, v)| (k, v)))
            .env(ENV_RANK, rank.to_string())
            .env(ENV_SIZE, env.npes.to_string())
            .env(ENV_STAR, env.star)
            .env(ENV_SECRET, env.secret_hex)
            .env(ENV_CONTROL_FD, env.control_fd.to_string())
            .env(ENV_CPUS, host.allowed.len().max(1).to_string());
        dies_with_launcher(&mut cmd, launcher_pid);
        if !cpus.is_empty() {
            bind_child(&mut cmd, &cpus);
        }
        if env.report_bindings {
            let to = if cpus.is_empty() { "not bound".to_string() } else { format!("bound to CPUs {}", bind::describe(&cpus)) };
            eprintln!("rshmemrun: PE {rank} on host {}: {to}", rshmem::bootstrap::hostname());
        }
        match cmd.spawn() {
            Ok(c) => {
                job.children.push(c);
                job.alive.push(true);
            }
            Err(e) => {
                job.stop_all();
                let status = if e.kind() == std::io::ErrorKind::NotFound { 127 } else { 126 };
                return Err(StartFailure { rank, why: format!("{}: {e}", program[0]), status });
            }
        }
    }
    Ok(job)
}

/// The control pipe: PEs write "exit <pe> <status>" lines (shmem_global_exit). Returns the
/// read end (non-blocking, close-on-exec) and the write end the PEs inherit.
fn control_pipe() -> (OwnedFd, OwnedFd) {
    let mut fds = [0; 2];
    // SAFETY: pipe writes two descriptors into the array.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        eprintln!("rshmemrun: pipe: {}", std::io::Error::last_os_error());
        std::process::exit(1);
    }
    // SAFETY: both descriptors were just created and are owned here.
    let (control_read, control_write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    // SAFETY: fcntl on a descriptor we own.
    unsafe {
        libc::fcntl(control_read.as_raw_fd(), libc::F_SETFD, libc::FD_CLOEXEC);
        libc::fcntl(control_read.as_raw_fd(), libc::F_SETFL, libc::O_NONBLOCK);
    }
    (control_read, control_write)
}

/// RSHMEM_BOOTSTRAP_TIMEOUT in seconds, or exit with the reason.
fn bootstrap_timeout() -> f64 {
    let (var, text) = rshmem::env::current(rshmem::env::BOOTSTRAP_TIMEOUT);
    match text.trim().parse::<f64>() {
        Ok(t) if t > 0.0 && t.is_finite() => t,
        _ => {
            eprintln!("rshmemrun: {var}={text:?} is not valid: expected a positive number of seconds");
            std::process::exit(2);
        }
    }
}

fn main() {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("rshmemrun: {e}\n{USAGE}");
            std::process::exit(2);
        }
    };
    let timeout = bootstrap_timeout();
    // Refused strangers are logged at INFO (RSHMEM_DEBUG=INFO); the PEs check every setting.
    if let Ok(cfg) = rshmem::env::Config::from_env() {
        rshmem::log::set(cfg.log_level, usize::MAX);
    }
    if let Some(lib) = foreign_shmem(&args.program[0]) {
        let ours = std::env::current_exe().ok().and_then(|e| Some(e.parent()?.parent()?.join("lib/librshmem.so")));
        let preload = ours.filter(|p| p.exists()).map(|p| p.display().to_string()).unwrap_or_else(|| "<prefix>/lib/librshmem.so".into());
        eprintln!(
            "rshmemrun: {} is linked with {lib}, another OpenSHMEM library: its PEs would never contact rshmemrun and each would run alone. Run it as LD_PRELOAD={preload} rshmemrun ..., or rebuild it with rshmem's oshcc",
            args.program[0]
        );
        std::process::exit(1);
    }
    if args.per_host {
        remote::per_host(&args.program, args.bind, args.report_bindings, timeout);
    }
    if let Some(hosts) = &args.hosts {
        let mut options: Vec<String> = args.bind.map(|b| vec!["--bind-to".into(), b.name().into()]).unwrap_or_default();
        if args.report_bindings {
            options.push("--report-bindings".into());
        }
        remote::head(hosts, args.npes, &args.program, &options, timeout);
    }
    let npes = args.npes.unwrap_or(1);
    // The job secret: only the PEs get it (in their environment, which other users cannot read).
    let server = match new_job_secret().and_then(|secret| Ok((StarServer::bind(npes, secret)?, secret))) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("rshmemrun: {e}");
            std::process::exit(1);
        }
    };
    let (server, secret) = server;
    let address = server.address().to_string();
    // One session per shmem_init .. shmem_finalize of the PEs; a program may initialise again.
    let star = std::thread::spawn(move || -> rshmem::error::Result<()> {
        server.serve(Duration::from_secs_f64(timeout))?;
        loop {
            server.serve_next(Duration::from_secs_f64(timeout))?;
        }
    });

    let (control_read, control_write) = control_pipe();

    process::set_signal_handler(&FORWARDED, on_signal);

    let env = PeEnv {
        npes,
        star: &address,
        secret_hex: &auth::to_hex(&secret),
        control_fd: control_write.as_raw_fd(),
        extra: &[],
        bind: args.bind,
        report_bindings: args.report_bindings,
    };
    let mut job = start_pes(&args.program, 0..npes, &env).unwrap_or_else(|f| {
        eprintln!("rshmemrun: cannot start PE {} on host {}: {}", f.rank, rshmem::bootstrap::hostname(), f.why);
        std::process::exit(f.status)
    });
    drop(control_write);

    let mut control = std::fs::File::from(control_read);
    let mut pending = String::new();
    let mut star = Some(star);
    let mut ending_signals = 0;
    let mut status = 0;
    let mut rendezvous_error = None;
    while job.any_alive() {
        let sigs = PENDING_SIGNALS.swap(0, Ordering::SeqCst);
        for sig in FORWARDED.into_iter().filter(|s| sigs & (1u64 << *s) != 0) {
            job.signal_all(sig);
            if TERMINATING.contains(&sig) {
                ending_signals += 1;
                if ending_signals > 1 {
                    eprintln!("rshmemrun: {} received again; stopping all PEs", process::signal_name(sig));
                    job.stop_all();
                    std::process::exit(128 + sig);
                }
            }
        }
        let ended = job.reap();
        // A PE writes its global-exit line before it exits, so read the pipe after reaping.
        if let Some((pe, code)) = read_control(&mut control, &mut pending) {
            // The library also ends the job this way after a fatal error (with status 1).
            eprintln!("rshmemrun: PE {pe} ended the job (shmem_global_exit({code}), or an error reported above); stopping all PEs");
            job.stop_all();
            std::process::exit(code);
        }
        for (rank, pid, raw) in ended {
            let (what, code) = describe(raw);
            if code != 0 {
                match job.alive.iter().filter(|a| **a).count() {
                    0 => eprintln!("rshmemrun: PE {rank} (pid {pid}) {what}"),
                    others => eprintln!("rshmemrun: PE {rank} (pid {pid}) {what}; stopping the other {others} PE(s)"),
                }
                job.stop_all();
                status = code;
                break;
            }
        }
        if star.as_ref().is_some_and(|t| t.is_finished()) {
            if let Ok(Err(e)) = star.take().expect("checked above").join() {
                rendezvous_error = Some(e);
            }
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    // The PEs report rendezvous failures themselves, and a job fails only with a PE's exit
    // status, reported above; a PE that exits mid-session also breaks its rendezvous
    // connection, which says no more ("left the job ... failed to fill whole buffer"), whether
    // the loop noticed it before or after the exit. So it goes to the log only (RSHMEM_DEBUG).
    if let Some(e) = rendezvous_error {
        rshmem::log::info(&format!("rshmemrun: rendezvous: {}", e.message));
    }
    std::process::exit(status);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pe_counts_are_bounded() {
        assert!(check_pe_count(4, None).is_ok());
        assert!(check_pe_count(MAX_PES, Some(1 << 20)).is_ok());
        let e = check_pe_count(100_000, None).unwrap_err();
        assert!(e.contains("-n 100000: rshmemrun starts at most 4096 PEs"), "{e}");
        let e = check_pe_count(64, Some(64)).unwrap_err();
        assert!(e.contains("only 64 processes (RLIMIT_NPROC"), "{e}");
        assert!(check_pe_count(63, Some(64)).is_ok());
    }
}
