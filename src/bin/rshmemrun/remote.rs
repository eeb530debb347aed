//! `rshmemrun --hosts`: one head launcher and one per-host launcher on every host.
//!
//! The head runs the job's star on TCP (interface: RSHMEM_BOOTSTRAP_IFNAME) and a control
//! socket, and starts `AGENT host rshmemrun --per-host -- program...` for each host (AGENT:
//! RSHMEM_LAUNCH_AGENT, default ssh). The start-up record with the job secret goes on the
//! agent's standard input, never on a command line. Each per-host launcher proves it holds the
//! secret on the control socket (the handshake of `rshmem::bootstrap::auth`), starts its host's
//! PEs, and reports over that connection, one line each:
//!
//! ```text
//! per-host -> head   hello FIRST END        its ranks
//!                    ended RANK PID STATUS  a PE ended (raw wait status)
//!                    exit PE CODE           a PE called shmem_global_exit(CODE)
//!                    nostart RANK STATUS WHY  PE RANK could not be started (WHY names the
//!                                           program and the error); the launcher leaves
//! head -> per-host   signal N               forward signal N to the PEs
//!                    stop                   stop the PEs (TERM, then KILL) and leave
//! ```
//!
//! A dropped connection ends the job on both sides: a per-host launcher that loses the head
//! stops its PEs; the head that loses a per-host launcher stops every other host. A per-host
//! launcher that finds nothing listening at the head's address gives up after REFUSED_GRACE
//! (the head has ended the job) and exits NO_HEAD, which the head reports as "never reached".

use std::io::{Read, Write};
use std::net::TcpStream;
use std::ops::Range;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use rshmem::bootstrap::hosts::{self, Assignment, Host, MAX_ASSIGNMENT};
use rshmem::bootstrap::link::{Link, Listener};
use rshmem::bootstrap::{auth, hostname, net, new_job_secret, star::StarServer};
use rshmem::sys::process;

use super::{describe, read_control, start_pes, PeEnv, FORWARDED, PENDING_SIGNALS, TERMINATING};

/// Longest control line accepted; a peer that sends more without a newline is cut off.
const MAX_LINE: usize = 512;
/// How long stopped hosts get to report and leave before their agents are killed.
const STOP_GRACE: Duration = Duration::from_secs(5);
/// How long a per-host launcher retries a head that refuses the connection. The head listens
/// before it starts any agent, so a refusal means it has ended the job (or the address is not
/// the head's from this host): waiting for the whole bootstrap timeout would only linger.
const REFUSED_GRACE: Duration = Duration::from_secs(2);
/// The exit status of a per-host launcher that never reached the head (the head says so).
const NO_HEAD: i32 = 3;

fn fail(msg: &str) -> ! {
    eprintln!("rshmemrun: {msg}");
    std::process::exit(1)
}

/// Complete lines read so far from a non-blocking connection, and why it ended if it did
/// (closed, broken, or a line too long): the lines that came before the end still count.
fn read_lines(conn: &mut TcpStream, pending: &mut Vec<u8>) -> (Vec<String>, Option<String>) {
    let mut buf = [0u8; 1024];
    let mut ended = None;
    while ended.is_none() && pending.len() <= MAX_LINE {
        match conn.read(&mut buf) {
            Ok(0) => ended = Some("the connection closed".to_string()),
            Ok(n) => pending.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => ended = Some(e.to_string()),
        }
        let mut lines = Vec::new();
        while let Some(nl) = pending.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = pending.drain(..=nl).collect();
            lines.push(String::from_utf8_lossy(&line[..nl]).into_owned());
        }
        if !lines.is_empty() || ended.is_some() {
            if ended.is_none() && pending.len() > MAX_LINE {
                ended = Some(format!("a line longer than {MAX_LINE} bytes"));
            }
            return (lines, ended);
        }
    }
    let too_long = (pending.len() > MAX_LINE).then(|| format!("a line longer than {MAX_LINE} bytes"));
    (Vec::new(), ended.or(too_long))
}

/// Writes one control line (small: the socket buffer takes it at once, or the peer is stuck).
fn send_line(conn: &mut TcpStream, line: &str) -> bool {
    let deadline = Instant::now() + Duration::from_secs(2);
    let _ = conn.set_nonblocking(false);
    let ok = auth::write_all_by(conn, format!("{line}\n").as_bytes(), deadline).is_ok();
    let _ = conn.set_nonblocking(true);
    ok
}

/// One host's per-host launcher, as the head sees it.
struct Remote {
    host: String,
    ranks: Range<usize>,
    agent: Child,
    conn: Option<TcpStream>,
    /// Its launcher connected at some point (a later loss is not "never reached").
    reached: bool,
    pending: Vec<u8>,
    /// Ranks of this host that have not ended yet.
    running: usize,
    exited: Option<std::process::ExitStatus>,
}

impl Remote {
    fn what(&self) -> String {
        match self.ranks.len() {
            1 => format!("host {} (PE {})", self.host, self.ranks.start),
            _ => format!("host {} (PEs {}-{})", self.host, self.ranks.start, self.ranks.end - 1),
        }
    }
}

/// The head launcher; never returns.
/// `options`: launcher options the per-host launchers get too (binding).
pub fn head(host_list: &[Host], npes: Option<usize>, program: &[String], options: &[String], timeout_s: f64) -> ! {
    let placement = hosts::place(host_list, npes).unwrap_or_else(|e| {
        eprintln!("rshmemrun: {e}");
        std::process::exit(2)
    });
    for (host, ranks) in &placement {
        if let Err(e) = super::check_pe_count(ranks.len(), None) {
            eprintln!("rshmemrun: host {host}: {e}");
            std::process::exit(2);
        }
    }
    let npes = placement.last().map(|(_, r)| r.end).unwrap_or(0);
    let timeout = Duration::from_secs_f64(timeout_s);
    let iface = net::chosen_interface().unwrap_or_else(|e| fail(&format!("--hosts: {e}")));
    let secret = new_job_secret().unwrap_or_else(|e| fail(&e.message));
    let mut server = StarServer::bind(npes, secret).unwrap_or_else(|e| fail(&e.message));
    let star = server.listen_tcp(iface.addr).unwrap_or_else(|e| fail(&e.message));
    let (control, control_addr) =
        Listener::tcp(iface.addr).unwrap_or_else(|e| fail(&format!("listening for per-host launchers on {}: {e}", iface.addr)));
    let star_thread = std::thread::spawn(move || -> Result<(), rshmem::bootstrap::star::SessionError> {
        server.serve(timeout)?;
        loop {
            server.serve_next(timeout)?;
        }
    });
    let agent_words: Vec<String> = rshmem::env::current(rshmem::env::LAUNCH_AGENT).1.split_whitespace().map(String::from).collect();
    let agent_words = if agent_words.is_empty() { vec!["ssh".to_string()] } else { agent_words };
    let agent_text = agent_words.join(" ");
    let exe = std::env::current_exe().unwrap_or_else(|e| fail(&format!("cannot tell where rshmemrun itself is: {e}")));
    let cwd = std::env::current_dir().map(|d| d.to_string_lossy().into_owned()).unwrap_or_else(|_| "/".into());
    // The PEs' settings travel with the start-up record (ssh does not pass the environment).
    let env: Vec<(String, String)> = std::env::vars()
        .filter(|(k, _)| {
            // FI_*: libfabric's own settings (FI_PROVIDER, FI_TCP_IFACE, ...) reach every host too.
            (k.starts_with("RSHMEM_")
                || k.starts_with("SHMEM_")
                || k.starts_with("NVSHMEM_")
                || k.starts_with("FI_")
                || k == "LD_LIBRARY_PATH")
                && ![
                    rshmem::bootstrap::ENV_SECRET,
                    rshmem::bootstrap::ENV_STAR,
                    rshmem::bootstrap::ENV_RANK,
                    rshmem::bootstrap::ENV_SIZE,
                    rshmem::bootstrap::ENV_CONTROL_FD,
                ]
                .contains(&k.as_str())
        })
        .collect();
    process::set_signal_handler(&FORWARDED, super::on_signal);
    let head_pid = process::getpid();
    let mut remotes = Vec::new();
    for (host, ranks) in &placement {
        let mut words: Vec<String> = agent_words[1..].to_vec();
        words.push(host.clone());
        words.extend(
            std::iter::once(exe.to_string_lossy().into_owned())
                .chain(options.iter().cloned())
                .chain(["--per-host".into(), "--".into()])
                .chain(program.iter().cloned())
                .map(|w| hosts::shell_quote(&w)),
        );
        let mut cmd = Command::new(&agent_words[0]);
        cmd.args(&words).stdin(Stdio::piped());
        super::dies_with_launcher(&mut cmd, head_pid);
        let mut agent = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => {
                eprintln!("rshmemrun: cannot run the launch agent `{agent_text}` for host {host}: {e}; set RSHMEM_LAUNCH_AGENT to a command that runs `AGENT host command...`");
                stop_remotes(&mut remotes);
                std::process::exit(1);
            }
        };
        let record = Assignment {
            host: host.clone(),
            secret_hex: auth::to_hex(&secret),
            star: star.clone(),
            control: control_addr.clone(),
            npes,
            ranks: ranks.clone(),
            cwd: cwd.clone(),
            env: env.clone(),
        };
        if let Some(mut stdin) = agent.stdin.take() {
            // An agent that exits at once (unknown host) closes the pipe: noticed below.
            let _ = stdin.write_all(record.encode().as_bytes());
        }
        remotes.push(Remote {
            host: host.clone(),
            ranks: ranks.clone(),
            agent,
            conn: None,
            reached: false,
            pending: Vec::new(),
            running: ranks.len(),
            exited: None,
        });
    }
    let status = watch(&mut remotes, &control, &control_addr, &secret, timeout, &agent_text);
    if status != 0 {
        if let Some(Ok(Err(e))) = star_thread.is_finished().then(|| star_thread.join()) {
            if !e.pe_left {
                eprintln!("rshmemrun: rendezvous: {}", e.message);
            }
        }
    }
    std::process::exit(status)
}

/// Handshakes of connecting per-host launchers, each in a thread with its own deadline (a
/// stranger that connects and stays silent delays nobody): (first rank, stream).
fn admit(conn: Link, secret: auth::Secret, tx: mpsc::Sender<(usize, TcpStream)>) {
    let Link::Tcp(mut stream) = conn else { return };
    std::thread::spawn(move || {
        let deadline = Instant::now() + Duration::from_secs(10);
        let _ = stream.set_nonblocking(false);
        if let Err(e) = auth::serve(&mut stream, &secret, deadline) {
            let from = stream.peer_addr().map(|a| a.to_string()).unwrap_or_default();
            rshmem::log::info(&format!("rshmemrun: refused a control connection from {from}: {e}"));
            return;
        }
        let mut line = Vec::new();
        let mut byte = [0u8; 1];
        while line.len() < MAX_LINE && auth::read_exact_by(&mut stream, &mut byte, deadline).is_ok() && byte[0] != b'\n' {
            line.push(byte[0]);
        }
        let text = String::from_utf8_lossy(&line).into_owned();
        if let ["hello", first, _] = text.split_whitespace().collect::<Vec<_>>()[..] {
            if let Ok(first) = first.parse() {
                let _ = stream.set_nonblocking(true);
                let _ = tx.send((first, stream));
            }
        }
    });
}

/// Runs the job to its end; returns the exit status.
fn watch(remotes: &mut [Remote], control: &Listener, control_addr: &str, secret: &auth::Secret, timeout: Duration, agent: &str) -> i32 {
    let started = Instant::now();
    let (tx, arrivals) = mpsc::channel();
    let mut ending_signals = 0;
    // The first ending signal forwarded: the job's status is then 128+N, whatever the PEs it
    // ended report (one may see another go first and exit 1 for that).
    let mut ended_by: Option<i32> = None;
    loop {
        while let Ok(Some(conn)) = control.accept() {
            admit(conn, *secret, tx.clone());
        }
        while let Ok((first, stream)) = arrivals.try_recv() {
            if let Some(r) = remotes.iter_mut().find(|r| r.ranks.start == first && r.conn.is_none()) {
                r.conn = Some(stream);
                r.reached = true;
            }
        }
        let sigs = PENDING_SIGNALS.swap(0, Ordering::SeqCst);
        for sig in FORWARDED.into_iter().filter(|s| sigs & (1u64 << *s) != 0) {
            for r in remotes.iter_mut() {
                if let Some(c) = r.conn.as_mut() {
                    send_line(c, &format!("signal {sig}"));
                }
            }
            if TERMINATING.contains(&sig) {
                ending_signals += 1;
                ended_by.get_or_insert(sig);
                if ending_signals > 1 {
                    eprintln!("rshmemrun: {} received again; stopping all PEs on every host", process::signal_name(sig));
                    stop_remotes(remotes);
                    return 128 + sig;
                }
                // A host whose launcher has not connected yet cannot be told: the signal would
                // be lost and the job would go on starting. End it now, naming those hosts.
                let starting: Vec<String> = remotes.iter().filter(|r| !r.reached && r.running > 0).map(Remote::what).collect();
                if !starting.is_empty() {
                    eprintln!(
                        "rshmemrun: {} received while {} had not started yet; stopping all PEs on every host",
                        process::signal_name(sig),
                        starting.join(", ")
                    );
                    stop_remotes(remotes);
                    return 128 + sig;
                }
            }
        }
        for i in 0..remotes.len() {
            if let Some(status) = poll_remote(remotes, i, control_addr, timeout, started, agent) {
                // The cause may be a host that never answered: the PEs waiting for it time
                // out after `timeout`. A job that failed sooner has hosts still on their way.
                let waited = started.elapsed() >= timeout / 2;
                for r in remotes.iter().filter(|r| waited && !r.reached && r.running > 0 && r.exited.is_none()) {
                    eprintln!(
                        "rshmemrun: the per-host launcher of {} never reached this one at {control_addr}; check that the host can reach that address (RSHMEM_BOOTSTRAP_IFNAME chooses the interface)",
                        r.what()
                    );
                }
                stop_remotes(remotes);
                return ended_by.map_or(status, |sig| 128 + sig);
            }
        }
        if remotes.iter().all(|r| r.running == 0) {
            stop_remotes(remotes);
            return ended_by.map_or(0, |sig| 128 + sig);
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Reads what host `i` reported; Some(status) when the job must end.
fn poll_remote(remotes: &mut [Remote], i: usize, control_addr: &str, timeout: Duration, started: Instant, agent: &str) -> Option<i32> {
    let r = &mut remotes[i];
    if r.exited.is_none() {
        r.exited = r.agent.try_wait().ok().flatten();
    }
    let Some(conn) = r.conn.as_mut() else {
        if r.running == 0 {
            return None;
        }
        if let Some(st) = r.exited.filter(|st| st.code() != Some(NO_HEAD)) {
            eprintln!(
                "rshmemrun: could not start the PEs of {}: `{agent} {}` {} before rshmemrun ran there; check that `{agent} {} true` works and that rshmemrun is at the same path there",
                r.what(),
                r.host,
                exit_words(st),
                r.host
            );
            return Some(1);
        }
        if r.exited.is_some() {
            eprintln!(
                "rshmemrun: the per-host launcher of {} never reached this one at {control_addr}; check that the host can reach that address (RSHMEM_BOOTSTRAP_IFNAME chooses the interface)",
                r.what()
            );
            return Some(1);
        }
        if started.elapsed() > timeout {
            eprintln!(
                "rshmemrun: no per-host launcher of {} reached this one at {control_addr} within {:.0} s (started through `{agent} {}`); \
                 check that the host is reachable and can reach this host there (RSHMEM_BOOTSTRAP_IFNAME chooses the interface), or raise RSHMEM_BOOTSTRAP_TIMEOUT",
                r.what(),
                timeout.as_secs_f64(),
                r.host
            );
            return Some(1);
        }
        return None;
    };
    let (lines, ended) = read_lines(conn, &mut r.pending);
    if let Some(status) = handle_lines(remotes, i, lines) {
        return Some(status);
    }
    let r = &mut remotes[i];
    match ended {
        Some(_) if r.running == 0 => r.conn = None,
        Some(why) => {
            // Give the agent a moment to be reaped, so its status can be told.
            std::thread::sleep(Duration::from_millis(50));
            let agent_state = match r.exited.or_else(|| r.agent.try_wait().ok().flatten()) {
                Some(st) => format!("; its agent {}", exit_words(st)),
                None => String::new(),
            };
            eprintln!("rshmemrun: lost the per-host launcher of {} ({why}{agent_state}); stopping all PEs", r.what());
            r.conn = None;
            return Some(1);
        }
        None => {}
    }
    None
}

/// Acts on what host `i` reported; Some(status) when the job must end.
fn handle_lines(remotes: &mut [Remote], i: usize, lines: Vec<String>) -> Option<i32> {
    let others = |remotes: &[Remote]| remotes.iter().map(|r| r.running).sum::<usize>();
    for line in lines {
        match line.split_whitespace().collect::<Vec<_>>()[..] {
            ["ended", rank, pid, raw] => {
                let (Ok(rank), Ok(raw)) = (rank.parse::<usize>(), raw.parse::<i32>()) else { continue };
                remotes[i].running = remotes[i].running.saturating_sub(1);
                let (what, code) = describe(raw);
                if code != 0 {
                    let host = remotes[i].host.clone();
                    match others(remotes) {
                        0 => eprintln!("rshmemrun: PE {rank} (pid {pid}) on host {host} {what}"),
                        n => {
                            eprintln!("rshmemrun: PE {rank} (pid {pid}) on host {host} {what}; stopping the other {n} PE(s) on every host")
                        }
                    }
                    return Some(code);
                }
            }
            ["nostart", rank, status, ..] => {
                let why = line.splitn(4, ' ').nth(3).unwrap_or("").to_string();
                remotes[i].running = 0;
                eprintln!(
                    "rshmemrun: cannot start PE {rank} on host {}: {why}; the program must exist at that path on every host; stopping all PEs on every host",
                    remotes[i].host
                );
                return Some(status.parse().unwrap_or(127));
            }
            ["exit", pe, code] => {
                let code = code.parse().unwrap_or(1);
                eprintln!(
                    "rshmemrun: PE {pe} on host {} ended the job (shmem_global_exit({code}), or an error reported above); stopping all PEs on every host",
                    remotes[i].host
                );
                return Some(code);
            }
            _ => {}
        }
    }
    None
}

/// `text` cut to at most `max` bytes (at a character boundary), so a control line stays short.
fn clip(text: &str, max: usize) -> &str {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

fn exit_words(st: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (st.code(), st.signal()) {
        (Some(c), _) => format!("exited with status {c}"),
        (_, Some(s)) => format!("was killed by signal {s} ({})", process::signal_name(s)),
        _ => "ended".into(),
    }
}

/// Tells every host to stop, waits (bounded) for the agents to leave, then kills those left.
/// An agent whose rshmemrun never connected is killed at once (nothing there to tell).
fn stop_remotes(remotes: &mut [Remote]) {
    for r in remotes.iter_mut() {
        match r.conn.as_mut() {
            Some(c) => {
                send_line(c, "stop");
            }
            None => {
                let _ = r.agent.kill();
            }
        }
    }
    let deadline = Instant::now() + STOP_GRACE;
    while Instant::now() < deadline && remotes.iter_mut().any(|r| r.agent.try_wait().ok().flatten().is_none()) {
        std::thread::sleep(Duration::from_millis(5));
    }
    for r in remotes.iter_mut() {
        if r.agent.try_wait().ok().flatten().is_none() {
            let _ = r.agent.kill();
            let _ = r.agent.wait();
        }
    }
}

/// Reads the start-up record from standard input (bounded in size; the head closes it).
fn read_assignment() -> Result<Assignment, String> {
    let mut text = Vec::new();
    std::io::stdin().take(MAX_ASSIGNMENT as u64 + 1).read_to_end(&mut text).map_err(|e| format!("reading standard input: {e}"))?;
    if text.len() > MAX_ASSIGNMENT {
        return Err(format!("the start-up record on standard input exceeds {MAX_ASSIGNMENT} bytes"));
    }
    Assignment::decode(&String::from_utf8_lossy(&text))
}

/// The per-host launcher: starts this host's PEs and reports to the head; never returns.
pub fn per_host(program: &[String], bind: Option<super::bind::BindTo>, report_bindings: bool, timeout_s: f64) -> ! {
    let here = hostname();
    let fail_here = |msg: String| -> ! {
        eprintln!("rshmemrun (host {here}): {msg}");
        std::process::exit(1)
    };
    let no_head = |msg: String| -> ! {
        eprintln!("rshmemrun (host {here}): {msg}");
        std::process::exit(NO_HEAD)
    };
    let a = read_assignment().unwrap_or_else(|e| fail_here(e));
    let secret = auth::from_hex(&a.secret_hex).unwrap_or_else(|| fail_here("the start-up record carries no valid job secret".into()));
    if std::env::set_current_dir(&a.cwd).is_err() {
        eprintln!(
            "rshmemrun (host {here}): the working directory {} does not exist here; the PEs start in {}",
            a.cwd,
            std::env::current_dir().map(|d| d.display().to_string()).unwrap_or_default()
        );
    }
    let deadline = Instant::now() + Duration::from_secs_f64(timeout_s);
    let mut refused_since = None;
    let mut conn = loop {
        match Link::connect(&a.control, Duration::from_secs(2)) {
            Ok(Link::Tcp(s)) => break s,
            Ok(Link::Unix(_)) => fail_here(format!("the head launcher's address {} is not TCP", a.control)),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused && refused_since.get_or_insert_with(Instant::now).elapsed() > REFUSED_GRACE => no_head(format!(
                "nothing listens at {}, the head launcher's address ({e}): it has ended the job, or that address does not reach the head from this host (the head chose it with RSHMEM_BOOTSTRAP_IFNAME); not starting this host's PEs",
                a.control
            )),
            Err(e) if Instant::now() > deadline => no_head(format!(
                "cannot reach the head launcher at {} within {timeout_s:.0} s: {e}; the head chose that address with RSHMEM_BOOTSTRAP_IFNAME (set it there to an interface this host can reach)",
                a.control
            )),
            Err(_) => std::thread::sleep(Duration::from_millis(50)),
        }
    };
    match auth::join(&mut conn, &secret, deadline) {
        Ok(()) => {}
        Err(e @ (auth::AuthError::BadProof | auth::AuthError::Refused)) => {
            fail_here(format!("the process at {} is not this job's head launcher: {e}", a.control))
        }
        Err(e) => fail_here(format!("lost the head launcher at {} during the handshake ({e}); it has probably ended the job", a.control)),
    }
    if !send_line(&mut conn, &format!("hello {} {}", a.ranks.start, a.ranks.end)) {
        fail_here("lost the head launcher while starting".into());
    }
    let _ = conn.set_nonblocking(true);
    let (control_read, control_write) = super::control_pipe();
    process::set_signal_handler(&FORWARDED, super::on_signal);
    let env = PeEnv {
        npes: a.npes,
        star: &a.star,
        secret_hex: &a.secret_hex,
        control_fd: std::os::fd::AsRawFd::as_raw_fd(&control_write),
        extra: &a.env,
        bind,
        report_bindings,
    };
    let mut job = start_pes(program, a.ranks.clone(), &env).unwrap_or_else(|f| {
        // The head names this host and the program to the user, and ends the job on every
        // host at once; without the connection, say it here.
        if !send_line(&mut conn, &format!("nostart {} {} {}", f.rank, f.status, clip(&f.why, MAX_LINE - 40))) {
            eprintln!("rshmemrun (host {here}): cannot start PE {}: {}", f.rank, f.why);
        }
        std::process::exit(f.status)
    });
    drop(control_write);
    let mut control = std::fs::File::from(control_read);
    let (mut pending_pipe, mut pending_head) = (String::new(), Vec::new());
    loop {
        // A PE writes its global-exit line before it exits: read the pipe after reaping, and
        // report the global exit first.
        let ended = job.reap();
        if let Some((pe, code)) = read_control(&mut control, &mut pending_pipe) {
            send_line(&mut conn, &format!("exit {pe} {code}"));
        }
        for (rank, pid, raw) in ended {
            send_line(&mut conn, &format!("ended {rank} {pid} {raw}"));
        }
        let sigs = PENDING_SIGNALS.swap(0, Ordering::SeqCst);
        for sig in FORWARDED.into_iter().filter(|s| sigs & (1u64 << *s) != 0) {
            job.signal_all(sig);
        }
        if !job.any_alive() {
            std::process::exit(0);
        }
        let (lines, ended) = read_lines(&mut conn, &mut pending_head);
        for line in lines {
            match line.split_whitespace().collect::<Vec<_>>()[..] {
                ["signal", n] => {
                    if let Some(sig) = n.parse::<i32>().ok().filter(|s| FORWARDED.contains(s)) {
                        job.signal_all(sig);
                    }
                }
                ["stop"] => {
                    job.stop_all();
                    std::process::exit(0);
                }
                _ => {}
            }
        }
        if let Some(why) = ended {
            let left = job.alive.iter().filter(|a| **a).count();
            eprintln!("rshmemrun (host {here}): lost the head launcher ({why}); stopping this host's {left} PE(s)");
            job.stop_all();
            std::process::exit(1);
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}
