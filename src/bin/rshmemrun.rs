//! rshmemrun: starts N PEs of a program on this host.
//!
//! It runs the bootstrap rendezvous, forwards signals to the PEs, and watches them: when one
//! dies (crash, signal, non-zero exit, shmem_global_exit) it names that PE, stops the others
//! and returns that PE's status. Its children die with it (PR_SET_PDEATHSIG), so `kill -9` of
//! the launcher leaves nothing running and nothing on disk.

use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command};
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

use rshmem::bootstrap::{star::StarServer, ENV_CONTROL_FD, ENV_RANK, ENV_SIZE, ENV_STAR};
use rshmem::sys::process;

const USAGE: &str = "usage: rshmemrun -n N [--] program [args...]
Starts N processing elements (PEs) of program on this host.
  -n, -np N        number of PEs (default 1)
  -h, --help       this text
  -V, --version    print the version
Environment: RSHMEM_BOOTSTRAP_TIMEOUT (seconds, default 60), and every RSHMEM_/SHMEM_/NVSHMEM_
setting, which the PEs inherit (rshmem-info lists them).";

static PENDING_SIGNAL: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    PENDING_SIGNAL.store(sig, Ordering::SeqCst);
}

struct Args {
    npes: usize,
    program: Vec<String>,
}

fn parse_args() -> Result<Args, String> {
    let mut it = std::env::args().skip(1).peekable();
    let mut npes = 1usize;
    while let Some(a) = it.peek().cloned() {
        match a.as_str() {
            "-n" | "-np" | "--np" | "-N" => {
                it.next();
                let v = it.next().ok_or_else(|| format!("{a} needs a number"))?;
                npes = v.parse().ok().filter(|n| *n > 0).ok_or_else(|| format!("{a} {v}: expected a positive number of PEs"))?;
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
    Ok(Args { npes, program })
}

fn describe(status: i32) -> (String, i32) {
    match process::decode_status(status) {
        Ok(code) => (format!("exited with status {code}"), code),
        Err(sig) => (format!("was killed by signal {sig} ({})", process::signal_name(sig)), 128 + sig),
    }
}

fn stop_all(children: &[Child], alive: &[bool]) {
    let live = |i: usize| alive[i];
    for (i, c) in children.iter().enumerate() {
        if live(i) {
            process::kill(c.id() as i32, libc::SIGTERM);
        }
    }
    let deadline = Instant::now() + Duration::from_secs(2);
    while Instant::now() < deadline && children.iter().enumerate().any(|(i, c)| live(i) && process::alive(c.id() as i32)) {
        while process::try_wait_any().is_some() {}
        std::thread::sleep(Duration::from_millis(10));
    }
    for (i, c) in children.iter().enumerate() {
        if live(i) {
            process::kill(c.id() as i32, libc::SIGKILL);
        }
    }
    while process::try_wait_any().is_some() {}
}

fn main() {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("rshmemrun: {e}\n{USAGE}");
            std::process::exit(2);
        }
    };
    let timeout = rshmem::env::current("BOOTSTRAP_TIMEOUT").1.trim().parse::<f64>().unwrap_or(60.0);
    let server = match StarServer::bind(args.npes) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("rshmemrun: {e}");
            std::process::exit(1);
        }
    };
    let address = server.address().to_string();
    let star = std::thread::spawn(move || server.serve(Duration::from_secs_f64(timeout)));

    // The control pipe: PEs write "exit <pe> <status>" lines (shmem_global_exit).
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

    let forwarded = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT, libc::SIGUSR1, libc::SIGUSR2];
    process::set_signal_handler(&forwarded, on_signal);

    let mut children = Vec::with_capacity(args.npes);
    for rank in 0..args.npes {
        let mut cmd = Command::new(&args.program[0]);
        cmd.args(&args.program[1..])
            .env(ENV_RANK, rank.to_string())
            .env(ENV_SIZE, args.npes.to_string())
            .env(ENV_STAR, &address)
            .env(ENV_CONTROL_FD, control_write.as_raw_fd().to_string());
        // SAFETY: the closure only makes async-signal-safe calls (prctl, sigaction reset).
        unsafe {
            cmd.pre_exec(|| {
                process::die_with_parent(libc::SIGKILL)?;
                for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT, libc::SIGUSR1, libc::SIGUSR2] {
                    libc::signal(sig, libc::SIG_DFL);
                }
                Ok(())
            });
        }
        match cmd.spawn() {
            Ok(c) => children.push(c),
            Err(e) => {
                eprintln!("rshmemrun: cannot start PE {rank} ({}): {e}", args.program[0]);
                let alive = vec![true; children.len()];
                stop_all(&children, &alive);
                std::process::exit(if e.kind() == std::io::ErrorKind::NotFound { 127 } else { 126 });
            }
        }
    }
    drop(control_write);

    let mut alive = vec![true; children.len()];
    let mut first_failure: Option<i32> = None;
    let mut control = std::fs::File::from(control_read);
    let mut pending = String::new();
    let mut star = Some(star);
    while alive.iter().any(|a| *a) {
        let sig = PENDING_SIGNAL.swap(0, Ordering::SeqCst);
        if sig != 0 {
            for (i, c) in children.iter().enumerate() {
                if alive[i] {
                    process::kill(c.id() as i32, sig);
                }
            }
        }
        let mut buf = [0u8; 256];
        if let Ok(n) = control.read(&mut buf) {
            pending.push_str(&String::from_utf8_lossy(&buf[..n]));
        }
        while let Some(nl) = pending.find('\n') {
            let line: String = pending.drain(..=nl).collect();
            let parts: Vec<&str> = line.split_whitespace().collect();
            if let ["exit", pe, status] = parts[..] {
                let status: i32 = status.parse().unwrap_or(1);
                eprintln!("rshmemrun: PE {pe} called shmem_global_exit({status}); stopping all PEs");
                stop_all(&children, &alive);
                std::process::exit(status);
            }
        }
        if star.as_ref().is_some_and(|t| t.is_finished()) {
            if let Ok(Err(e)) = star.take().unwrap().join() {
                if alive.iter().any(|a| *a) {
                    eprintln!("rshmemrun: {e}");
                }
            }
        }
        while let Some((pid, status)) = process::try_wait_any() {
            let Some(rank) = children.iter().position(|c| c.id() as i32 == pid) else { continue };
            alive[rank] = false;
            let (what, code) = describe(status);
            if code != 0 && first_failure.is_none() {
                first_failure = Some(code);
                let others = alive.iter().filter(|a| **a).count();
                eprintln!("rshmemrun: PE {rank} (pid {pid}) {what}; stopping the other {others} PE(s)");
                stop_all(&children, &alive);
                alive.iter_mut().for_each(|a| *a = false);
            }
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    std::process::exit(first_failure.unwrap_or(0));
}
