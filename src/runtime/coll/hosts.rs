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
        let reps: Vec<usize> = g.groups.iter().map(|m| m[0]).collect();
        let v = g.group_of[self.me];
        let h = reps.len();
        let p = 1 << h.ilog2();
        if v >= p {
            // Beyond the largest power of two: our partner folds ours in and sends the result.
            self.send(reps[v - p], &[], Some((a, len)));
            let msg = self.receive(self.agreed, reps[v - p])?;
            copy(self.payload(&msg, 0), a, len);
        } else {
            if v + p < h {
                let msg = self.receive(self.agreed, reps[v + p])?;
                combine(self.payload(&msg, 0), false);
            }
            let mut mask = 1;
            while mask < p {
                let partner = v ^ mask;
                self.send(reps[partner], &[], Some((a, len)));
                let msg = self.receive(self.agreed, reps[partner])?;
                combine(self.payload(&msg, 0), partner < v);
                mask <<= 1;
            }
            if v + p < h {
                self.send(reps[v + p], &[], Some((a, len)));
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
        let reps: Vec<usize> = g.groups.iter().map(|m| m[0]).collect();
        let v = g.group_of[self.me];
        let h = reps.len();
        let p = 1 << h.ilog2();
        if v >= p {
            let partner = reps[v - p];
            self.send(partner, &[], None); // our partial is ready in our dest
            self.receive(self.agreed, partner)?; // the result is ready in theirs
            self.pull(dest.cast_const().cast(), len, partner, d.cast())?;
        } else {
            if v + p < h {
                // The partner waits for the result before touching its dest: no "fetched".
                self.receive(self.agreed, reps[v + p])?;
                fetch_combined(&mut mix, reps[v + p], false)?;
                store(&mix);
            }
            let mut mask = 1;
            while mask < p {
                let partner = reps[v ^ mask];
                self.send(partner, &[], None); // ready
                self.receive(self.agreed, partner)?;
                fetch_combined(&mut mix, partner, (v ^ mask) < v)?;
                self.send(partner, &[], None); // fetched: it may overwrite its dest
                self.receive(self.agreed, partner)?;
                store(&mix);
                mask <<= 1;
            }
            if v + p < h {
                self.send(reps[v + p], &[], None);
            }
        }
        for &k in &local[1..] {
            self.send(k, &[], None);
        }
        self.sync()
    }
}

#[cfg(test)]
mod tests {
    use super::binomial;

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
}
