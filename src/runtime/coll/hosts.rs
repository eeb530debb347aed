//! Collectives whose members span hosts (issue 18): shared memory inside each host, and a
//! log-depth exchange between one representative per host over the network, so the data and
//! the round trips crossing the network grow with log2(hosts), not with the members.
//!
//! - **Broadcast**: a binomial tree over the hosts, rooted at the root's host; each host's
//!   representative is the root on its host and the host's first member elsewhere. A small
//!   broadcast's data rides in the messages (each representative copies it and passes the
//!   message on: first to its child hosts, the largest subtree first, then to its own host's
//!   members). A large one is pulled: a representative told "ready" by its parent reads the
//!   parent's copy (the root's source, else the parent's dest) with one fabric get into its
//!   dest, answers "done" (the parent may then return and reuse its buffer), and tells its
//!   children and its host's members "ready"; members copy from its dest through the mapping.
//!   ceil(log2 hosts) network steps.
//! - **Reductions**: each host's first member folds its host's contributions (in the messages
//!   when small, through the mappings when large) in member order, the representatives
//!   combine their partials by recursive doubling (hosts beyond the largest power of two first
//!   hand theirs to a partner and get the result back), and each representative hands the
//!   result to its host's members; a large one ends with a sync, so when any member returns
//!   every member's dest holds the result. In every combination the lower host's partial is the left
//!   operand on both sides, so every member gets bit-identical results (the order is by host,
//!   then member, not strictly by member: the operations are commutative). Recursive doubling
//!   moves the whole vector each of its log2(hosts) steps; with the two or three hosts jobs
//!   have here that is fewer round trips than a reduce-scatter + allgather, which would move
//!   less data at many hosts and large vectors (not done).
//!
//! - **Allgathers** (fcollect and collect beyond what messages carry): each host's first
//!   member gathers its host's blocks into its own dest through the mappings; the first
//!   members then pull every other host's blocks from that host's first member, one fabric get
//!   per run of that host's members adjacent in dest (one get per host pair when a host's PEs
//!   are consecutive), and each host's other members copy the whole dest from their first
//!   member. The network carries each block once per host instead of once per member, and
//!   the first members exchange with each other directly: (hosts - 1) gets each, all at once,
//!   which with the few hosts jobs have here takes no more steps than a ring or recursive
//!   doubling would.
//! - **Alltoall** (beyond what messages carry): each host's first member assembles, for every
//!   member i of another host, the blocks its own host's members hold for i (one run per run
//!   of its members adjacent in dest) and writes them into i's dest with one fabric put each:
//!   per host pair one put per destination member, not one per pair of members. Blocks
//!   between members of one host are copied by their receivers through the mappings.
//!
//! Every message sent in a call is received in it (rule 1 of barrier.rs): each tree edge and
//! each pair of the doubling carries the same number of messages both ways on both ends.

use std::mem::size_of;

use super::{copy, fold, fold_aligned, Coll, InlineBuf};
use crate::error::Result;

/// The members of a collective grouped by host, hosts in the order of their first member.
pub(super) struct HostGroups {
    /// Per host: its members (indices in the set), ascending.
    groups: Vec<Vec<usize>>,
    /// Per member: the index of its host in `groups`.
    group_of: Vec<usize>,
}

impl HostGroups {
    /// The grouping of `c`'s members when they span more than one host; None otherwise (the
    /// one-host algorithms serve those).
    pub(super) fn spanning(c: &Coll<'_>) -> Option<HostGroups> {
        let hosts = &c.st.routes.hosts;
        let mut index = vec![usize::MAX; c.st.routes.host_count()];
        let mut groups: Vec<Vec<usize>> = Vec::new();
        let mut group_of = Vec::with_capacity(c.size());
        for k in 0..c.size() {
            let h = hosts[c.pe(k)];
            if index[h] == usize::MAX {
                index[h] = groups.len();
                groups.push(Vec::new());
            }
            groups[index[h]].push(k);
            group_of.push(index[h]);
        }
        (groups.len() > 1).then_some(HostGroups { groups, group_of })
    }

    fn count(&self) -> usize {
        self.groups.len()
    }

    /// Representative `me`'s part in the recursive doubling between the hosts' representatives
    /// (first members; they ascend with the hosts, so a lower host has the lower member index).
    fn doubling(&self, me: usize) -> Doubling {
        let reps: Vec<usize> = self.groups.iter().map(|m| m[0]).collect();
        doubling(self.group_of[me], &reps)
    }
}

/// One node's part in recursive doubling over the nodes `ids` (node v is `ids[v]`; p is the
/// largest power of two not above their number).
#[derive(Debug, PartialEq, Eq)]
enum Doubling {
    /// v >= p: hand our partial to node v - p, which sends the result back.
    Hand(usize),
    /// v < p: fold in the partial of `extra` (node v + p, where there is one), exchange partials
    /// with each of `partners` in turn (nodes v ^ 1, v ^ 2, v ^ 4, ...), then send the result to
    /// `extra`.
    Exchange { extra: Option<usize>, partners: Vec<usize> },
}

fn doubling(v: usize, ids: &[usize]) -> Doubling {
    let p = 1 << ids.len().ilog2();
    if v >= p {
        return Doubling::Hand(ids[v - p]);
    }
    let partners = (0..p.trailing_zeros()).map(|i| ids[v ^ (1 << i)]).collect();
    Doubling::Exchange { extra: ids.get(v + p).copied(), partners }
}

/// Binomial tree over `n` nodes rooted at 0: node v's parent, and its children, the largest
/// subtree first.
fn binomial(v: usize, n: usize) -> (Option<usize>, Vec<usize>) {
    let mut mask = 1;
    let mut parent = None;
    while mask < n {
        if v & mask != 0 {
            parent = Some(v - mask);
            break;
        }
        mask <<= 1;
    }
    let mut children = Vec::new();
    let mut m = mask >> 1;
    while m > 0 {
        if v + m < n {
            children.push(v + m);
        }
        m >>= 1;
    }
    (parent, children)
}

/// (offset, length) blocks, merged where one ends where the next begins.
fn runs(blocks: impl Iterator<Item = (usize, usize)>) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    for (off, n) in blocks.filter(|b| b.1 > 0) {
        match out.last_mut() {
            Some(last) if last.0 + last.1 == off => last.1 += n,
            _ => out.push((off, n)),
        }
    }
    out
}

impl Coll<'_> {
    /// Broadcast across hosts (module comment). `writes`: the root's dest gets the data too.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn broadcast_across_hosts(
        &self,
        g: &HostGroups,
        dest: *mut u8,
        source: *const u8,
        nbytes: usize,
        root: usize,
        writes: bool,
        small: bool,
    ) -> Result<()> {
        let h = g.count();
        let root_group = g.group_of[root];
        let rep = |grp: usize| if grp == root_group { root } else { g.groups[grp][0] };
        let mine = g.group_of[self.me];
        // Who sends us the data, and whom we send it to.
        let (parent, children) = if rep(mine) == self.me {
            let (p, kids) = binomial((mine + h - root_group) % h, h);
            let host_of = |v: usize| (v + root_group) % h;
            let mut to: Vec<usize> = kids.into_iter().map(|v| rep(host_of(v))).collect();
            to.extend(g.groups[mine].iter().copied().filter(|&k| k != self.me));
            (p.map(|v| rep(host_of(v))), to)
        } else {
            (Some(rep(mine)), Vec::new())
        };
        // Where member k holds the data once it has it.
        let copy_at = |k: usize| if k == root { source } else { dest.cast_const() };
        let data = match parent {
            None => self.peer(source, nbytes, root)?,
            Some(p) => {
                let d = self.own_dest(dest, nbytes)?;
                let msg = self.receive(self.agreed, p)?;
                if small {
                    copy(self.payload(&msg, 0), d, nbytes);
                } else {
                    self.pull(copy_at(p), nbytes, p, d)?;
                    self.send(p, &[], None);
                }
                d.cast_const()
            }
        };
        for &k in &children {
            self.send(k, &[], small.then_some((data, nbytes)));
        }
        if parent.is_none() && writes {
            copy(data, self.own_dest(dest, nbytes)?, nbytes);
        }
        if !small {
            // Our copy stays in place until everyone reading it is done.
            for &k in &children {
                self.receive(self.agreed, k)?;
            }
        }
        Ok(())
    }

    /// Allgather across hosts (module comment): `blocks[k]` = (offset in dest, length) of
    /// member k's contribution, read from its symmetric `source`; `dest` is symmetric, `d` our
    /// own dest (`own_dest` checked it for all blocks). `arrived`: an exchange came first, so
    /// every member is known to be in the call (its source is ready).
    pub(super) fn allgather_across_hosts(
        &self,
        g: &HostGroups,
        (dest, d): (*mut u8, *mut u8),
        source: *const u8,
        blocks: &[(usize, usize)],
        arrived: bool,
    ) -> Result<()> {
        let local = &g.groups[g.group_of[self.me]];
        let first = local[0];
        let total = blocks.iter().map(|&(off, n)| off + n).max().unwrap_or(0);
        // SAFETY: each `add` below: blocks lie inside the `total` bytes of dest checked.
        let at = |off: usize| unsafe { d.add(off) };
        if self.me != first {
            if !arrived {
                self.send(first, &[], None); // our source is ready
            }
            self.receive(self.agreed, first)?; // its dest is complete
            copy(self.peer(dest, total, first)?, d, total);
            self.send(first, &[], None); // done reading it
            return Ok(());
        }
        if !arrived {
            self.receive_each(&local[1..])?;
        }
        for &k in local {
            let (off, n) = blocks[k];
            copy(self.peer(source, n, k)?, at(off), n);
        }
        let others: Vec<usize> = g.groups.iter().map(|m| m[0]).filter(|&f| f != self.me).collect();
        // Our host's blocks are in our dest: the other hosts may read them.
        self.send_each(&others);
        for members in g.groups.iter().filter(|m| m[0] != self.me) {
            self.receive(self.agreed, members[0])?;
            for (off, n) in runs(members.iter().map(|&k| blocks[k])) {
                self.pull(dest.cast_const().wrapping_add(off), n, members[0], at(off))?;
            }
        }
        // Done reading theirs; ours stays until they are done with it, and our members'.
        self.send_each(&others);
        self.receive_each(&others)?;
        self.send_each(&local[1..]);
        self.receive_each(&local[1..])?;
        Ok(())
    }

    /// Alltoall across hosts (module comment) of `nbytes` blocks: block k of dest on member i
    /// = block i of source on member k. `dest`, `source` are symmetric; `d` is our own dest.
    pub(super) fn alltoall_across_hosts(
        &self,
        g: &HostGroups,
        (dest, d): (*mut u8, *mut u8),
        source: *const u8,
        nbytes: usize,
    ) -> Result<()> {
        let local = &g.groups[g.group_of[self.me]];
        let first = local[0];
        if self.me != first {
            self.send(first, &[], None); // in the call: our dest may be written, our source read
            self.receive(self.agreed, first)?; // every other host's blocks are in our dest
            self.copy_from_host(local, d, source, nbytes)?;
            self.send(first, &[], None); // done reading our host's sources
            self.receive(self.agreed, first)?; // so are the others: ours may change again
            return Ok(());
        }
        self.receive_each(&local[1..])?;
        let others: Vec<usize> = g.groups.iter().map(|m| m[0]).filter(|&f| f != self.me).collect();
        self.send_each(&others); // our host is in the call
        self.receive_each(&others)?;
        let mut buf = Vec::new();
        for i in g.groups.iter().filter(|m| m[0] != self.me).flatten().copied() {
            for (off, n) in runs(local.iter().map(|&k| (k * nbytes, nbytes))) {
                buf.clear();
                for k in off / nbytes..(off + n) / nbytes {
                    // Block i of member k's source (k is on this host).
                    let from = self.peer(source.wrapping_add(i * nbytes), nbytes, k)?;
                    // SAFETY: `from` is nbytes readable bytes (translated just now).
                    buf.extend_from_slice(unsafe { std::slice::from_raw_parts(from, nbytes) });
                }
                self.st.net_put(dest.cast_const().wrapping_add(off), buf.as_ptr(), n, self.pe(i))?;
            }
        }
        self.st.quiet();
        self.send_each(&others); // our blocks are in your members' dests
        self.receive_each(&others)?;
        self.send_each(&local[1..]);
        self.copy_from_host(local, d, source, nbytes)?;
        self.receive_each(&local[1..])?;
        self.send_each(&local[1..]);
        Ok(())
    }

    /// Sends each of the members `to` this step's empty message.
    fn send_each(&self, to: &[usize]) {
        for &k in to {
            self.send(k, &[], None);
        }
    }

    /// Receives this step's message from each of the members `from`.
    fn receive_each(&self, from: &[usize]) -> Result<()> {
        for &k in from {
            self.receive(self.agreed, k)?;
        }
        Ok(())
    }

    /// Our blocks from the members of our host (`local`), through the mappings.
    fn copy_from_host(&self, local: &[usize], d: *mut u8, source: *const u8, nbytes: usize) -> Result<()> {
        for &k in local {
            let from = self.peer(source.wrapping_add(self.me * nbytes), nbytes, k)?;
            // SAFETY: block k lies inside our dest (own_dest checked size * nbytes bytes).
            copy(from, unsafe { d.add(k * nbytes) }, nbytes);
        }
        Ok(())
    }

    /// Reduction across hosts (module comment) of `nreduce` elements at symmetric `source`
    /// (`own`: ours, as mapped here) into symmetric `dest`, which may be the source.
    pub(super) fn reduce_across_hosts<T: Copy>(
        &self,
        g: &HostGroups,
        dest: *mut T,
        source: *const T,
        own: *const u8,
        nreduce: usize,
        op: &impl Fn(T, T) -> T,
    ) -> Result<()> {
        let len = nreduce * size_of::<T>();
        let small = len <= self.inline_capacity(0);
        let local = &g.groups[g.group_of[self.me]];
        let rep = local[0];
        let d = self.own_dest(dest.cast(), len)?;
        if self.me != rep {
            // Our part goes to the host's first member; the result comes back from it.
            self.send(rep, &[], small.then_some((own, len)));
            let msg = self.receive(self.agreed, rep)?;
            if small {
                copy(self.payload(&msg, 0), d, len);
                return Ok(());
            }
            self.pull(dest.cast_const().cast(), len, rep, d)?;
            // When any member returns, every member's dest holds the result.
            return self.sync();
        }
        if small {
            self.reduce_small(g, local, d, own, nreduce, op)
        } else {
            self.reduce_large(g, local, (dest, d.cast()), (source, own.cast()), nreduce, op)
        }
    }

    /// The representative's part of a reduction whose data fits a message: partials travel
    /// in the messages.
    fn reduce_small<T: Copy>(
        &self,
        g: &HostGroups,
        local: &[usize],
        d: *mut u8,
        own: *const u8,
        n: usize,
        op: &impl Fn(T, T) -> T,
    ) -> Result<()> {
        let len = n * size_of::<T>();
        let mut acc = InlineBuf::new();
        let a = acc.ptr();
        copy(own, a, len);
        for &k in &local[1..] {
            let msg = self.receive(self.agreed, k)?;
            // SAFETY: `acc` holds len <= inline capacity bytes, aligned for T; the payload len.
            unsafe { fold(a.cast::<T>(), self.payload(&msg, 0), n, op) };
        }
        // `partner`'s partial into ours, theirs the left operand when `theirs_first`.
        let combine = |payload: *const u8, theirs_first: bool| {
            // SAFETY: both buffers hold `len` bytes of n elements; `mix` and `acc` are aligned.
            unsafe {
                if theirs_first {
                    let mut mix = InlineBuf::new();
                    copy(payload, mix.ptr(), len);
                    fold(mix.ptr().cast::<T>(), a, n, op);
                    copy(mix.ptr(), a, len);
                } else {
                    fold(a.cast::<T>(), payload, n, op);
                }
            }
        };
        match g.doubling(self.me) {
            Doubling::Hand(partner) => {
                // Beyond the largest power of two: our partner folds ours in and sends the result.
                self.send(partner, &[], Some((a, len)));
                let msg = self.receive(self.agreed, partner)?;
                copy(self.payload(&msg, 0), a, len);
            }
            Doubling::Exchange { extra, partners } => {
                if let Some(k) = extra {
                    let msg = self.receive(self.agreed, k)?;
                    combine(self.payload(&msg, 0), false);
                }
                for partner in partners {
                    self.send(partner, &[], Some((a, len)));
                    let msg = self.receive(self.agreed, partner)?;
                    combine(self.payload(&msg, 0), partner < self.me);
                }
                if let Some(k) = extra {
                    self.send(k, &[], Some((a, len)));
                }
            }
        }
        for &k in &local[1..] {
            self.send(k, &[], Some((a, len)));
        }
        copy(a, d, len);
        Ok(())
    }

    /// The representative's part of a large reduction: partials are read where they lie (the
    /// host's members' sources through the mappings, other representatives' dests with fabric
    /// gets); "ready"/"fetched" messages and the closing sync keep each buffer in place while
    /// it is read.
    /// `dest` and `source`: the symmetric address and ours as mapped here.
    #[allow(clippy::type_complexity)]
    fn reduce_large<T: Copy>(
        &self,
        g: &HostGroups,
        local: &[usize],
        (dest, d): (*mut T, *mut T),
        (source, own): (*const T, *const T),
        n: usize,
        op: &impl Fn(T, T) -> T,
    ) -> Result<()> {
        let len = n * size_of::<T>();
        copy(own.cast(), d.cast(), len);
        for &k in &local[1..] {
            self.receive(self.agreed, k)?;
            let theirs = self.peer(source.cast(), len, k)?;
            // SAFETY: dest and member k's source (mapped here, same symmetric address) hold n
            // aligned elements; a source never overlaps our dest unless it is our own.
            unsafe { fold_aligned(d, theirs.cast::<T>(), n, op) };
        }
        // Member k's partial (in its dest) fetched here, combined with ours into `mix`.
        let mut mix: Vec<T> = Vec::with_capacity(n);
        let fetch_combined = |mix: &mut Vec<T>, k: usize, theirs_first: bool| -> Result<()> {
            self.pull(dest.cast_const().cast(), len, k, mix.as_mut_ptr().cast())?;
            // SAFETY: the get filled all n elements (plain numbers: any bits are valid); `d`
            // holds n aligned elements and is not `mix`.
            unsafe {
                mix.set_len(n);
                if theirs_first {
                    fold_aligned(mix.as_mut_ptr(), d, n, op);
                } else {
                    fold_aligned(mix.as_mut_ptr(), d, n, &|x, y| op(y, x));
                }
            }
            Ok(())
        };
        let store = |mix: &Vec<T>| copy(mix.as_ptr().cast(), d.cast(), len);
        match g.doubling(self.me) {
            Doubling::Hand(partner) => {
                self.send(partner, &[], None); // our partial is ready in our dest
                self.receive(self.agreed, partner)?; // the result is ready in theirs
                self.pull(dest.cast_const().cast(), len, partner, d.cast())?;
            }
            Doubling::Exchange { extra, partners } => {
                if let Some(k) = extra {
                    // The partner waits for the result before touching its dest: no "fetched".
                    self.receive(self.agreed, k)?;
                    fetch_combined(&mut mix, k, false)?;
                    store(&mix);
                }
                for partner in partners {
                    self.send(partner, &[], None); // ready
                    self.receive(self.agreed, partner)?;
                    fetch_combined(&mut mix, partner, partner < self.me)?;
                    self.send(partner, &[], None); // fetched: it may overwrite its dest
                    self.receive(self.agreed, partner)?;
                    store(&mix);
                }
                if let Some(k) = extra {
                    self.send(k, &[], None);
                }
            }
        }
        self.send_each(&local[1..]);
        self.sync()
    }
}

#[cfg(test)]
mod tests {
    use super::{binomial, doubling, runs, Doubling};

    #[test]
    fn adjacent_blocks_merge_into_runs() {
        assert_eq!(runs([(0, 8), (8, 8), (24, 8), (32, 0), (32, 4)].into_iter()), vec![(0, 16), (24, 12)]);
        assert_eq!(runs([(16, 8), (0, 8)].into_iter()), vec![(16, 8), (0, 8)], "only in the order given");
        assert!(runs([(4, 0)].into_iter()).is_empty());
    }

    #[test]
    fn binomial_tree_reaches_every_node_once() {
        for n in 1..40 {
            let mut seen = vec![0; n];
            for v in 0..n {
                let (parent, kids) = binomial(v, n);
                assert_eq!(parent.is_none(), v == 0);
                for c in kids {
                    assert_eq!(binomial(c, n).0, Some(v), "n {n}: {c}'s parent");
                    seen[c] += 1;
                }
            }
            assert!(seen[1..].iter().all(|&s| s == 1) && seen[0] == 0, "n {n}: {seen:?}");
            let depth = |mut v: usize| {
                let mut d = 0;
                while let Some(p) = binomial(v, n).0 {
                    v = p;
                    d += 1;
                }
                d
            };
            assert!((0..n).all(|v| depth(v) <= n.next_power_of_two().trailing_zeros()), "log depth at n {n}");
        }
    }

    #[test]
    fn recursive_doubling_gives_every_node_the_same_result() {
        for n in 1..40usize {
            let ids: Vec<usize> = (0..n).map(|v| 100 + v).collect();
            let plans: Vec<Doubling> = (0..n).map(|v| doubling(v, &ids)).collect();
            // Each node's partial as the list of contributions in operand order: combining puts
            // the lower node's partial on the left, so equal lists mean bit-identical results.
            let mut part: Vec<Vec<usize>> = (0..n).map(|v| vec![v]).collect();
            let node = |id: usize| id - 100;
            let mut rounds = None;
            for (v, plan) in plans.iter().enumerate() {
                if let Doubling::Exchange { extra: Some(k), .. } = plan {
                    assert_eq!(plans[node(*k)], Doubling::Hand(ids[v]), "n {n}: {k} hands to {v}");
                    let theirs = part[node(*k)].clone();
                    part[v].extend(theirs);
                }
                if let Doubling::Exchange { partners, .. } = plan {
                    assert_eq!(*rounds.get_or_insert(partners.len()), partners.len(), "n {n}: same rounds");
                }
            }
            for r in 0..rounds.unwrap_or(0) {
                let before = part.clone();
                for (v, plan) in plans.iter().enumerate() {
                    if let Doubling::Exchange { partners, .. } = plan {
                        let w = node(partners[r]);
                        match &plans[w] {
                            Doubling::Exchange { partners: theirs, .. } => assert_eq!(theirs[r], ids[v], "n {n}: pairs"),
                            Doubling::Hand(_) => panic!("n {n}: {v} exchanges with a handing node {w}"),
                        }
                        part[v] = if w < v { [&before[w][..], &before[v][..]].concat() } else { [&before[v][..], &before[w][..]].concat() };
                    }
                }
            }
            for (v, plan) in plans.iter().enumerate() {
                if let Doubling::Hand(k) = plan {
                    part[v] = part[node(*k)].clone();
                }
            }
            let mut all = part[0].clone();
            all.sort_unstable();
            assert_eq!(all, (0..n).collect::<Vec<_>>(), "n {n}: every partial once");
            assert!(part.iter().all(|x| *x == part[0]), "n {n}: {part:?}");
            assert!(rounds.unwrap() <= n.ilog2() as usize, "n {n}: log2 rounds");
        }
    }
}
