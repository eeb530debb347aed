//! The fabric layer across two namespaced "hosts" (scripts/netns-hosts.sh): two processes,
//! each in its own network and UTS namespace, exchange endpoint addresses and region keys
//! through files, and one does RMA and atomics on the other's registered memory over
//! tcp;ofi_rxm on 10.77.0.0/24; both check the data. Needs root (CI is root) and libfabric;
//! skipped, with the reason, otherwise.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use rshmem::fabric::{AtomicOp, Fabric, Library, RemoteRegion, Settings};

const PREFIX: &str = "rsft";
const WORDS: usize = 8192;

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/netns-hosts.sh")
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

/// Waits for `path` to exist with a complete line, for up to 60 s.
fn wait_file(path: &Path) -> String {
    let start = Instant::now();
    loop {
        if let Ok(s) = std::fs::read_to_string(path) {
            if s.ends_with('\n') {
                return s.trim().to_string();
            }
        }
        assert!(start.elapsed() < Duration::from_secs(60), "waited 60 s for {}", path.display());
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn write_file(path: &Path, text: &str) {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, format!("{text}\n")).unwrap();
    std::fs::rename(tmp, path).unwrap();
}

fn settings() -> Settings {
    let mut s = Settings::from_env().unwrap();
    s.provider = Some("tcp;ofi_rxm".into());
    s
}

fn pattern(i: usize) -> u64 {
    (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x5a5a
}

/// The target: registers memory, publishes address and key, waits, then checks what arrived.
fn target(dir: &Path) {
    let f = Fabric::open(&settings()).unwrap();
    println!("target: {} on {}", f.info().describe(), std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap().trim());
    let mut mem = vec![0u64; WORDS];
    // SAFETY: mem outlives the region (dropped at the end of this function, region first).
    let region = unsafe { f.register(mem.as_mut_ptr().cast(), WORDS * 8) }.unwrap();
    write_file(&dir.join("target"), &format!("{} {}", hex(&f.address().unwrap()), hex(&region.remote().to_bytes())));
    assert_eq!(wait_file(&dir.join("done")), "done");
    // SAFETY: volatile reads of memory the peer wrote through the provider.
    let word = |i: usize| unsafe { std::ptr::read_volatile(mem.as_ptr().add(i)) };
    for i in 16..WORDS {
        assert_eq!(word(i), pattern(i), "word {i} written by the other host");
    }
    assert_eq!(word(0), 200, "fetch-add count");
    assert_eq!(word(1), 77, "compare-swap result");
    assert_eq!(word(2), 0xff00 ^ 0x0f0f, "xor");
    drop(region);
    println!("TARGET OK");
}

/// The initiator: puts, gets and atomics on the target's memory.
fn initiator(dir: &Path) {
    let f = Fabric::open(&settings()).unwrap();
    let line = wait_file(&dir.join("target"));
    let (addr, key) = line.split_once(' ').unwrap();
    let peer = f.insert_peers(&[unhex(addr)]).unwrap()[0];
    let remote = RemoteRegion::from_bytes(&unhex(key)).unwrap();
    let data: Vec<u8> = (16..WORDS).flat_map(|i| pattern(i).to_le_bytes()).collect();
    f.put(peer, &data[..8], None, &remote, 128).unwrap(); // injected
    f.put(peer, &data, None, &remote, 128).unwrap();
    let mut back = vec![0u8; data.len()];
    f.get(peer, &mut back, None, &remote, 128).unwrap();
    assert!(back == data, "get across hosts returns what put wrote");
    for i in 0..200u64 {
        assert_eq!(f.fetch_atomic(peer, AtomicOp::Add, 1u64, &remote, 0).unwrap(), i);
    }
    assert_eq!(f.compare_swap(peer, 5u64, 6u64, &remote, 8).unwrap(), 0, "mismatch leaves it");
    assert_eq!(f.compare_swap(peer, 0u64, 77u64, &remote, 8).unwrap(), 0);
    f.atomic(peer, AtomicOp::Set, 0xff00u64, &remote, 16).unwrap();
    f.atomic(peer, AtomicOp::Xor, 0x0f0fu64, &remote, 16).unwrap();
    f.quiet().unwrap();
    write_file(&dir.join("done"), "done");
    println!("INITIATOR OK");
}

/// One side of the test, run by `two_hosts_do_rma_and_atomics` in a namespaced host.
#[test]
#[ignore = "helper: run inside a namespaced host by two_hosts_do_rma_and_atomics"]
fn host_side() {
    let dir = PathBuf::from(std::env::var("FABRIC_TEST_DIR").unwrap());
    match std::env::var("FABRIC_TEST_ROLE").unwrap().as_str() {
        "target" => target(&dir),
        _ => initiator(&dir),
    }
}

#[test]
fn two_hosts_do_rma_and_atomics() {
    if !rshmem::sys::process::is_root() {
        return eprintln!("SKIP two_hosts_do_rma_and_atomics: needs root for network namespaces (CI runs as root)");
    }
    if let Err(e) = Library::load("libfabric.so.1") {
        return eprintln!("SKIP two_hosts_do_rma_and_atomics: {e}");
    }
    let hosts = |args: &[&str]| Command::new(script()).args(args).env("RSHMEM_NETNS_PREFIX", PREFIX).status().unwrap();
    /// Removes the hosts however the test ends.
    struct Down<F: Fn(&[&str]) -> std::process::ExitStatus>(F);
    impl<F: Fn(&[&str]) -> std::process::ExitStatus> Drop for Down<F> {
        fn drop(&mut self) {
            (self.0)(&["down"]);
        }
    }
    let _down = Down(hosts);
    assert!(hosts(&["up", "2"]).success(), "netns-hosts.sh up 2");
    let dir = std::env::temp_dir().join(format!("rshmem-fabric-hosts-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let exe = std::env::current_exe().unwrap();
    let side = |k: &str, role: &str| {
        Command::new(script())
            .args(["exec", k])
            .arg(&exe)
            .args(["--ignored", "--exact", "host_side", "--nocapture"])
            .env("RSHMEM_NETNS_PREFIX", PREFIX)
            .env("FABRIC_TEST_DIR", &dir)
            .env("FABRIC_TEST_ROLE", role)
            .env_remove("RSHMEM_HOSTNAME")
            .output()
            .unwrap()
    };
    let t = std::thread::scope(|s| {
        let t = s.spawn(|| side("1", "target"));
        let i = side("2", "initiator");
        let t = t.join().unwrap();
        let show = |name: &str, o: &std::process::Output| {
            println!("--- {name}:\n{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
        };
        show("initiator (host 2)", &i);
        show("target (host 1)", &t);
        assert!(String::from_utf8_lossy(&i.stdout).contains("INITIATOR OK"));
        t
    });
    let _ = std::fs::remove_dir_all(&dir);
    let out = String::from_utf8_lossy(&t.stdout);
    assert!(out.contains("TARGET OK"), "the target saw the data");
    assert!(out.contains("rsft-h1"), "the target ran in host 1 (its own host name)");
    assert!(out.contains("on eth0 (10.77.0.0/24)"), "over the namespaces' network, not loopback");
}
