//! CPU binding of the PEs one launcher starts on its host (`--bind-to core|numa|none`).
//!
//! Why: an unbound process migrates between cores, and CUDA context creation alone took 2-3x
//! longer unbound on a 64-core GPU machine (issue 20). mpirun binds by default; so do we.
//! - `core` (the default while this host has at least one allowed CPU per PE): each PE gets its
//!   own share of the CPUs. With NVIDIA GPUs (read from sysfs, no CUDA needed), PE k uses GPU
//!   k % GPUs, as the usual `cudaSetDevice(node_rank % count)` idiom does, and its share comes
//!   from the CPUs local to that GPU, split among the PEs of that GPU. A share of several CPUs
//!   leaves room for the PE's progress and proxy threads.
//! - `numa`: each PE may use every allowed CPU of its GPU's NUMA node (without GPUs: of node
//!   k % nodes).
//! - `none`: no binding (and the default when PEs outnumber the allowed CPUs, where binding
//!   would only stop the scheduler from balancing them).
//!
//! CPUs come from the launcher's own affinity (taskset, Slurm's cgroup), never beyond it.

use std::path::Path;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BindTo {
    Core,
    Numa,
    None,
}

impl BindTo {
    pub fn parse(s: &str) -> Result<BindTo, String> {
        match s {
            "core" | "cores" => Ok(BindTo::Core),
            "numa" => Ok(BindTo::Numa),
            "none" => Ok(BindTo::None),
            _ => Err(format!("--bind-to {s}: expected core, numa or none")),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            BindTo::Core => "core",
            BindTo::Numa => "numa",
            BindTo::None => "none",
        }
    }
}

/// What binding needs to know about the host.
#[derive(Clone, Debug, Default)]
pub struct Host {
    /// CPUs this launcher may run on, ascending.
    pub allowed: Vec<usize>,
    /// CPUs local to each GPU, in CUDA's default order (PCI bus order).
    pub gpu_cpus: Vec<Vec<usize>>,
    /// CPUs of each NUMA node.
    pub nodes: Vec<Vec<usize>>,
}

/// The CPU set of each of `npes` local PEs (empty: leave that PE unbound).
pub fn plan(how: Option<BindTo>, npes: usize, host: &Host) -> Vec<Vec<usize>> {
    let how = how.unwrap_or(if npes <= host.allowed.len() { BindTo::Core } else { BindTo::None });
    if how == BindTo::None || host.allowed.is_empty() {
        return vec![Vec::new(); npes];
    }
    let allowed = |cpus: &[usize]| -> Vec<usize> {
        let mine: Vec<usize> = cpus.iter().copied().filter(|c| host.allowed.contains(c)).collect();
        if mine.is_empty() {
            host.allowed.clone()
        } else {
            mine
        }
    };
    // The group of each PE (its GPU, else one group of all) and the CPUs of that group.
    let groups = host.gpu_cpus.len().max(1);
    let pool_of = |g: usize| -> Vec<usize> {
        match how {
            BindTo::Numa if host.gpu_cpus.is_empty() => allowed(host.nodes.get(g).map(Vec::as_slice).unwrap_or(&[])),
            BindTo::Numa => {
                let first = host.gpu_cpus[g].first().copied();
                let node = host.nodes.iter().find(|n| first.is_some_and(|c| n.contains(&c)));
                allowed(node.map(Vec::as_slice).unwrap_or(&host.gpu_cpus[g]))
            }
            _ if host.gpu_cpus.is_empty() => host.allowed.clone(),
            _ => allowed(&host.gpu_cpus[g]),
        }
    };
    (0..npes)
        .map(|k| {
            if how == BindTo::Numa {
                let g = if host.gpu_cpus.is_empty() { k % host.nodes.len().max(1) } else { k % groups };
                return pool_of(g);
            }
            let g = k % groups;
            let pool = pool_of(g);
            // PEs of group g: g, g + groups, ...; this is the j-th of m.
            let (j, m) = (k / groups, (npes - g).div_ceil(groups));
            share(&pool, j, m)
        })
        .collect()
}

/// The j-th of m contiguous shares of `pool` (one CPU, shared round-robin, when there are
/// fewer CPUs than shares).
fn share(pool: &[usize], j: usize, m: usize) -> Vec<usize> {
    if pool.len() < m {
        return vec![pool[j % pool.len()]];
    }
    let (base, extra) = (pool.len() / m, pool.len() % m);
    let start = j * base + j.min(extra);
    pool[start..start + base + usize::from(j < extra)].to_vec()
}

/// Reads the host: this process's affinity, NVIDIA GPUs' local CPUs, NUMA nodes (sysfs).
pub fn read_host() -> Host {
    let allowed = rshmem::sys::process::allowed_cpus();
    let mut gpus: Vec<(String, Vec<usize>)> = Vec::new();
    if let Ok(dir) = std::fs::read_dir("/sys/bus/pci/devices") {
        for e in dir.flatten() {
            let p = e.path();
            let read = |f: &str| std::fs::read_to_string(p.join(f)).unwrap_or_default();
            // NVIDIA (0x10de), display controllers (class 0x03xxxx): what CUDA enumerates.
            if read("vendor").trim() == "0x10de" && read("class").trim().starts_with("0x03") {
                gpus.push((e.file_name().to_string_lossy().into_owned(), parse_list(read("local_cpulist").trim())));
            }
        }
    }
    gpus.sort();
    let mut gpu_cpus: Vec<Vec<usize>> = gpus.into_iter().map(|(_, c)| c).collect();
    // CUDA_VISIBLE_DEVICES=1,0 (indices) reorders and hides GPUs as CUDA will; UUIDs: keep all.
    if let Ok(v) = std::env::var("CUDA_VISIBLE_DEVICES") {
        let idx: Option<Vec<usize>> = v.split(',').map(|s| s.trim().parse().ok()).collect();
        if let Some(idx) = idx {
            gpu_cpus = idx.into_iter().filter_map(|i| gpu_cpus.get(i).cloned()).collect();
        }
    }
    let mut nodes = Vec::new();
    for n in 0.. {
        let path = format!("/sys/devices/system/node/node{n}/cpulist");
        if !Path::new(&path).exists() {
            break;
        }
        nodes.push(parse_list(std::fs::read_to_string(&path).unwrap_or_default().trim()));
    }
    Host { allowed, gpu_cpus, nodes }
}

/// A kernel CPU list ("0-3,8,10-11").
pub fn parse_list(s: &str) -> Vec<usize> {
    let mut out = Vec::new();
    for part in s.split(',').filter(|p| !p.is_empty()) {
        let mut ends = part.splitn(2, '-').map(|x| x.trim().parse::<usize>());
        match (ends.next(), ends.next()) {
            (Some(Ok(a)), None) => out.push(a),
            (Some(Ok(a)), Some(Ok(b))) if a <= b => out.extend(a..=b),
            _ => {}
        }
    }
    out
}

/// "0-3,8" for messages.
pub fn describe(cpus: &[usize]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(if i == j { cpus[i].to_string() } else { format!("{}-{}", cpus[i], cpus[j]) });
        i = j + 1;
    }
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(cpus: usize, gpus: &[&str], nodes: &[&str]) -> Host {
        Host {
            allowed: (0..cpus).collect(),
            gpu_cpus: gpus.iter().map(|g| parse_list(g)).collect(),
            nodes: nodes.iter().map(|n| parse_list(n)).collect(),
        }
    }

    #[test]
    fn cpu_lists_parse_and_print() {
        assert_eq!(parse_list("0-3,8,10-11"), vec![0, 1, 2, 3, 8, 10, 11]);
        assert_eq!(parse_list(""), Vec::<usize>::new());
        assert_eq!(describe(&[0, 1, 2, 3, 8, 10, 11]), "0-3,8,10-11");
    }

    #[test]
    fn cores_are_shared_out_without_gpus() {
        let h = host(8, &[], &["0-7"]);
        assert_eq!(plan(None, 2, &h), vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7]]);
        assert_eq!(plan(None, 3, &h), vec![vec![0, 1, 2], vec![3, 4, 5], vec![6, 7]]);
        // More PEs than CPUs: unbound by default, one CPU each round-robin when asked.
        assert!(plan(None, 9, &h).iter().all(Vec::is_empty));
        assert_eq!(plan(Some(BindTo::Core), 9, &h)[8], vec![0]);
        assert!(plan(Some(BindTo::None), 2, &h).iter().all(Vec::is_empty));
    }

    #[test]
    fn pes_get_cpus_local_to_their_gpu() {
        // Two GPUs, each local to one socket of 8 CPUs; 4 PEs: 0 and 2 on GPU 0, 1 and 3 on GPU 1.
        let h = host(16, &["0-7", "8-15"], &["0-7", "8-15"]);
        assert_eq!(plan(None, 4, &h), vec![vec![0, 1, 2, 3], vec![8, 9, 10, 11], vec![4, 5, 6, 7], vec![12, 13, 14, 15]]);
        assert_eq!(plan(Some(BindTo::Numa), 2, &h), vec![(0..8).collect::<Vec<_>>(), (8..16).collect()]);
        // The launcher may use only CPUs 4-11: each GPU's share stays inside them.
        let mut h2 = h.clone();
        h2.allowed = (4..12).collect();
        assert_eq!(plan(None, 2, &h2), vec![vec![4, 5, 6, 7], vec![8, 9, 10, 11]]);
    }
}
