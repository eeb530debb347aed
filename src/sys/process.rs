//! Process control: signals, parent-death notification, immediate exit.

use std::io;

use super::last_os_error;

/// Asks the kernel to send `sig` to this process when its parent dies (used by the launcher's
/// children, so `kill -9` of the launcher takes every PE with it).
pub fn die_with_parent(sig: i32) -> io::Result<()> {
    // SAFETY: prctl with PR_SET_PDEATHSIG takes a plain integer argument.
    if unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, sig as libc::c_ulong, 0, 0, 0) } != 0 {
        return Err(last_os_error());
    }
    Ok(())
}

/// Sends a signal; returns false if the process no longer exists.
pub fn kill(pid: i32, sig: i32) -> bool {
    // SAFETY: kill has no memory-safety preconditions.
    unsafe { libc::kill(pid, sig) == 0 }
}

/// True while a process with this pid exists.
pub fn alive(pid: i32) -> bool {
    kill(pid, 0) || last_os_error().raw_os_error() == Some(libc::EPERM)
}

pub fn getpid() -> i32 {
    std::process::id() as i32
}

pub fn getppid() -> i32 {
    // SAFETY: getppid has no preconditions.
    unsafe { libc::getppid() }
}

/// Ends the process now with `status`, without running atexit handlers or destructors
/// (used after a fatal error, when the state those would touch may be broken).
pub fn exit_now(status: i32) -> ! {
    use std::io::Write;
    let _ = std::io::stderr().flush();
    let _ = std::io::stdout().flush();
    // SAFETY: _exit never returns and has no preconditions.
    unsafe { libc::_exit(status) }
}

/// Human name of a signal number.
pub fn signal_name(sig: i32) -> String {
    let known = [
        (libc::SIGHUP, "SIGHUP"),
        (libc::SIGINT, "SIGINT"),
        (libc::SIGQUIT, "SIGQUIT"),
        (libc::SIGILL, "SIGILL"),
        (libc::SIGTRAP, "SIGTRAP"),
        (libc::SIGABRT, "SIGABRT"),
        (libc::SIGBUS, "SIGBUS"),
        (libc::SIGFPE, "SIGFPE"),
        (libc::SIGKILL, "SIGKILL"),
        (libc::SIGUSR1, "SIGUSR1"),
        (libc::SIGSEGV, "SIGSEGV"),
        (libc::SIGUSR2, "SIGUSR2"),
        (libc::SIGPIPE, "SIGPIPE"),
        (libc::SIGALRM, "SIGALRM"),
        (libc::SIGTERM, "SIGTERM"),
    ];
    known.iter().find(|(n, _)| *n == sig).map(|(_, s)| s.to_string()).unwrap_or_else(|| format!("signal {sig}"))
}

/// Installs `handler` for each of `signals` (the launcher's forwarding handler).
pub fn set_signal_handler(signals: &[i32], handler: extern "C" fn(libc::c_int)) {
    for &sig in signals {
        // SAFETY: sigaction with a zeroed struct plus a valid extern "C" handler.
        unsafe {
            let mut act: libc::sigaction = std::mem::zeroed();
            act.sa_sigaction = handler as usize;
            act.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut act.sa_mask);
            libc::sigaction(sig, &act, std::ptr::null_mut());
        }
    }
}

/// Reaps one exited child without blocking: Some((pid, raw wait status)).
pub fn try_wait_any() -> Option<(i32, i32)> {
    let mut status = 0;
    // SAFETY: waitpid writes only into `status`.
    let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
    (pid > 0).then_some((pid, status))
}

/// Decodes a raw wait status: Ok(exit code) or Err(signal number).
pub fn decode_status(status: i32) -> Result<i32, i32> {
    if libc::WIFEXITED(status) {
        Ok(libc::WEXITSTATUS(status))
    } else {
        Err(libc::WTERMSIG(status))
    }
}

/// Whether this process runs as root (effective uid 0): tests that need namespaces ask.
pub fn is_root() -> bool {
    // SAFETY: geteuid has no arguments and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// A CPU set for `set_affinity`, built before fork (building it allocates nothing after).
pub struct CpuSet(libc::cpu_set_t);

impl CpuSet {
    pub fn of(cpus: &[usize]) -> CpuSet {
        // SAFETY: cpu_set_t is a plain bit array; all zeroes is the empty set.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        for &c in cpus.iter().filter(|c| **c < libc::CPU_SETSIZE as usize) {
            // SAFETY: c is below CPU_SETSIZE (filtered), so the bit lies inside the set.
            unsafe { libc::CPU_SET(c, &mut set) };
        }
        CpuSet(set)
    }
}

/// Binds the calling thread (after fork: the child process) to `set`. Async-signal-safe.
pub fn set_affinity(set: &CpuSet) -> io::Result<()> {
    // SAFETY: sched_setaffinity reads size_of::<cpu_set_t>() bytes from the set we own.
    if unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set.0) } != 0 {
        return Err(last_os_error());
    }
    Ok(())
}

/// The CPUs this process may run on, ascending (empty if the kernel will not say).
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: as in CpuSet::of.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: sched_getaffinity writes at most the size we pass into the set we own.
    if unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) } != 0 {
        return Vec::new();
    }
    // SAFETY: CPU_ISSET reads the set initialised above.
    (0..libc::CPU_SETSIZE as usize).filter(|c| unsafe { libc::CPU_ISSET(*c, &set) }).collect()
}
