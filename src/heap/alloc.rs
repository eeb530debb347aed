//! The symmetric heap allocator. It is deterministic: every PE runs it over the same sequence of
//! calls and so hands out the same offsets, which is what makes an object symmetric.
//! First fit over a free list kept in offset order, with neighbours merged on free.

use std::collections::{BTreeMap, HashMap};

/// Smallest alignment of any block (the fast copy paths use 16-byte accesses).
pub const MIN_ALIGN: usize = 16;

#[derive(Clone, Debug)]
pub struct Allocator {
    /// offset -> length of each free block; blocks never touch (they are merged).
    free: BTreeMap<usize, usize>,
    /// offset -> length of each block handed out.
    used: HashMap<usize, usize>,
    start: usize,
    end: usize,
}

fn round_up(x: usize, a: usize) -> Option<usize> {
    x.checked_add(a - 1).map(|v| v / a * a)
}

impl Allocator {
    /// Manages offsets [start, end).
    pub fn new(start: usize, end: usize) -> Allocator {
        let start = round_up(start, MIN_ALIGN).unwrap();
        let mut free = BTreeMap::new();
        if end > start {
            free.insert(start, end - start);
        }
        Allocator { free, used: HashMap::new(), start, end }
    }

    /// Reserves `size` bytes aligned to `align` (a power of two); None when nothing fits.
    pub fn alloc(&mut self, size: usize, align: usize) -> Option<usize> {
        debug_assert!(align.is_power_of_two());
        let align = align.max(MIN_ALIGN);
        let size = round_up(size.max(1), MIN_ALIGN)?;
        let (block, blen, at) = self.free.iter().find_map(|(&off, &len)| {
            let at = round_up(off, align)?;
            (at.checked_add(size)? <= off + len).then_some((off, len, at))
        })?;
        self.free.remove(&block);
        if at > block {
            self.free.insert(block, at - block);
        }
        let tail = block + blen - (at + size);
        if tail > 0 {
            self.free.insert(at + size, tail);
        }
        self.used.insert(at, size);
        Some(at)
    }

    /// Returns a block and its size; None if `offset` is not the start of a live block.
    pub fn free(&mut self, offset: usize) -> Option<usize> {
        let size = self.used.remove(&offset)?;
        let mut start = offset;
        let mut len = size;
        if let Some((&prev, &plen)) = self.free.range(..offset).next_back() {
            if prev + plen == offset {
                self.free.remove(&prev);
                start = prev;
                len += plen;
            }
        }
        if let Some(&nlen) = self.free.get(&(offset + size)) {
            self.free.remove(&(offset + size));
            len += nlen;
        }
        self.free.insert(start, len);
        Some(size)
    }

    /// The usable size of the live block starting at `offset`.
    pub fn size_of(&self, offset: usize) -> Option<usize> {
        self.used.get(&offset).copied()
    }

    /// Bytes handed out now.
    pub fn in_use(&self) -> usize {
        self.used.values().sum()
    }

    /// Bytes this allocator manages.
    pub fn capacity(&self) -> usize {
        self.end - self.start
    }

    /// The largest block that could be allocated now.
    pub fn largest_free(&self) -> usize {
        self.free.values().copied().max().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn first_fit_reuses_and_merges() {
        let mut a = Allocator::new(64, 64 + 1024);
        let x = a.alloc(100, 16).unwrap();
        let y = a.alloc(100, 16).unwrap();
        assert_eq!(x, 64);
        assert_eq!(y, 64 + 112);
        assert_eq!(a.free(x), Some(112));
        assert_eq!(a.alloc(50, 16), Some(64));
        assert_eq!(a.free(y), Some(112));
        assert_eq!(a.free(y), None);
        assert_eq!(a.free(64), Some(64));
        assert_eq!(a.largest_free(), 1024);
        assert_eq!(a.in_use(), 0);
    }

    #[test]
    fn alignment_and_exhaustion() {
        let mut a = Allocator::new(0, 4096);
        let _ = a.alloc(16, 16).unwrap();
        assert_eq!(a.alloc(16, 1024), Some(1024));
        assert_eq!(a.alloc(8192, 16), None);
        assert_eq!(a.alloc(usize::MAX - 3, 16), None);
    }

    #[derive(Clone, Debug)]
    enum Op {
        Alloc(usize, u32),
        Free(usize),
    }

    fn ops() -> impl Strategy<Value = Vec<Op>> {
        prop::collection::vec(
            prop_oneof![(1usize..5000, 4u32..12).prop_map(|(s, a)| Op::Alloc(s, a)), (0usize..64).prop_map(Op::Free),],
            1..200,
        )
    }

    proptest! {
        /// Two allocators fed the same calls hand out the same offsets (symmetry), blocks never
        /// overlap, respect alignment, and freeing everything restores one free block.
        #[test]
        fn deterministic_disjoint_aligned(seq in ops()) {
            let mut a = Allocator::new(256, 256 + (1 << 20));
            let mut b = a.clone();
            let mut live: Vec<(usize, usize)> = Vec::new();
            for op in seq {
                match op {
                    Op::Alloc(size, align_log) => {
                        let align = 1usize << align_log;
                        let x = a.alloc(size, align);
                        prop_assert_eq!(x, b.alloc(size, align));
                        if let Some(off) = x {
                            prop_assert_eq!(off % align.max(MIN_ALIGN), 0);
                            for &(o, s) in &live {
                                prop_assert!(off + size <= o || o + s <= off, "overlap");
                            }
                            live.push((off, size));
                        }
                    }
                    Op::Free(i) if !live.is_empty() => {
                        let (off, _) = live.remove(i % live.len());
                        prop_assert!(a.free(off).is_some());
                        prop_assert!(b.free(off).is_some());
                    }
                    Op::Free(_) => {}
                }
            }
            for (off, _) in live {
                a.free(off).unwrap();
            }
            prop_assert_eq!(a.largest_free(), 1 << 20);
        }
    }
}
