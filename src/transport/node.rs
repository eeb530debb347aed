//! Node identity: which PEs share a host, and so may share memory.
//!
//! Two PEs are on the same host only when all three agree: the host name (of the PE's UTS
//! namespace), the kernel's boot id, and the network namespace (the inode of
//! /proc/self/ns/net). The host name alone is not enough: containers and the namespaced test
//! "hosts" may repeat it, and two machines cloned from one image may share it. The boot id tells
//! machines (and reboots) apart; the network namespace separates PEs that share a kernel but
//! not a network, which is how tests build several hosts on one machine. `RSHMEM_HOSTNAME`
//! replaces the host name, for tests.

use std::os::unix::fs::MetadataExt;

/// Who this process's host is, as exchanged with the other PEs at start-up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeId {
    pub hostname: String,
    pub boot_id: String,
    /// Inode of this process's network namespace (0 where /proc does not say).
    pub netns: u64,
}

/// Longest host name carried (Linux allows 64 bytes; longer ones are cut).
const MAX_NAME: usize = 255;

impl NodeId {
    /// This process's identity (RSHMEM_HOSTNAME, when set, replaces the host name).
    pub fn current() -> NodeId {
        let read = |path: &str| std::fs::read_to_string(path).map(|s| s.trim().to_string()).unwrap_or_default();
        let hostname = crate::env::lookup(crate::env::HOSTNAME).map(|(_, v)| v).unwrap_or_else(|| read("/proc/sys/kernel/hostname"));
        NodeId {
            hostname: truncate(hostname),
            boot_id: truncate(read("/proc/sys/kernel/random/boot_id")),
            netns: std::fs::metadata("/proc/self/ns/net").map(|m| m.ino()).unwrap_or(0),
        }
    }

    /// Whether a PE with identity `other` shares this host (memory can be mapped between them).
    pub fn same_host(&self, other: &NodeId) -> bool {
        self == other
    }

    /// Wire form: netns (8 bytes LE), then two length-prefixed strings.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut b = self.netns.to_le_bytes().to_vec();
        for s in [&self.hostname, &self.boot_id] {
            b.push(s.len() as u8);
            b.extend_from_slice(s.as_bytes());
        }
        b
    }

    /// Parses `to_bytes`; None for anything malformed (a stranger's garbage included).
    pub fn from_bytes(b: &[u8]) -> Option<NodeId> {
        let netns = u64::from_le_bytes(b.get(..8)?.try_into().ok()?);
        let mut rest = &b[8..];
        let mut field = || -> Option<String> {
            let (&n, tail) = rest.split_first()?;
            let s = std::str::from_utf8(tail.get(..n as usize)?).ok()?.to_string();
            rest = &tail[n as usize..];
            Some(s)
        };
        let (hostname, boot_id) = (field()?, field()?);
        rest.is_empty().then_some(NodeId { hostname, boot_id, netns })
    }

    /// "host (boot 1a2b3c4d, netns 4026531840)", for logs and messages.
    pub fn describe(&self) -> String {
        format!("{} (boot {}, netns {})", self.hostname, self.boot_id.get(..8).unwrap_or(&self.boot_id), self.netns)
    }
}

fn truncate(mut s: String) -> String {
    if s.len() > MAX_NAME {
        let mut end = MAX_NAME;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
    }
    s
}

/// Groups PEs by host: for each PE, the index of its host (hosts numbered in order of their
/// lowest PE), so PEs i and j share memory exactly when `hosts[i] == hosts[j]`.
pub fn host_of_each(ids: &[NodeId]) -> Vec<usize> {
    let mut firsts: Vec<&NodeId> = Vec::new();
    ids.iter()
        .map(|id| match firsts.iter().position(|f| f.same_host(id)) {
            Some(h) => h,
            None => {
                firsts.push(id);
                firsts.len() - 1
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(host: &str, boot: &str, netns: u64) -> NodeId {
        NodeId { hostname: host.into(), boot_id: boot.into(), netns }
    }

    #[test]
    fn same_host_needs_name_boot_and_netns() {
        let a = id("n1", "b", 7);
        assert!(a.same_host(&id("n1", "b", 7)));
        assert!(!a.same_host(&id("n2", "b", 7)), "another host name");
        assert!(!a.same_host(&id("n1", "c", 7)), "another machine (or a reboot) with the same name");
        assert!(!a.same_host(&id("n1", "b", 8)), "another network namespace on the same kernel");
    }

    #[test]
    fn this_process_has_a_boot_id_and_a_netns() {
        let me = NodeId::current();
        assert_eq!(me.boot_id.len(), 36, "boot id {:?} is a UUID", me.boot_id);
        assert_ne!(me.netns, 0);
        assert!(me.same_host(&NodeId::current()));
    }

    #[test]
    fn wire_form_round_trips_and_rejects_garbage() {
        let a = id("host-a", "0123-4567", 4026531840);
        assert_eq!(NodeId::from_bytes(&a.to_bytes()), Some(a.clone()));
        let b = a.to_bytes();
        assert_eq!(NodeId::from_bytes(&b[..b.len() - 1]), None, "cut short");
        assert_eq!(NodeId::from_bytes(&[b.clone(), vec![0]].concat()), None, "trailing bytes");
        assert_eq!(NodeId::from_bytes(&[0xff; 12]), None, "length past the end");
        assert_eq!(NodeId::from_bytes(&[]), None);
        let long = id(&"x".repeat(300), "b", 1);
        assert_eq!(truncate(long.hostname.clone()).len(), MAX_NAME);
    }

    #[test]
    fn hosts_group_pes() {
        let ids = [id("a", "b", 1), id("a", "b", 2), id("a", "b", 1), id("c", "b", 1)];
        assert_eq!(host_of_each(&ids), vec![0, 1, 0, 2]);
    }

    /// Prints this process's identity; run by `a_fresh_netns_is_another_host` inside `unshare`.
    #[test]
    #[ignore = "helper: run inside a new namespace by a_fresh_netns_is_another_host"]
    fn identity_probe() {
        println!("NODEID:{}", NodeId::current().to_bytes().iter().map(|b| format!("{b:02x}")).collect::<String>());
    }

    fn probe(cmd: &mut std::process::Command) -> Option<NodeId> {
        let out = cmd.output().ok().filter(|o| o.status.success())?;
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        // Anywhere in a line: with one test thread (one CPU) the harness prints the test's
        // name first on the same line ("test …identity_probe ... NODEID:…").
        let hex = text.lines().find_map(|l| l.split_once("NODEID:")).map(|(_, h)| h.trim())?;
        let bytes: Vec<u8> = (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect();
        NodeId::from_bytes(&bytes)
    }

    #[test]
    fn rshmem_hostname_replaces_the_name_only() {
        let exe = std::env::current_exe().unwrap();
        let mut cmd = std::process::Command::new(exe);
        cmd.args(["--ignored", "--exact", "transport::node::tests::identity_probe", "--nocapture"]).env("RSHMEM_HOSTNAME", "pe-host-b");
        let there = probe(&mut cmd).expect("the probe ran");
        let here = NodeId::current();
        assert_eq!(there.hostname, "pe-host-b");
        assert_eq!((&there.boot_id, there.netns), (&here.boot_id, here.netns));
        assert!(!here.same_host(&there), "another name: another host, for tests");
    }

    #[test]
    fn a_fresh_netns_is_another_host() {
        let exe = std::env::current_exe().unwrap();
        let mut cmd = std::process::Command::new("unshare");
        cmd.args([
            "-n",
            "-u",
            "sh",
            "-c",
            "hostname nsprobe && exec \"$0\" --ignored --exact transport::node::tests::identity_probe --nocapture",
        ])
        .arg(&exe)
        .env_remove("RSHMEM_HOSTNAME");
        if !crate::sys::process::is_root() {
            eprintln!("SKIP a_fresh_netns_is_another_host: not root, so no `unshare -n -u` (CI runs it as root)");
            return;
        }
        let there = probe(&mut cmd).expect("`unshare -n -u` ran the probe in a new network and UTS namespace");
        let here = NodeId::current();
        assert_eq!(there.hostname, "nsprobe");
        assert_eq!(there.boot_id, here.boot_id, "same kernel");
        assert_ne!(there.netns, here.netns, "a new network namespace");
        assert!(!here.same_host(&there));
        // Same name, same kernel, other netns: still another host.
        let renamed = NodeId { hostname: here.hostname.clone(), ..there };
        assert!(!here.same_host(&renamed));
    }
}
