//! Which network interface and address the cross-host rendezvous listens on.
//!
//! `RSHMEM_BOOTSTRAP_IFNAME` picks interfaces the way NCCL's `NCCL_SOCKET_IFNAME` does: a
//! comma-separated list of name prefixes (`eth,ib`), `=` before the list for exact names
//! (`=eth0`), `^` before it to exclude instead (`^docker,lo`). Unset, the first interface that is
//! up and not loopback is taken, IPv4 addresses before IPv6 (link-local IPv6 is skipped: its
//! address needs a scope to be reached). A rendezvous address is written `tcp:ADDR:PORT`
//! (`tcp:[ADDR]:PORT` for IPv6).

use std::net::{IpAddr, SocketAddr};

/// One address of one interface.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Iface {
    pub name: String,
    pub addr: IpAddr,
    pub up: bool,
    pub loopback: bool,
}

/// Prefix of a TCP rendezvous address (an abstract Unix name never starts with it).
pub const TCP_PREFIX: &str = "tcp:";

/// `tcp:ADDR:PORT` for a listening socket.
pub fn tcp_address(sa: &SocketAddr) -> String {
    format!("{TCP_PREFIX}{sa}")
}

/// The socket address in `tcp:ADDR:PORT`, if `text` is one.
pub fn parse_tcp_address(text: &str) -> Option<SocketAddr> {
    text.strip_prefix(TCP_PREFIX)?.parse().ok()
}

/// Every address of every interface of this host (network namespace).
pub fn interfaces() -> std::io::Result<Vec<Iface>> {
    let mut list: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs allocates a list and stores its head in `list`; freed below.
    if unsafe { libc::getifaddrs(&mut list) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let mut out = Vec::new();
    let mut at = list;
    while !at.is_null() {
        // SAFETY: `at` is a node of the list getifaddrs made, alive until freeifaddrs.
        let ifa = unsafe { &*at };
        at = ifa.ifa_next;
        if ifa.ifa_addr.is_null() {
            continue;
        }
        // SAFETY: ifa_name is a NUL-terminated string owned by the list.
        let name = unsafe { std::ffi::CStr::from_ptr(ifa.ifa_name) }.to_string_lossy().into_owned();
        // SAFETY: ifa_addr points to a sockaddr whose family says which struct it really is.
        let addr = match i32::from(unsafe { (*ifa.ifa_addr).sa_family }) {
            libc::AF_INET => {
                // SAFETY: family AF_INET: the sockaddr is a sockaddr_in.
                let sin = unsafe { &*(ifa.ifa_addr as *const libc::sockaddr_in) };
                IpAddr::from(u32::from_be(sin.sin_addr.s_addr).to_be_bytes())
            }
            libc::AF_INET6 => {
                // SAFETY: family AF_INET6: the sockaddr is a sockaddr_in6.
                let sin6 = unsafe { &*(ifa.ifa_addr as *const libc::sockaddr_in6) };
                IpAddr::from(sin6.sin6_addr.s6_addr)
            }
            _ => continue,
        };
        let flags = ifa.ifa_flags as libc::c_int;
        out.push(Iface { name, addr, up: flags & libc::IFF_UP != 0, loopback: flags & libc::IFF_LOOPBACK != 0 });
    }
    // SAFETY: `list` came from getifaddrs and is freed once; no reference into it survives.
    unsafe { libc::freeifaddrs(list) };
    Ok(out)
}

fn link_local_v6(a: &IpAddr) -> bool {
    matches!(a, IpAddr::V6(v6) if (v6.segments()[0] & 0xffc0) == 0xfe80)
}

/// Whether interface `name` is selected by `spec` (the RSHMEM_BOOTSTRAP_IFNAME syntax).
pub fn selected(spec: &str, name: &str) -> bool {
    let (exclude, rest) = match spec.strip_prefix('^') {
        Some(r) => (true, r),
        None => (false, spec),
    };
    let (exact, list) = match rest.strip_prefix('=') {
        Some(r) => (true, r),
        None => (false, rest),
    };
    let hit = list.split(',').map(str::trim).filter(|p| !p.is_empty()).any(|p| if exact { name == p } else { name.starts_with(p) });
    hit != exclude
}

/// The interface address to listen on, chosen from `ifaces` by `spec` (empty: automatic).
/// The error names the setting, the host (`host`), what exists there, and how to fix it.
pub fn choose(spec: &str, ifaces: &[Iface], host: &str) -> Result<Iface, String> {
    let spec = spec.trim();
    let usable = |i: &&Iface| i.up && !link_local_v6(&i.addr);
    let candidates: Vec<&Iface> = if spec.is_empty() {
        ifaces.iter().filter(usable).filter(|i| !i.loopback).collect()
    } else {
        ifaces.iter().filter(usable).filter(|i| selected(spec, &i.name)).collect()
    };
    let best = candidates.iter().find(|i| i.addr.is_ipv4()).or_else(|| candidates.first());
    if let Some(i) = best {
        return Ok((*i).clone());
    }
    let mut names: Vec<String> = Vec::new();
    for i in ifaces {
        let d = format!("{} ({}{})", i.name, i.addr, if i.up { "" } else { ", down" });
        if !names.contains(&d) {
            names.push(d);
        }
    }
    let existing = if names.is_empty() { "none".into() } else { names.join(", ") };
    Err(if spec.is_empty() {
        format!(
            "no network interface other than loopback is up on host {host}, so PEs on other hosts cannot reach it (interfaces: {existing}); set RSHMEM_BOOTSTRAP_IFNAME to the interface the hosts share"
        )
    } else {
        format!(
            "RSHMEM_BOOTSTRAP_IFNAME={spec:?} matches no interface that is up with a usable address on host {host}; its interfaces are: {existing}. \
             Set it to one of them (a prefix such as eth, =name for an exact name, ^name to exclude)"
        )
    })
}

/// The interface chosen by this process's RSHMEM_BOOTSTRAP_IFNAME (or automatically).
pub fn chosen_interface() -> Result<Iface, String> {
    let (_, spec) = crate::env::current(crate::env::BOOTSTRAP_IFNAME);
    let host = crate::transport::node::NodeId::current().hostname;
    let ifaces = interfaces().map_err(|e| format!("listing the network interfaces of host {host} (getifaddrs): {e}"))?;
    choose(&spec, &ifaces, &host)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iface(name: &str, addr: &str, up: bool) -> Iface {
        Iface { name: name.into(), addr: addr.parse().unwrap(), up, loopback: name == "lo" }
    }

    fn host() -> Vec<Iface> {
        vec![
            iface("lo", "127.0.0.1", true),
            iface("lo", "::1", true),
            iface("docker0", "172.17.0.1", true),
            iface("eth0", "fe80::1", true),
            iface("eth0", "2001:db8::5", true),
            iface("eth0", "10.0.0.5", true),
            iface("eth1", "10.1.0.5", false),
            iface("ib0", "192.168.7.5", true),
        ]
    }

    #[test]
    fn the_automatic_choice_skips_loopback_and_prefers_ipv4() {
        let c = choose("", &host(), "node7").unwrap();
        assert_eq!((c.name.as_str(), c.addr.to_string()), ("docker0", "172.17.0.1".into()));
        let only_v6 = vec![iface("lo", "127.0.0.1", true), iface("eth0", "fe80::1", true), iface("eth0", "2001:db8::5", true)];
        assert_eq!(choose("", &only_v6, "node7").unwrap().addr.to_string(), "2001:db8::5");
    }

    #[test]
    fn prefixes_exact_names_and_exclusions_select_like_nccl() {
        assert_eq!(choose("eth", &host(), "node7").unwrap().addr.to_string(), "10.0.0.5");
        assert_eq!(choose("ib,eth", &host(), "node7").unwrap().addr.to_string(), "10.0.0.5");
        assert_eq!(choose("=ib0", &host(), "node7").unwrap().name, "ib0");
        assert_eq!(choose("^docker,lo,eth", &host(), "node7").unwrap().name, "ib0");
        assert_eq!(choose("lo", &host(), "node7").unwrap().addr.to_string(), "127.0.0.1");
        assert!(selected("=eth0", "eth0") && !selected("=eth", "eth0"));
        assert!(selected("^lo", "eth0") && !selected("^lo", "lo"));
    }

    #[test]
    fn a_wrong_name_lists_the_interfaces_that_exist() {
        let e = choose("wlan", &host(), "node7").unwrap_err();
        assert!(e.contains("RSHMEM_BOOTSTRAP_IFNAME=\"wlan\" matches no interface that is up with a usable address on host node7"), "{e}");
        assert!(e.contains("eth0 (10.0.0.5)") && e.contains("eth1 (10.1.0.5, down)") && e.contains("ib0"), "{e}");
        // A down interface is not chosen, even by exact name.
        assert!(choose("=eth1", &host(), "node7").is_err());
        let e = choose("", &[iface("lo", "127.0.0.1", true)], "node7").unwrap_err();
        assert!(e.contains("no network interface other than loopback is up on host node7"), "{e}");
    }

    #[test]
    fn tcp_addresses_round_trip_for_both_families() {
        for text in ["tcp:10.77.0.1:4242", "tcp:[2001:db8::5]:80"] {
            let sa = parse_tcp_address(text).unwrap();
            assert_eq!(tcp_address(&sa), text);
        }
        assert!(parse_tcp_address("rshmem-123-abcd").is_none());
        assert!(parse_tcp_address("tcp:nonsense").is_none());
    }

    #[test]
    fn this_host_lists_its_loopback() {
        let all = interfaces().unwrap();
        assert!(all.iter().any(|i| i.loopback && i.addr.is_loopback()), "{all:?}");
    }
}
