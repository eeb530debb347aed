//! How PEs find each other and exchange what they need at start-up.
//!
//! Every launcher ends in the same place: a *star* rendezvous (one server, every PE a client,
//! over an abstract Unix socket so local PEs can also pass file descriptors). What differs is
//! how a PE learns its rank, the job size and the star's address:
//! - `rshmemrun` puts them in the environment and runs the star itself;
//! - under PMI-1 (MPICH hydra, `PMI_FD`) or PMIx (Open MPI `mpirun`/`oshrun`) rank 0 starts the
//!   star in a thread and publishes its address through the launcher's key-value store;
//! - a unique id (`nvshmemx_get_uniqueid`) carries the star's name and secret itself;
//! - alone, a program is a single PE.
//!
//! Every connection to a star proves it belongs to the job ([`auth`]): the star's address is
//! public, the job secret is not. It reaches PEs only through `rshmemrun`'s environment, the
//! launcher's key-value store, or the unique id.

pub mod auth;
pub mod hier;
pub mod hosts;
pub mod link;
pub mod net;
pub mod pmi1;
pub mod pmix;
pub mod star;
pub mod uid;

use std::os::fd::{OwnedFd, RawFd};

use crate::env::Config;
use crate::error::{Error, Result};

/// What the runtime needs from a bootstrap: who am I, how many are we, and collective exchange.
/// All operations are collective over every PE, and are used only at init and finalize.
pub trait Bootstrap: Send + Sync {
    fn rank(&self) -> usize;
    fn size(&self) -> usize;
    /// Each PE contributes `mine`; every PE receives all contributions in rank order.
    fn allgather(&self, mine: &[u8]) -> Result<Vec<Vec<u8>>>;
    /// Each PE contributes descriptors; every PE receives duplicates of those of the PEs on its
    /// own host ([`local_pes`](Self::local_pes)), by rank; the entries of other hosts' PEs are
    /// empty (descriptors never leave a host).
    fn allgather_fds(&self, mine: &[RawFd]) -> Result<Vec<Vec<OwnedFd>>>;
    /// The PEs on this PE's host (which share memory with it), in rank order.
    fn local_pes(&self) -> Vec<usize> {
        (0..self.size()).collect()
    }
    /// How many hosts the job spans.
    fn hosts(&self) -> usize {
        1
    }
    /// Whether this PE's link to the rendezvous can pass descriptors (a Unix socket).
    fn carries_fds(&self) -> bool {
        true
    }
    fn barrier(&self) -> Result<()> {
        self.allgather(&[]).map(|_| ())
    }
    /// Tells the launcher (if any) that this PE called shmem_global_exit(status).
    fn report_global_exit(&self, _status: i32) {}
    /// Which launcher this came from, for rshmem-info and logs.
    fn name(&self) -> &'static str;
}

/// A job of one PE: every collective is trivial.
pub struct Single;

impl Bootstrap for Single {
    fn rank(&self) -> usize {
        0
    }
    fn size(&self) -> usize {
        1
    }
    fn allgather(&self, mine: &[u8]) -> Result<Vec<Vec<u8>>> {
        Ok(vec![mine.to_vec()])
    }
    fn allgather_fds(&self, mine: &[RawFd]) -> Result<Vec<Vec<OwnedFd>>> {
        let dup = |fd: &RawFd| {
            // SAFETY: the caller passes descriptors it owns and keeps open for this call.
            let borrowed = unsafe { std::os::fd::BorrowedFd::borrow_raw(*fd) };
            borrowed.try_clone_to_owned().map_err(|e| Error::system("shmem_init", "dup", e))
        };
        Ok(vec![mine.iter().map(dup).collect::<Result<_>>()?])
    }
    fn name(&self) -> &'static str {
        "single"
    }
}

/// Environment variables `rshmemrun` gives each PE.
pub const ENV_RANK: &str = "RSHMEM_RANK";
pub const ENV_SIZE: &str = "RSHMEM_NPES";
pub const ENV_STAR: &str = "RSHMEM_STAR_ADDR";
pub const ENV_CONTROL_FD: &str = "RSHMEM_CONTROL_FD";
/// How many CPUs the launcher's PEs share on this host: a PE it bound to its own share of
/// them sees only that share in its affinity, yet waits for peers running beside it.
pub const ENV_CPUS: &str = "RSHMEM_LAUNCH_CPUS";
/// The job secret (hex) that proves a PE belongs to the job; see [`auth`].
pub const ENV_SECRET: &str = "RSHMEM_JOB_SECRET";

/// A fresh job secret, or the error that says why start-up cannot be made safe.
pub fn new_job_secret() -> Result<auth::Secret> {
    auth::new_secret().map_err(|e| {
        Error::bootstrap(format!(
            "bootstrap: no randomness for the job secret (getrandom: {e}); refusing to start a job anybody could join"
        ))
    })
}

/// The control pipe rshmemrun gave this PE: kept from the PE's own children (close-on-exec),
/// which could otherwise end the job with any status.
fn control_fd() -> Option<RawFd> {
    let fd = env_usize(ENV_CONTROL_FD)? as RawFd;
    // SAFETY: F_SETFD only changes a flag of the descriptor; a wrong number fails harmlessly.
    (unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) } == 0).then_some(fd)
}

fn env_usize(name: &str) -> Option<usize> {
    std::env::var(name).ok()?.trim().parse().ok()
}

/// Picks the bootstrap for this process (see the module comment) and connects it.
/// srun's count of the nodes this job step runs on.
const ENV_SLURM_STEP_NODES: &str = "SLURM_STEP_NUM_NODES";

/// Whether the launcher says the job spans hosts before any PE is heard from: rshmemrun gives
/// the PEs of a job over several hosts a TCP rendezvous, srun the step's node count.
fn launcher_spans_hosts() -> bool {
    let tcp_star = std::env::var(ENV_STAR).is_ok_and(|a| a.starts_with(net::TCP_PREFIX));
    tcp_star || env_usize(ENV_SLURM_STEP_NODES).is_some_and(|n| n > 1)
}

pub fn connect(cfg: &Config) -> Result<Box<dyn Bootstrap>> {
    if launcher_spans_hosts() {
        // The fabric transport will be needed: its library loads while the PEs meet.
        crate::fabric::preload();
    }
    let timeout = std::time::Duration::from_secs_f64(cfg.bootstrap_timeout_s);
    let want = cfg.bootstrap.as_str();
    let launched = std::env::var_os(ENV_STAR).is_some();
    if want == "rshmemrun" || (want == "auto" && launched) {
        let (Some(rank), Some(size), Ok(addr)) = (env_usize(ENV_RANK), env_usize(ENV_SIZE), std::env::var(ENV_STAR)) else {
            return Err(Error::bootstrap(format!(
                "bootstrap 'rshmemrun' was chosen but {ENV_RANK}, {ENV_SIZE} or {ENV_STAR} is missing or malformed; start the program with `rshmemrun -n N prog`"
            )));
        };
        let secret = std::env::var(ENV_SECRET).ok().and_then(|s| auth::from_hex(&s)).ok_or_else(|| {
            Error::bootstrap(format!(
                "bootstrap 'rshmemrun' was chosen but {ENV_SECRET} is missing or malformed, so this process cannot prove it belongs to the job; \
                 start the program with `rshmemrun -n N prog` (of the same rshmem version)"
            ))
        })?;
        let client = star::StarClient::connect(&addr, rank, size, timeout, control_fd(), &secret)?;
        return hier::over(Box::new(client.named("rshmemrun")), &secret, timeout);
    }
    if want == "pmi" || (want == "auto" && pmi1::detected()) {
        return pmi1::bootstrap(timeout);
    }
    if want == "pmix" || (want == "auto" && pmix::detected()) {
        return pmix::bootstrap(timeout);
    }
    if want == "mpi" {
        let (rank, size, id) = crate::runtime::gpu::mpi::uniqueid_over_world()
            .map_err(|e| Error::bootstrap(format!("bootstrap MPI (NVSHMEM_BOOTSTRAP=MPI): {}", e.message)))?;
        return uid::UidStar::join(&id, rank, size, timeout);
    }
    if want == "uid" {
        return Err(Error::bootstrap(
            "bootstrap UID was chosen, but shmem_init/nvshmem_init have no unique id: call nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID, &attr) \
             with the id from nvshmemx_get_uniqueid, or choose another bootstrap",
        ));
    }
    if want == "auto" {
        if let Some(e) = pmi1::srun_without_pmi() {
            return Err(e);
        }
    }
    if want == "single" || want == "auto" {
        return Ok(Box::new(Single));
    }
    Err(Error::bootstrap(format!("unknown bootstrap {want:?}")))
}

/// A launcher's key-value store, as far as the star rendezvous needs one: rank 0 publishes one
/// value, everyone waits for everyone (which also makes the value visible), everyone reads it.
pub trait KeyValueStore {
    fn put(&mut self, key: &str, value: &str) -> Result<()>;
    /// Collective; returns when every PE has called it (data put before it is then visible).
    fn fence(&mut self) -> Result<()>;
    fn get_from_rank0(&mut self, key: &str) -> Result<String>;
}

/// How many times this process has joined a job star (shmem_init may be called again after
/// shmem_finalize; every PE does it the same number of times, so keys stay in step).
static STAR_EPOCH: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

pub fn next_star_epoch() -> u32 {
    STAR_EPOCH.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// This host's name, to tell a PE on another host why it cannot join.
pub fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most buf.len() bytes into buf.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return "unknown-host".into();
    }
    let n = buf.iter().position(|b| *b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

/// The star of a job started by another launcher: the server runs in a thread of rank 0.
pub struct JobStar {
    client: Option<star::StarClient>,
    server: Option<std::thread::JoinHandle<Result<Vec<i32>>>>,
    timeout: std::time::Duration,
    /// Tells the launcher that this PE called shmem_global_exit (so it ends the whole job).
    on_global_exit: Option<fn(i32)>,
    secret: auth::Secret,
}

impl JobStar {
    /// Collective over the job: rank 0 makes a job secret, starts the server (on an abstract
    /// Unix name, and on TCP when this host has a network interface for it: see [`net`]) and
    /// publishes `host/address/secret/tcp-address/node` under `key` (the launcher's store is
    /// private to the job); after the fence every rank reads it and connects: over Unix from
    /// PE 0's host (same node identity), over TCP from any other.
    pub fn join(
        kvs: &mut dyn KeyValueStore,
        key: &str,
        rank: usize,
        size: usize,
        timeout: std::time::Duration,
        launcher: &'static str,
    ) -> Result<JobStar> {
        let here = hostname();
        let me = crate::transport::node::NodeId::current();
        let server = start_star_for_job(rank, size, timeout)?;
        if let Some((addr, secret, tcp, _)) = &server {
            let tcp = tcp.as_deref().unwrap_or("-");
            kvs.put(key, &format!("{here}/{addr}/{}/{tcp}/{}", auth::to_hex(secret), auth::to_hex_bytes(&me.to_bytes())))?;
        }
        kvs.fence()?;
        let value = kvs.get_from_rank0(key)?;
        let parts: Vec<&str> = value.split('/').collect();
        let node = |hex: &str| auth::from_hex_bytes(hex).and_then(|b| crate::transport::node::NodeId::from_bytes(&b));
        let (host, address, secret, tcp, node) = match parts[..] {
            [host, address, secret, tcp, n] => (host, address, auth::from_hex(secret), tcp, node(n)),
            _ => (value.as_str(), "", None, "-", None),
        };
        let (Some(secret), Some(node)) = (secret, node) else {
            // Never echo the value: it holds the secret.
            return Err(Error::bootstrap(format!(
                "bootstrap ({launcher}): PE 0 published a malformed value under {key}, expected host/address/secret/tcp-address/node"
            )));
        };
        let address = if node == me {
            address
        } else if tcp != "-" {
            tcp
        } else {
            return Err(Error::bootstrap(format!(
                "bootstrap ({launcher}): PE {rank} on host {here} cannot reach PE 0's rendezvous on host {host}: that host listens on no network interface \
                 (none but loopback is up there, or RSHMEM_BOOTSTRAP_IFNAME chose none); set RSHMEM_BOOTSTRAP_IFNAME to the interface the hosts share"
            )));
        };
        let client = star::StarClient::connect(address, rank, size, timeout, None, &secret)
            .map_err(|e| Error::bootstrap(format!("{} (PE 0 runs on host {host}; launcher {launcher})", e.message)))?
            .named(launcher);
        Ok(JobStar { client: Some(client), server: server.map(|(_, _, _, h)| h), timeout, on_global_exit: None, secret })
    }

    /// Adds the per-host level when PEs span hosts (see [`hier`]).
    pub fn per_host(self) -> Result<Box<dyn Bootstrap>> {
        let (secret, timeout) = (self.secret, self.timeout);
        hier::over(Box::new(self), &secret, timeout)
    }

    /// A star joined some other way (e.g. a name every PE derives from the job id).
    pub fn from_parts(
        client: star::StarClient,
        server: Option<std::thread::JoinHandle<Result<Vec<i32>>>>,
        timeout: std::time::Duration,
        secret: auth::Secret,
    ) -> JobStar {
        JobStar { client: Some(client), server, timeout, on_global_exit: None, secret }
    }

    pub fn on_global_exit(mut self, f: fn(i32)) -> JobStar {
        self.on_global_exit = Some(f);
        self
    }

    fn client(&self) -> &star::StarClient {
        self.client.as_ref().expect("the star client lives until drop")
    }
}

impl Bootstrap for JobStar {
    fn rank(&self) -> usize {
        self.client().rank()
    }
    fn size(&self) -> usize {
        self.client().size()
    }
    fn allgather(&self, mine: &[u8]) -> Result<Vec<Vec<u8>>> {
        self.client().allgather(mine)
    }
    fn allgather_fds(&self, mine: &[RawFd]) -> Result<Vec<Vec<OwnedFd>>> {
        self.client().allgather_fds(mine)
    }
    fn carries_fds(&self) -> bool {
        self.client().carries_fds()
    }
    fn report_global_exit(&self, status: i32) {
        if let Some(f) = self.on_global_exit {
            f(status)
        }
    }
    fn name(&self) -> &'static str {
        self.client().name()
    }
}

impl Drop for JobStar {
    /// Says goodbye; rank 0 then waits (bounded) for its server to see everyone's goodbye, so
    /// that its process does not leave while peers still talk to it.
    fn drop(&mut self) {
        drop(self.client.take());
        join_server(self.server.take(), self.timeout);
    }
}

/// Waits (at most `timeout`) for a star server thread to see every PE's goodbye, so that its
/// process does not leave while peers still talk to it.
pub(crate) fn join_server<T>(server: Option<std::thread::JoinHandle<T>>, timeout: std::time::Duration) {
    let Some(h) = server else { return };
    let deadline = std::time::Instant::now() + timeout;
    while !h.is_finished() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    if h.is_finished() {
        let _ = h.join();
    }
}

/// Rank 0's half of a start through a launcher's store: make a job secret, start the star
/// server in a thread (also on TCP when a network interface is there for it) and return its
/// address, the secret and the TCP address (for the caller to publish) and the thread; every
/// rank then connects as a client.
#[allow(clippy::type_complexity)]
pub fn start_star_for_job(
    rank: usize,
    size: usize,
    timeout: std::time::Duration,
) -> Result<Option<(String, auth::Secret, Option<String>, std::thread::JoinHandle<Result<Vec<i32>>>)>> {
    if rank != 0 {
        return Ok(None);
    }
    let secret = new_job_secret()?;
    let mut server = star::StarServer::bind(size, secret)?;
    let tcp = match net::chosen_interface() {
        Ok(iface) => Some(server.listen_tcp(iface.addr)?),
        // Asked for by name and not there: say so now, on every start.
        Err(why) if !crate::env::current(crate::env::BOOTSTRAP_IFNAME).1.trim().is_empty() => {
            return Err(Error::bootstrap(format!("bootstrap: {why}")))
        }
        Err(_) => None,
    };
    let (address, thread) = serve_in_thread(server, timeout)?;
    Ok(Some((address, secret, tcp, thread)))
}

pub(crate) fn serve_in_thread(
    server: star::StarServer,
    timeout: std::time::Duration,
) -> Result<(String, std::thread::JoinHandle<Result<Vec<i32>>>)> {
    let addr = server.address().to_string();
    let handle = std::thread::Builder::new()
        .name("rshmem-star".into())
        .spawn(move || {
            let r = server.serve(timeout).map_err(Error::from);
            if let Err(e) = &r {
                eprintln!("rshmem: bootstrap server: {e}");
            }
            r
        })
        .map_err(|e| Error::system("shmem_init", "spawning the bootstrap thread", e))?;
    Ok((addr, handle))
}

/// Called once at process exit (after the implicit shmem_finalize): closes the sessions with
/// launchers that expect a goodbye (PMI-1 finalize, PMIx_Finalize).
pub fn at_exit() {
    pmi1::finalize_session();
    pmix::finalize_session();
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// A store whose rank 0 lives elsewhere: it returns a fixed value.
    struct Fixed(String);

    impl KeyValueStore for Fixed {
        fn put(&mut self, _key: &str, _value: &str) -> Result<()> {
            Ok(())
        }
        fn fence(&mut self) -> Result<()> {
            Ok(())
        }
        fn get_from_rank0(&mut self, _key: &str) -> Result<String> {
            Ok(self.0.clone())
        }
    }

    #[test]
    fn the_launchers_variables_are_known() {
        for v in [ENV_RANK, ENV_SIZE, ENV_STAR, ENV_CONTROL_FD, ENV_SECRET, ENV_CPUS] {
            assert!(crate::env::LAUNCHER_VARS.contains(&v), "{v} is missing from crate::env::LAUNCHER_VARS");
        }
    }

    #[test]
    fn choosing_uid_without_an_id_says_how_to_use_it() {
        let cfg = crate::env::Config { bootstrap: "uid".into(), ..crate::env::Config::from_env().unwrap() };
        let e = connect(&cfg).err().unwrap();
        assert!(e.message.contains("nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID"), "{}", e.message);
    }

    #[test]
    fn choosing_mpi_without_mpi_says_so() {
        let cfg = crate::env::Config { bootstrap: "mpi".into(), ..crate::env::Config::from_env().unwrap() };
        let e = connect(&cfg).err().unwrap();
        assert!(e.message.contains("NVSHMEM_BOOTSTRAP=MPI"), "{}", e.message);
        assert!(e.message.contains("no MPI library is loaded"), "{}", e.message);
    }

    /// What PE 0 publishes, for a node `node` and TCP address `tcp`.
    fn published(address: &str, tcp: &str, node: &crate::transport::node::NodeId) -> String {
        format!("{}/{address}/{}/{tcp}/{}", node.hostname, "ab".repeat(32), auth::to_hex_bytes(&node.to_bytes()))
    }

    fn elsewhere() -> crate::transport::node::NodeId {
        let mut n = crate::transport::node::NodeId::current();
        n.hostname = "some-other-host.example".into();
        n
    }

    #[test]
    fn a_pe_on_another_host_without_tcp_is_told_the_fix() {
        let mut kvs = Fixed(published("rshmem-1-0", "-", &elsewhere()));
        let e = JobStar::join(&mut kvs, "k", 1, 2, Duration::from_secs(5), "pmi-1").err().unwrap();
        assert!(e.message.contains("on host some-other-host.example"), "{}", e.message);
        assert!(e.message.contains("set RSHMEM_BOOTSTRAP_IFNAME"), "{}", e.message);
    }

    #[test]
    fn a_pe_on_another_host_goes_over_tcp_and_names_what_it_could_not_reach() {
        // Port 1 on loopback: nobody listens, so the PE retries until its timeout.
        let mut kvs = Fixed(published("rshmem-1-0", "tcp:127.0.0.1:1", &elsewhere()));
        let t = std::time::Instant::now();
        let e = JobStar::join(&mut kvs, "k", 1, 2, Duration::from_millis(300), "pmix").err().unwrap();
        assert!(e.message.contains("could not reach the rendezvous at tcp:127.0.0.1:1"), "{}", e.message);
        assert!(e.message.contains("PE 0 runs on host some-other-host.example"), "{}", e.message);
        assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
    }

    #[test]
    fn an_unreachable_rendezvous_on_this_host_is_named() {
        let name = format!("rshmem-nobody-listens-{}", std::process::id());
        let mut kvs = Fixed(published(&name, "-", &crate::transport::node::NodeId::current()));
        let e = JobStar::join(&mut kvs, "k", 1, 2, Duration::from_millis(200), "pmix").err().unwrap();
        assert!(e.message.contains(&format!("could not reach the rendezvous at @{name}")), "{}", e.message);
    }

    #[test]
    fn a_malformed_value_is_named() {
        let mut kvs = Fixed("no-slash".into());
        let e = JobStar::join(&mut kvs, "rshmem-star-0", 1, 2, Duration::from_secs(5), "pmi-1").err().unwrap();
        assert!(e.message.contains("malformed value under rshmem-star-0"), "{}", e.message);
        let mut kvs = Fixed(format!("{}/addr/{}/-/00", hostname(), "zz".repeat(32)));
        let e = JobStar::join(&mut kvs, "rshmem-star-0", 1, 2, Duration::from_secs(5), "pmi-1").err().unwrap();
        assert!(e.message.contains("expected host/address/secret/tcp-address/node"), "{}", e.message);
        assert!(!e.message.contains("zzzz"), "the message echoes the secret: {}", e.message);
    }
}
