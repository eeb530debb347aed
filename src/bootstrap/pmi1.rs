//! PMI-1 wire protocol client: MPICH's hydra (`mpiexec`, `mpiexec.hydra`) gives each process
//! a connected socket in `PMI_FD`, its rank in `PMI_RANK` and the job size in `PMI_SIZE`.
//!
//! The protocol is line based: a request is `cmd=<name> key=value ...\n`, every request gets
//! one reply line of the same form (`rc=0` when it worked). We use: `init` (→ `response_to_init`),
//! `get_maxes` (→ `maxes`), `get_my_kvsname` (→ `my_kvsname`), `put` (→ `put_result`),
//! `barrier_in` (→ `barrier_out`), `get` (→ `get_result`) and, at process exit, `finalize`
//! (→ `finalize_ack`). The session stays open from the first shmem_init to process exit, so a
//! program may finalize and initialise again.

use std::io::{BufRead, BufReader, Write};
use std::os::fd::{FromRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::sync::Mutex;
use std::time::Duration;

use super::{Bootstrap, JobStar, KeyValueStore};
use crate::error::{Error, Result};

pub const ENV_FD: &str = "PMI_FD";
pub const ENV_RANK: &str = "PMI_RANK";
pub const ENV_SIZE: &str = "PMI_SIZE";

pub fn detected() -> bool {
    std::env::var_os(ENV_FD).is_some()
}

/// Set by Slurm's srun in every task of a job step: how many tasks the step has.
pub const ENV_SLURM_STEP_TASKS: &str = "SLURM_STEP_NUM_TASKS";

/// A task of a multi-task srun step that came without PMI (no `--mpi=pmi2|pmix` and no
/// MpiDefault): it cannot find the other tasks, and running each as a job of its own PE would
/// be silently wrong. The error names the fix.
pub fn srun_without_pmi() -> Option<Error> {
    srun_step_refusal(&std::env::var(ENV_SLURM_STEP_TASKS).ok()?)
}

/// The refusal for a step of `step_tasks` tasks (the variable's value), if it has more than one.
fn srun_step_refusal(step_tasks: &str) -> Option<Error> {
    let tasks: usize = step_tasks.trim().parse().ok()?;
    (tasks > 1).then(|| {
        Error::bootstrap(format!(
            "bootstrap: srun started this process as one of {tasks} tasks ({ENV_SLURM_STEP_TASKS}) without a PMI plugin, so it cannot find the others: \
             start it with `srun --mpi=pmi2` (or `--mpi=pmix`), or set MpiDefault=pmi2 in slurm.conf; RSHMEM_BOOTSTRAP=single runs each task as a job of one PE"
        ))
    })
}

fn err(what: impl std::fmt::Display) -> Error {
    Error::bootstrap(format!("bootstrap (PMI-1): {what}"))
}

/// One reply line, split into its `key=value` words.
#[derive(Debug, PartialEq)]
pub struct Reply(Vec<(String, String)>);

impl Reply {
    pub fn parse(line: &str) -> Reply {
        Reply(
            line.split_whitespace()
                .map(|w| match w.split_once('=') {
                    Some((k, v)) => (k.to_string(), v.to_string()),
                    None => (w.to_string(), String::new()),
                })
                .collect(),
        )
    }
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }
}

/// A PMI-1 session over a connected stream socket.
pub struct Pmi1 {
    reader: BufReader<UnixStream>,
    writer: UnixStream,
    pub rank: usize,
    pub size: usize,
    pub kvsname: String,
    keylen_max: usize,
    vallen_max: usize,
}

impl Pmi1 {
    /// Runs `init`, `get_maxes` and `get_my_kvsname` on `stream`.
    pub fn start(stream: UnixStream, rank: usize, size: usize, timeout: Duration) -> Result<Pmi1> {
        stream.set_read_timeout(Some(timeout)).map_err(|e| err(format!("socket: {e}")))?;
        let writer = stream.try_clone().map_err(|e| err(format!("socket: {e}")))?;
        let mut s = Pmi1 { reader: BufReader::new(stream), writer, rank, size, kvsname: String::new(), keylen_max: 64, vallen_max: 256 };
        let r = s.call("cmd=init pmi_version=1 pmi_subversion=1", "response_to_init")?;
        if r.get("pmi_version") != Some("1") {
            return Err(err(format!("the launcher speaks PMI version {:?}, not 1", r.get("pmi_version").unwrap_or("?"))));
        }
        let r = s.call("cmd=get_maxes", "maxes")?;
        let num = |k: &str, dflt: usize| r.get(k).and_then(|v| v.parse().ok()).unwrap_or(dflt);
        s.keylen_max = num("keylen_max", 64);
        s.vallen_max = num("vallen_max", 256);
        let r = s.call("cmd=get_my_kvsname", "my_kvsname")?;
        s.kvsname = r.get("kvsname").filter(|k| !k.is_empty()).ok_or_else(|| err("get_my_kvsname returned no name"))?.to_string();
        Ok(s)
    }

    /// Sends one request line and reads its reply, which must be `cmd=<expect>` with rc 0.
    fn call(&mut self, request: &str, expect: &str) -> Result<Reply> {
        let what = request.split_whitespace().next().unwrap_or(request).trim_start_matches("cmd=").to_string();
        self.writer.write_all(format!("{request}\n").as_bytes()).map_err(|e| err(format!("sending {what} to the launcher: {e}")))?;
        let mut line = String::new();
        match self.reader.read_line(&mut line) {
            Ok(0) => return Err(err(format!("the launcher closed the PMI connection during {what}"))),
            Ok(_) => {}
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
                return Err(err(format!(
                    "no answer to {what} within {:.0} s: some PE has not reached shmem_init (raise RSHMEM_BOOTSTRAP_TIMEOUT if start-up is slow)",
                    self.reader.get_ref().read_timeout().ok().flatten().unwrap_or_default().as_secs_f64()
                )))
            }
            Err(e) => return Err(err(format!("reading the answer to {what}: {e}"))),
        }
        let reply = Reply::parse(&line);
        if reply.get("cmd") != Some(expect) {
            return Err(err(format!("expected cmd={expect} in answer to {what}, got {:?}", line.trim_end())));
        }
        if let Some(rc) = reply.get("rc").filter(|rc| *rc != "0") {
            let msg = reply.get("msg").unwrap_or("");
            return Err(err(format!("{what} failed with rc={rc} {msg}")));
        }
        Ok(reply)
    }

    fn check_word(&self, what: &str, text: &str, max: usize) -> Result<()> {
        if text.is_empty() || text.len() >= max || text.contains(|c: char| c.is_whitespace() || c == '=') {
            return Err(err(format!("{what} {text:?} cannot be sent (empty, a space or '=', or not under {max} bytes)")));
        }
        Ok(())
    }

    pub fn put(&mut self, key: &str, value: &str) -> Result<()> {
        self.check_word("key", key, self.keylen_max)?;
        self.check_word("value", value, self.vallen_max)?;
        let req = format!("cmd=put kvsname={} key={key} value={value}", self.kvsname);
        self.call(&req, "put_result").map(|_| ())
    }

    pub fn barrier(&mut self) -> Result<()> {
        self.call("cmd=barrier_in", "barrier_out").map(|_| ())
    }

    pub fn get(&mut self, key: &str) -> Result<String> {
        self.check_word("key", key, self.keylen_max)?;
        let req = format!("cmd=get kvsname={} key={key}", self.kvsname);
        let r = self.call(&req, "get_result")?;
        r.get("value").map(str::to_string).ok_or_else(|| err(format!("no value for key {key}")))
    }

    pub fn finalize(&mut self) -> Result<()> {
        self.call("cmd=finalize", "finalize_ack").map(|_| ())
    }
}

impl KeyValueStore for Pmi1 {
    fn put(&mut self, key: &str, value: &str) -> Result<()> {
        Pmi1::put(self, key, value)
    }
    fn fence(&mut self) -> Result<()> {
        self.barrier()
    }
    fn get_from_rank0(&mut self, key: &str) -> Result<String> {
        self.get(key)
    }
}

/// The process's PMI-1 session, open from the first shmem_init to process exit.
static SESSION: Mutex<Option<Pmi1>> = Mutex::new(None);

fn env_number(name: &str) -> Result<usize> {
    let v = std::env::var(name).map_err(|_| err(format!("{ENV_FD} is set but {name} is not; was this started by MPICH's mpiexec?")))?;
    v.trim().parse().map_err(|_| err(format!("{name}={v:?} is not a number")))
}

fn open_session(timeout: Duration) -> Result<Pmi1> {
    if std::env::var_os(ENV_FD).is_none() {
        return Err(err(format!(
            "the PMI bootstrap was chosen but {ENV_FD} is not set: this process was not started by a PMI-1 launcher \
             (MPICH's mpiexec.hydra). Start it with one, or leave RSHMEM_BOOTSTRAP unset to use the launcher it has"
        )));
    }
    let fd: RawFd = env_number(ENV_FD)? as RawFd;
    let (rank, size) = (env_number(ENV_RANK)?, env_number(ENV_SIZE)?);
    if size == 0 || rank >= size {
        return Err(err(format!("{ENV_RANK}={rank} is not below {ENV_SIZE}={size}")));
    }
    // SAFETY: fcntl F_GETFD only inspects the descriptor number.
    if unsafe { libc::fcntl(fd, libc::F_GETFD) } < 0 {
        return Err(err(format!("{ENV_FD}={fd} is not an open descriptor (was PMI already finalized?)")));
    }
    // SAFETY: the launcher handed this process the descriptor for its PMI connection; from
    // here on this session owns it (and keeps it from leaking into the program's children).
    let stream = unsafe {
        libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
        UnixStream::from_raw_fd(fd)
    };
    Pmi1::start(stream, rank, size, timeout)
}

/// Connects to the launcher (once per process) and joins the job's star.
pub fn bootstrap(timeout: Duration) -> Result<Box<dyn Bootstrap>> {
    let mut guard = SESSION.lock().unwrap_or_else(|p| p.into_inner());
    if guard.is_none() {
        *guard = Some(open_session(timeout)?);
    }
    let pmi = guard.as_mut().expect("set above");
    let key = format!("rshmem-star-{}", super::next_star_epoch());
    let (rank, size) = (pmi.rank, pmi.size);
    JobStar::join(pmi, &key, rank, size, timeout, "pmi-1")?.on_global_exit(abort_job).per_host()
}

/// shmem_global_exit under hydra: `abort` makes the launcher end every process of the job
/// and exit with this status (no reply comes back).
fn abort_job(status: i32) {
    // try_lock: never wait here; the session is only busy during init and at exit.
    if let Ok(mut guard) = SESSION.try_lock() {
        if let Some(pmi) = guard.as_mut() {
            let _ = pmi.writer.write_all(format!("cmd=abort exitcode={status}\n").as_bytes());
        }
    }
}

/// Sends `finalize` if a session is open (at process exit).
pub fn finalize_session() {
    let mut guard = SESSION.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(mut pmi) = guard.take() {
        if let Err(e) = pmi.finalize() {
            crate::log::warn(&e.to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::sync::{Arc, Barrier};

    /// A small stand-in for hydra's PMI-1 server: one thread per client, a shared key-value
    /// space, and a barrier over all clients.
    fn fake_launcher(n: usize) -> Vec<UnixStream> {
        let kvs = Arc::new(Mutex::new(HashMap::<String, String>::new()));
        let barrier = Arc::new(Barrier::new(n));
        (0..n)
            .map(|_| {
                let (ours, theirs) = UnixStream::pair().unwrap();
                let (kvs, barrier) = (kvs.clone(), barrier.clone());
                std::thread::spawn(move || {
                    let mut w = theirs.try_clone().unwrap();
                    for line in BufReader::new(theirs).lines() {
                        let line = line.unwrap();
                        let r = Reply::parse(&line);
                        let answer = match r.get("cmd").unwrap() {
                            "init" => "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0".to_string(),
                            "get_maxes" => "cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024 rc=0".into(),
                            "get_my_kvsname" => "cmd=my_kvsname kvsname=kvs_test_0 rc=0".into(),
                            "put" => {
                                assert_eq!(r.get("kvsname"), Some("kvs_test_0"));
                                kvs.lock().unwrap().insert(r.get("key").unwrap().into(), r.get("value").unwrap().into());
                                "cmd=put_result rc=0 msg=success".into()
                            }
                            "barrier_in" => {
                                barrier.wait();
                                "cmd=barrier_out".into()
                            }
                            "get" => match kvs.lock().unwrap().get(r.get("key").unwrap()) {
                                Some(v) => format!("cmd=get_result rc=0 msg=success value={v}"),
                                None => "cmd=get_result rc=-1 msg=key_not_found".into(),
                            },
                            "finalize" => "cmd=finalize_ack".into(),
                            other => panic!("unexpected command {other}"),
                        };
                        w.write_all(format!("{answer}\n").as_bytes()).unwrap();
                    }
                });
                ours
            })
            .collect()
    }

    #[test]
    fn forcing_pmi_without_a_pmi_launcher_names_the_missing_variable() {
        // Only this test touches PMI_FD, and no test in this binary reads it.
        std::env::remove_var(ENV_FD);
        let e = open_session(Duration::from_secs(1)).err().unwrap();
        assert!(e.message.contains("PMI_FD is not set"), "{}", e.message);
        assert!(!e.message.contains("PMI_FD is set but"), "{}", e.message);
    }

    #[test]
    fn srun_tasks_without_pmi_are_told_the_fix() {
        let e = srun_step_refusal("4").expect("4 tasks without PMI is an error");
        assert!(e.message.contains("one of 4 tasks (SLURM_STEP_NUM_TASKS)"), "{}", e.message);
        assert!(e.message.contains("srun --mpi=pmi2"), "{}", e.message);
        assert!(srun_step_refusal("1").is_none(), "a step of one task is a job of one PE");
        assert!(srun_step_refusal("garbage").is_none());
    }

    #[test]
    fn replies_parse_into_words() {
        let r = Reply::parse("cmd=get_result rc=0 value=a/b\n");
        assert_eq!(r.get("cmd"), Some("get_result"));
        assert_eq!(r.get("value"), Some("a/b"));
        assert_eq!(r.get("msg"), None);
    }

    #[test]
    fn handshake_put_barrier_get_finalize() {
        let mut s = fake_launcher(1);
        let mut p = Pmi1::start(s.remove(0), 0, 1, Duration::from_secs(5)).unwrap();
        assert_eq!(p.kvsname, "kvs_test_0");
        assert_eq!(p.vallen_max, 1024);
        p.put("k", "v1").unwrap();
        p.barrier().unwrap();
        assert_eq!(p.get("k").unwrap(), "v1");
        let e = p.get("missing").unwrap_err();
        assert!(e.message.contains("rc=-1"), "{}", e.message);
        assert!(p.put("k", "has space").is_err());
        p.finalize().unwrap();
    }

    #[test]
    fn a_silent_launcher_times_out_with_a_message() {
        let (ours, _theirs) = UnixStream::pair().unwrap();
        let e = Pmi1::start(ours, 0, 1, Duration::from_millis(200)).err().unwrap();
        assert!(e.message.contains("no answer to init"), "{}", e.message);
    }

    #[test]
    fn three_pes_meet_through_the_job_star() {
        let streams = fake_launcher(3);
        let pes: Vec<_> = streams
            .into_iter()
            .enumerate()
            .map(|(rank, s)| {
                std::thread::spawn(move || {
                    let mut p = Pmi1::start(s, rank, 3, Duration::from_secs(10)).unwrap();
                    let star = JobStar::join(&mut p, "rshmem-star-t", rank, 3, Duration::from_secs(10), "pmi-1").unwrap();
                    assert_eq!((star.rank(), star.size()), (rank, 3));
                    let all = star.allgather(&[rank as u8]).unwrap();
                    assert_eq!(all, vec![vec![0], vec![1], vec![2]]);
                    drop(star);
                    p.finalize().unwrap();
                })
            })
            .collect();
        for p in pes {
            p.join().unwrap();
        }
    }
}
