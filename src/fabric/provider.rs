//! Choosing the provider: fi_getinfo with our hints, then the best of what comes back.
//!
//! We ask for RDM endpoints with RMA and atomics, a thread-safe domain, delivery-complete
//! writes, and say which memory-registration modes we can handle. Where nothing matches we ask
//! again with less (transmit-complete, then no native atomics: those then need a fallback), and
//! say so in the description. Among the answers, hardware providers win over tcp;ofi_rxm,
//! which wins over the other software ones; providers that only reach the same host (shm) are
//! never taken, and a loopback interface only when asked for or when there is nothing else.
//!
//! Memory keys are the only thing between a stranger who can reach the provider's port and the
//! heap (tcp;ofi_rxm accepts any peer). We ask first without FI_MR_PROV_KEY, so the provider
//! takes the random keys mr.rs draws; a provider that insists on making its own keys (libfabric's
//! utility providers count them up from 1; verbs keys are 32 bits) is taken only when
//! RSHMEM_FABRIC_TRUSTED_NETWORK says only the job's hosts can reach the network.

use std::ffi::{c_char, CStr};

use super::{error, sys, Library, Settings, API_VERSION};
use crate::error::Result;

/// The memory-registration modes we can honour (see mr.rs), FI_MR_PROV_KEY apart.
const MR_MODES: i32 = sys::FI_MR_LOCAL | sys::FI_MR_VIRT_ADDR | sys::FI_MR_ALLOCATED | sys::FI_MR_ENDPOINT;

/// The provider chosen, and what it demands of us.
pub struct ProviderInfo {
    /// e.g. "tcp;ofi_rxm"
    pub provider: String,
    /// e.g. "127.0.0.1/32"
    pub fabric: String,
    /// e.g. "lo", "eth0", "mlx5_0"
    pub domain: String,
    /// FI_MR_* bits the provider requires.
    pub mr_mode: i32,
    /// FI_PROGRESS_AUTO for data: no progress thread needed.
    pub auto_progress: bool,
    /// Largest put sent with fi_inject_write (buffer reusable at once).
    pub inject_size: usize,
    /// Remote pieces one write may scatter to (packed puts, pack.rs).
    pub rma_iov_limit: usize,
    /// Writes complete when the target has processed them (else only when sent).
    pub delivery_complete: bool,
    /// Native atomics were granted (else every AMO needs the fallback).
    pub atomics: bool,
    /// Writes and atomics to one peer arrive in order (fence needs no flush).
    pub ordered_writes: bool,
    /// Reads from a peer are not served before earlier writes to it (FI_ORDER_RAW).
    pub ordered_reads: bool,
    /// Bytes of a memory key the provider honours (the random keys of mr.rs are cut to this).
    pub key_size: usize,
    raw: *mut sys::fi_info,
    free: unsafe extern "C" fn(*mut sys::fi_info),
}

impl ProviderInfo {
    pub(super) fn raw(&self) -> *mut sys::fi_info {
        self.raw
    }

    pub fn requires(&self, mode: i32) -> bool {
        self.mr_mode & mode != 0
    }

    /// One line for logs: provider, interface, and what it demands.
    pub fn describe(&self) -> String {
        let modes: Vec<&str> = [
            (sys::FI_MR_LOCAL, "local"),
            (sys::FI_MR_VIRT_ADDR, "virt_addr"),
            (sys::FI_MR_ALLOCATED, "allocated"),
            (sys::FI_MR_PROV_KEY, "prov_key"),
            (sys::FI_MR_ENDPOINT, "endpoint"),
        ]
        .iter()
        .filter(|(bit, _)| self.requires(*bit))
        .map(|(_, n)| *n)
        .collect();
        format!(
            "{} on {} ({}); mr_mode [{}]; progress {}; inject {} B; {} writes; atomics {}",
            self.provider,
            self.domain,
            self.fabric,
            modes.join(","),
            if self.auto_progress { "auto" } else { "manual (progress thread)" },
            self.inject_size,
            if self.delivery_complete { "delivery-complete" } else { "transmit-complete" },
            if self.atomics { "native" } else { "by fallback" },
        )
    }
}

impl Drop for ProviderInfo {
    fn drop(&mut self) {
        // SAFETY: `raw` came from fi_dupinfo and is freed once, after every object opened from
        // it is closed (ProviderInfo is dropped after Inner closes them).
        unsafe { (self.free)(self.raw) };
    }
}

// SAFETY: the fi_info is only read after construction, and freed once on drop.
unsafe impl Send for ProviderInfo {}
// SAFETY: as above.
unsafe impl Sync for ProviderInfo {}

fn text(p: *const c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: non-null strings in fi_info are NUL-terminated and owned by the info list.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

/// Smaller is better; None: never (reaches only the same host). IPv6 link-local fabrics
/// (fe80::/64) come after routable ones: their addresses need a scope to be reached.
fn rank(provider: &str, fabric: &str, domain: &str, domain_asked: bool) -> Option<u32> {
    let core = provider.split(';').next().unwrap_or("");
    let base = match core {
        "shm" | "sm2" => return None,
        "tcp" if provider.contains("ofi_rxm") => 10,
        "tcp" => 20,
        "sockets" | "net" => 30,
        "udp" => 40,
        _ => 0,
    };
    let loopback = domain == "lo" && !domain_asked;
    let link_local = fabric.starts_with("fe80:");
    Some(base + if loopback { 100 } else { 0 } + if link_local { 50 } else { 0 })
}

/// A malloc'd copy (fi_freeinfo frees the strings in hints).
fn c_dup(s: &str) -> *mut c_char {
    let c = std::ffi::CString::new(s).unwrap_or_default();
    // SAFETY: strdup of a NUL-terminated string; the copy is freed by fi_freeinfo.
    unsafe { libc::strdup(c.as_ptr()) }
}

/// fi_getinfo with our hints; Ok(None) when no provider matches them (-FI_ENODATA).
/// `prov_key`: whether we let the provider make the memory keys.
fn getinfo(lib: &Library, s: &Settings, atomics: bool, delivery: bool, prov_key: bool) -> Result<Option<*mut sys::fi_info>> {
    let api = &lib.api;
    // SAFETY: fi_dupinfo(NULL) allocates zeroed hints with every attribute struct present; we
    // set fields of those structs, hand them to fi_getinfo, and free them with fi_freeinfo.
    unsafe {
        let hints = (api.dupinfo)(std::ptr::null());
        if hints.is_null() {
            return Err(error("fi_dupinfo could not allocate hints (out of memory)"));
        }
        let h = &mut *hints;
        h.caps = sys::FI_RMA | sys::FI_READ | sys::FI_WRITE | sys::FI_REMOTE_READ | sys::FI_REMOTE_WRITE;
        if atomics {
            h.caps |= sys::FI_ATOMIC;
        }
        h.mode = sys::FI_CONTEXT | sys::FI_CONTEXT2;
        (*h.ep_attr).type_ = sys::FI_EP_RDM;
        let d = &mut *h.domain_attr;
        d.mr_mode = MR_MODES | if prov_key { sys::FI_MR_PROV_KEY } else { 0 };
        d.threading = sys::FI_THREAD_SAFE;
        d.av_type = sys::FI_AV_TABLE;
        if let Some(name) = &s.domain {
            d.name = c_dup(name);
        }
        if let Some(p) = &s.provider {
            (*h.fabric_attr).prov_name = c_dup(p);
        }
        (*h.tx_attr).op_flags = if delivery { sys::FI_DELIVERY_COMPLETE } else { sys::FI_TRANSMIT_COMPLETE };
        let mut list = std::ptr::null_mut();
        let rc = super::signals::guarded("asking libfabric's providers for endpoints", || {
            (api.getinfo)(API_VERSION, std::ptr::null(), std::ptr::null(), 0, hints, &mut list) as isize
        });
        (api.freeinfo)(hints);
        if rc == -sys::FI_ENODATA {
            return Ok(None);
        }
        if rc < 0 {
            return Err(error(format!("fi_getinfo failed: {}", api.describe(rc))));
        }
        Ok((!list.is_null()).then_some(list))
    }
}

/// Chooses the provider for `settings`, or says why none fits and what to do.
pub(super) fn choose(lib: &Library, settings: &Settings) -> Result<ProviderInfo> {
    let mut one_host = Vec::new();
    // The better provider that makes its own (guessable) keys, when the network is not trusted.
    let mut refused: Option<String> = None;
    for (atomics, delivery) in [(true, true), (true, false), (false, true), (false, false)] {
        let own = pick(lib, settings, atomics, delivery, false, &mut one_host)?;
        let theirs = pick(lib, settings, atomics, delivery, true, &mut one_host)?;
        let chosen = match keys_choice(own.as_ref().map(|o| o.0), theirs.as_ref().map(|t| t.0), settings.trusted_network) {
            Keys::Ours => own,
            Keys::Theirs => theirs,
            Keys::OursRefusingTheirs => {
                refused.get_or_insert(theirs.map(|t| t.1.provider.clone()).unwrap_or_default());
                own
            }
        };
        if let Some((_, info)) = chosen {
            if let Some(p) = &refused {
                crate::log::warn(&format!("fabric: using {} instead of {p}: {}", info.provider, provider_keys_risk(p)));
            }
            return Ok(info);
        }
    }
    if let Some(p) = refused {
        return Err(error(format!("no provider takes our memory keys; {}", provider_keys_risk(&p))));
    }
    let host = crate::transport::node::NodeId::current().hostname;
    let fi_provider = std::env::var("FI_PROVIDER").ok();
    Err(error(none_fits(settings, fi_provider.as_deref(), &one_host, &host)))
}

/// Which answer to take: the best provider that takes our keys, or the best one that makes
/// its own (by rank, smaller is better; None: no answer).
#[derive(Debug, PartialEq, Eq)]
enum Keys {
    Ours,
    Theirs,
    /// A better provider makes its own keys, but the network is not trusted.
    OursRefusingTheirs,
}

fn keys_choice(ours: Option<u32>, theirs: Option<u32>, trusted_network: bool) -> Keys {
    let theirs_better = match (ours, theirs) {
        (_, None) => false,
        (None, Some(_)) => true,
        (Some(o), Some(t)) => t < o,
    };
    match (theirs_better, trusted_network) {
        (false, _) => Keys::Ours,
        (true, true) => Keys::Theirs,
        (true, false) => Keys::OursRefusingTheirs,
    }
}

/// Why `provider` is not used by default, and how to use it anyway.
fn provider_keys_risk(provider: &str) -> String {
    format!(
        "{provider} makes its own memory keys (FI_MR_PROV_KEY), which anyone who can reach this host's network \
         may guess to read or write the symmetric heap; set RSHMEM_FABRIC_TRUSTED_NETWORK=1 to use it where only \
         the job's hosts can reach the network"
    )
}

/// The best provider answering one set of hints, with its rank (smaller is better).
fn pick(
    lib: &Library,
    settings: &Settings,
    atomics: bool,
    delivery: bool,
    prov_key: bool,
    one_host: &mut Vec<String>,
) -> Result<Option<(u32, ProviderInfo)>> {
    let Some(list) = getinfo(lib, settings, atomics, delivery, prov_key)? else { return Ok(None) };
    let picked = best(list, settings.domain.is_some(), one_host);
    let chosen = picked.map(|(rank, entry)| {
        // SAFETY: `entry` is an element of `list`, still alive; fi_dupinfo copies one entry.
        let raw = unsafe { (lib.api.dupinfo)(entry) };
        describe_entry(raw, lib, atomics, delivery).map(|info| (rank, info))
    });
    // SAFETY: `list` came from fi_getinfo and is freed once; the chosen entry was copied.
    unsafe { (lib.api.freeinfo)(list) };
    chosen.transpose()
}

/// Why no provider fits on `host`: what was asked (RSHMEM_FABRIC_PROVIDER/DOMAIN, FI_PROVIDER),
/// which providers answered but reach only their own host, and the fix.
fn none_fits(settings: &Settings, fi_provider: Option<&str>, one_host: &[String], host: &str) -> String {
    let wanted = match (&settings.provider, &settings.domain) {
        (Some(p), Some(d)) => format!(" from provider {p:?} on {d:?}"),
        (Some(p), None) => format!(" from provider {p:?}"),
        (None, Some(d)) => format!(" on {d:?}"),
        (None, None) => String::new(),
    };
    let limited = fi_provider.map(|p| format!(" (FI_PROVIDER={p} limits the choice)")).unwrap_or_default();
    let local = if one_host.is_empty() {
        String::new()
    } else {
        format!("; {} answered, but reaches only PEs of its own host, not the other hosts' PEs", one_host.join(", "))
    };
    let unset = if fi_provider.is_some() { "unset FI_PROVIDER (or set it to tcp), or " } else { "" };
    format!(
        "no libfabric provider offers thread-safe RDM endpoints with RMA{wanted} on host {host}{limited}{local}; \
         `fi_info -t FI_EP_RDM -c FI_RMA` lists what is there. Fix: {unset}set RSHMEM_FABRIC_PROVIDER to one it lists \
         (tcp;ofi_rxm works on any IP network) and RSHMEM_FABRIC_DOMAIN to an interface it lists"
    )
}

/// The best entry of a getinfo list, by `rank`, first in libfabric's order among equals; the
/// providers never taken (one host only) are added to `one_host`.
fn best(list: *mut sys::fi_info, domain_asked: bool, one_host: &mut Vec<String>) -> Option<(u32, *mut sys::fi_info)> {
    let mut best: Option<(u32, *mut sys::fi_info)> = None;
    let mut p = list;
    while !p.is_null() {
        // SAFETY: `p` walks the list fi_getinfo returned; every entry has its attribute structs.
        let (prov, fab, dom, next) = unsafe {
            let f = &*(*p).fabric_attr;
            (text(f.prov_name), text(f.name), text((*(*p).domain_attr).name), (*p).next)
        };
        match rank(&prov, &fab, &dom, domain_asked) {
            Some(r) if best.is_none_or(|(b, _)| r < b) => best = Some((r, p)),
            Some(_) => {}
            None if !one_host.contains(&prov) => one_host.push(prov),
            None => {}
        }
        p = next;
    }
    best
}

fn describe_entry(raw: *mut sys::fi_info, lib: &Library, atomics: bool, delivery: bool) -> Result<ProviderInfo> {
    if raw.is_null() {
        return Err(error("fi_dupinfo could not copy the provider's info (out of memory)"));
    }
    // SAFETY: `raw` is a whole fi_info copied by fi_dupinfo, with its attribute structs.
    let (fab, dom, tx) = unsafe { (&*(*raw).fabric_attr, &*(*raw).domain_attr, &*(*raw).tx_attr) };
    let order = tx.msg_order;
    Ok(ProviderInfo {
        provider: text(fab.prov_name),
        fabric: text(fab.name),
        domain: text(dom.name),
        mr_mode: dom.mr_mode,
        auto_progress: dom.data_progress == sys::FI_PROGRESS_AUTO,
        inject_size: tx.inject_size,
        rma_iov_limit: tx.rma_iov_limit,
        delivery_complete: delivery,
        atomics,
        ordered_writes: order & (sys::FI_ORDER_WAW | sys::FI_ORDER_RMA_WAW) != 0 && (!atomics || order & sys::FI_ORDER_ATOMIC_WAW != 0),
        ordered_reads: order & (sys::FI_ORDER_RAW | sys::FI_ORDER_RMA_RAW) != 0,
        key_size: dom.mr_key_size,
        raw,
        free: lib.api.freeinfo,
    })
}

#[cfg(test)]
mod tests {
    use super::{keys_choice, none_fits, provider_keys_risk, rank, Keys};
    use crate::fabric::Settings;

    fn asking(provider: Option<&str>, domain: Option<&str>) -> Settings {
        let text = |s: Option<&str>| s.map(str::to_string);
        Settings {
            library: String::new(),
            provider: text(provider),
            domain: text(domain),
            timeout: std::time::Duration::from_secs(1),
            trusted_network: false,
        }
    }

    #[test]
    fn no_provider_names_the_host_the_limit_and_the_fix() {
        let plain = asking(None, None);
        let e = none_fits(&plain, Some("shm"), &["shm".into()], "node7");
        assert!(
            e.contains("no libfabric provider offers thread-safe RDM endpoints with RMA on host node7 (FI_PROVIDER=shm limits the choice)"),
            "{e}"
        );
        assert!(e.contains("; shm answered, but reaches only PEs of its own host"), "{e}");
        assert!(e.contains("Fix: unset FI_PROVIDER (or set it to tcp), or set RSHMEM_FABRIC_PROVIDER"), "{e}");
        let named = asking(Some("nosuch"), Some("eth9"));
        let e = none_fits(&named, None, &[], "node7");
        assert!(e.contains("with RMA from provider \"nosuch\" on \"eth9\" on host node7; `fi_info"), "{e}");
        assert!(e.contains("Fix: set RSHMEM_FABRIC_PROVIDER") && !e.contains("answered"), "{e}");
    }

    #[test]
    fn a_provider_making_its_own_keys_needs_a_trusted_network() {
        // tcp;ofi_rxm answers both ways (same rank): our random keys.
        assert_eq!(keys_choice(Some(10), Some(10), false), Keys::Ours);
        // verbs answers only when it may make the keys: tcp instead, unless trusted.
        assert_eq!(keys_choice(Some(10), Some(0), false), Keys::OursRefusingTheirs);
        assert_eq!(keys_choice(Some(10), Some(0), true), Keys::Theirs);
        assert_eq!(keys_choice(None, Some(0), false), Keys::OursRefusingTheirs);
        assert_eq!(keys_choice(None, Some(0), true), Keys::Theirs);
        assert_eq!(keys_choice(Some(10), None, true), Keys::Ours);
        let why = provider_keys_risk("verbs;ofi_rxm");
        assert!(why.starts_with("verbs;ofi_rxm makes its own memory keys (FI_MR_PROV_KEY)"), "{why}");
        assert!(why.ends_with("set RSHMEM_FABRIC_TRUSTED_NETWORK=1 to use it where only the job's hosts can reach the network"), "{why}");
    }

    #[test]
    fn hardware_beats_tcp_beats_sockets_and_shm_is_never_taken() {
        let ip = "10.77.0.0/24";
        assert!(rank("verbs;ofi_rxm", "IB-0x0", "mlx5_0", false) < rank("tcp;ofi_rxm", ip, "eth0", false));
        assert!(rank("efa", "efa", "rdmap0", false) < rank("tcp;ofi_rxm", ip, "eth0", false));
        assert!(rank("tcp;ofi_rxm", ip, "eth0", false) < rank("sockets", ip, "eth0", false));
        assert_eq!(rank("shm", "shm", "shm", false), None);
        assert!(rank("tcp;ofi_rxm", "127.0.0.1/32", "lo", false) > rank("sockets", ip, "eth0", false), "loopback last unless asked for");
        assert_eq!(rank("tcp;ofi_rxm", "127.0.0.1/32", "lo", true), rank("tcp;ofi_rxm", ip, "eth0", false));
        assert!(rank("tcp;ofi_rxm", "fe80::/64", "eth0", false) > rank("tcp;ofi_rxm", ip, "eth0", false));
    }
}
