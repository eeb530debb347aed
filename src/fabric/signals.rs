//! Keeping libfabric's providers out of the process's signal handling.
//!
//! Loading libfabric runs the constructors of every library it links, and its first
//! fi_getinfo loads and initialises every provider, the unused ones included. Some of them take
//! over signals: Debian's libfabric links the psm provider, whose libinfinipath installs a
//! backtrace handler for SIGINT, SIGILL, SIGABRT, SIGBUS, SIGSEGV and SIGTERM the moment the
//! library is loaded; a PE sent SIGTERM then exits with status 1 instead of dying of the signal,
//! and one killed by a timeout was seen aborting inside that handler (free() in a signal
//! handler). libfabric's own filter (FI_PROVIDER) cannot prevent it: a linked library's
//! constructor runs before libfabric does anything, and a provider found in FI_PROVIDER_PATH is
//! loaded and its fi_prov_ini called before its name is known and filtered.
//!
//! So every call that may load or initialise a provider runs inside `guarded`: the disposition
//! of every signal is read before, and each one the call changed is put back after (logged at
//! INFO with the library the new handler lives in). The guards of all threads take turns, so
//! the start-up thread that loads libfabric early and `Fabric::open` never see each other's
//! half-done state. A handler the application itself installs from another thread while
//! rshmem opens the fabric (inside shmem_init) would be undone too: nothing tells the two apart.

use std::ffi::CStr;
use std::sync::Mutex;

/// Linux numbers its signals 1..=64 (SIGRTMAX); the rest are refused by sigaction.
const SIGNALS: std::ops::RangeInclusive<libc::c_int> = 1..=64;

/// Serialises the guards of all threads.
static TURN: Mutex<()> = Mutex::new(());

/// The dispositions of every signal that has one (sigaction refuses glibc's internal ones).
struct Dispositions(Vec<(libc::c_int, libc::sigaction)>);

impl Dispositions {
    fn read() -> Dispositions {
        let mut all = Vec::with_capacity(SIGNALS.count());
        for sig in SIGNALS {
            // SAFETY: sigaction only reads the disposition into a zeroed struct of ours.
            unsafe {
                let mut act: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(sig, std::ptr::null(), &mut act) == 0 {
                    all.push((sig, act));
                }
            }
        }
        Dispositions(all)
    }

    /// Puts back every disposition that differs now; the signals and the library each new
    /// handler was found in.
    fn restore_changed(&self) -> Vec<(libc::c_int, String)> {
        let mut changed = Vec::new();
        for (sig, old) in &self.0 {
            // SAFETY: as in `read`; a disposition that differs is replaced by the saved one,
            // which sigaction gave us for this very signal.
            unsafe {
                let mut now: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(*sig, std::ptr::null(), &mut now) != 0 {
                    continue;
                }
                if now.sa_sigaction == old.sa_sigaction && now.sa_flags == old.sa_flags {
                    continue;
                }
                if libc::sigaction(*sig, old, std::ptr::null_mut()) == 0 {
                    changed.push((*sig, owner(now.sa_sigaction)));
                }
            }
        }
        changed
    }
}

/// The file of the loaded object a handler's code lies in, for the log.
fn owner(handler: libc::sighandler_t) -> String {
    match handler {
        libc::SIG_DFL => return "(the default action)".into(),
        libc::SIG_IGN => return "(ignore)".into(),
        _ => {}
    }
    // SAFETY: dladdr only looks the address up among the loaded objects and fills `info`,
    // whose file name points into the loader's own (static while the object is loaded) data.
    unsafe {
        let mut info: libc::Dl_info = std::mem::zeroed();
        if libc::dladdr(handler as *const libc::c_void, &mut info) != 0 && !info.dli_fname.is_null() {
            return CStr::from_ptr(info.dli_fname).to_string_lossy().into_owned();
        }
    }
    format!("(no loaded object holds {handler:#x})")
}

/// What the guards put back, until `log_restored` (the start-up thread's guards run before
/// the log level is known).
static RESTORED: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Runs `f`, which may load or initialise libfabric providers (`what` says what it does, for
/// the log), and puts back every signal disposition it changed.
pub(super) fn guarded<T>(what: &str, f: impl FnOnce() -> T) -> T {
    let (out, changed) = guarded_report(f);
    if !changed.is_empty() {
        RESTORED.lock().unwrap_or_else(|e| e.into_inner()).push(describe(what, &changed));
    }
    out
}

/// Logs (INFO) what the guards have put back since the last call.
pub(super) fn log_restored() {
    let lines = std::mem::take(&mut *RESTORED.lock().unwrap_or_else(|e| e.into_inner()));
    for line in lines {
        crate::log::info(&line);
    }
}

/// `guarded` without the log: the value and what was put back.
fn guarded_report<T>(f: impl FnOnce() -> T) -> (T, Vec<(libc::c_int, String)>) {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let before = Dispositions::read();
    let out = f();
    (out, before.restore_changed())
}

/// "fabric: while loading libfabric, /lib/libinfinipath.so.4 took over SIGINT, SIGTERM; …"
fn describe(what: &str, changed: &[(libc::c_int, String)]) -> String {
    let mut by_owner: Vec<(&str, Vec<String>)> = Vec::new();
    for (sig, lib) in changed {
        let name = crate::sys::process::signal_name(*sig);
        match by_owner.iter_mut().find(|(l, _)| *l == lib.as_str()) {
            Some((_, sigs)) => sigs.push(name),
            None => by_owner.push((lib, vec![name])),
        }
    }
    let parts: Vec<String> = by_owner.iter().map(|(lib, sigs)| format!("{lib} took over {}", sigs.join(", "))).collect();
    format!("fabric: while {what}, {}; the process's own handling of them is restored", parts.join("; "))
}

#[cfg(test)]
mod tests {
    use super::{describe, guarded_report};

    extern "C" fn foreign(_: libc::c_int) {}

    fn handler_of(sig: libc::c_int) -> libc::sighandler_t {
        // SAFETY: reads the disposition into a zeroed struct.
        unsafe {
            let mut act: libc::sigaction = std::mem::zeroed();
            assert_eq!(libc::sigaction(sig, std::ptr::null(), &mut act), 0);
            act.sa_sigaction
        }
    }

    #[test]
    fn a_handler_installed_inside_the_guard_is_undone_and_named() {
        let sig = libc::SIGWINCH;
        let before = handler_of(sig);
        assert_ne!(before, foreign as *const () as usize);
        let (value, changed) = guarded_report(|| {
            // SAFETY: installs a handler that does nothing, for a signal nobody sends here.
            unsafe {
                let mut act: libc::sigaction = std::mem::zeroed();
                act.sa_sigaction = foreign as *const () as usize;
                libc::sigemptyset(&mut act.sa_mask);
                assert_eq!(libc::sigaction(sig, &act, std::ptr::null_mut()), 0);
            }
            assert_eq!(handler_of(sig), foreign as *const () as usize);
            7
        });
        assert_eq!(value, 7);
        assert_eq!(handler_of(sig), before, "the handler installed inside the guard is gone");
        let ours: Vec<_> = changed.iter().filter(|(s, _)| *s == sig).collect();
        assert_eq!(ours.len(), 1, "{changed:?}");
        let exe = std::env::current_exe().unwrap();
        let file = exe.file_name().unwrap().to_string_lossy();
        assert!(ours[0].1.ends_with(&*file), "the handler lies in the test binary: {changed:?}");
    }

    #[test]
    fn the_log_line_groups_signals_by_library() {
        let changed =
            [(libc::SIGTERM, "/lib/libx.so".to_string()), (libc::SIGSEGV, "/lib/y.so".into()), (libc::SIGINT, "/lib/libx.so".into())];
        assert_eq!(
            describe("loading libfabric", &changed),
            "fabric: while loading libfabric, /lib/libx.so took over SIGTERM, SIGINT; /lib/y.so took over SIGSEGV; \
             the process's own handling of them is restored"
        );
    }
}
