//! Packing of puts. Over tcp each write costs a system call on both sides whatever its size,
//! so a 1 KiB put cost about as much as a 16 KiB one, and a 16 KiB one as a 256 KiB one
//! (stage.rs). A put of at most `PACK_MAX` bytes
//! is therefore copied into a staging chunk (stage.rs) that stays open for more: later puts to
//! the same peer and key join it, extending its last remote piece when they continue it, else
//! as a new piece (up to the provider's `rma_iov_limit`), and the chunk goes out as one
//! fi_writemsg scattering to those pieces.
//!
//! Order: the open pack is sent before anything else is posted on the endpoint (`Outbox::send`
//! is called first by every other operation, by fence, quiet and progress), so fence, quiet
//! and put-with-signal see the packed puts as if each had been posted at its call. A put that
//! overlaps a piece of the open pack closes it first: the order of pieces inside one write is
//! not specified. A pack left open by a PE that then computes is sent by the progress thread
//! once it is `PACK_AGE` old, so a peer waiting for the data gets it without our help.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use super::stage::{Stage, CHUNK};
use super::{sys, Inner, Peer};
use crate::error::Result;

/// Puts up to this size are packed (a quarter of a chunk: four fill one write).
pub(super) const PACK_MAX: usize = CHUNK / 4;
/// Most remote pieces in one pack (libfabric providers offer 1 to 4; tcp: 4).
const MAX_PIECES: usize = 4;
/// How long an open pack waits for more puts before the progress thread sends it.
pub(super) const PACK_AGE: Duration = Duration::from_micros(30);

/// An open pack: a claimed chunk holding `used` bytes for the pieces in `pieces[..count]`.
struct Pack {
    peer: Peer,
    key: u64,
    slot: usize,
    used: usize,
    pieces: [sys::fi_rma_iov; MAX_PIECES],
    count: usize,
    opened: Instant,
}

impl Pack {
    /// Makes room for `len` bytes bound for `addr`; returns their offset in the chunk, or None
    /// when this pack cannot take them.
    fn add(&mut self, peer: Peer, key: u64, addr: u64, len: usize, limit: usize) -> Option<usize> {
        if self.peer != peer || self.key != key || self.used + len > CHUNK {
            return None;
        }
        let end = addr + len as u64;
        if self.pieces[..self.count].iter().any(|p| addr < p.addr + p.len as u64 && p.addr < end) {
            return None;
        }
        let last = &mut self.pieces[self.count - 1];
        if last.addr + last.len as u64 == addr {
            last.len += len;
        } else if self.count < limit {
            self.pieces[self.count] = sys::fi_rma_iov { addr, len, key };
            self.count += 1;
        } else {
            return None;
        }
        let at = self.used;
        self.used += len;
        Some(at)
    }
}

/// The staging ring and the open pack of one endpoint, shared with its progress thread.
pub(super) struct Outbox {
    pub(super) stage: OnceLock<Stage>,
    open: Mutex<Option<Pack>>,
    /// Whether a pack is open (read without the lock by every operation).
    has_open: AtomicBool,
}

impl Outbox {
    pub(super) fn new() -> Outbox {
        Outbox { stage: OnceLock::new(), open: Mutex::new(None), has_open: AtomicBool::new(false) }
    }

    /// The staging ring, set up at its first use.
    pub(super) fn stage(&self, inner: &std::sync::Arc<Inner>) -> Result<&Stage> {
        if let Some(s) = self.stage.get() {
            return Ok(s);
        }
        let s = Stage::new(inner)?;
        Ok(self.stage.get_or_init(|| s))
    }

    /// Copies `src` (bound for `addr` under `key` on `peer`) into the open pack, or closes that
    /// one and opens another. Returns whether a new pack was opened.
    pub(super) fn put(&self, inner: &std::sync::Arc<Inner>, peer: Peer, key: u64, addr: u64, src: &[u8]) -> Result<bool> {
        let stage = self.stage(inner)?;
        let limit = inner.info.rma_iov_limit.clamp(1, MAX_PIECES);
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(at) = open.as_mut().and_then(|p| p.add(peer, key, addr, src.len(), limit)) {
            let slot = open.as_ref().map_or(0, |p| p.slot);
            // SAFETY: the open pack holds the slot; `at + len` <= CHUNK (Pack::add).
            unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), stage.chunk(slot).add(at), src.len()) };
            return Ok(false);
        }
        if let Some(p) = open.take() {
            self.post(inner, stage, p)?;
        }
        let slot = inner.claim_chunk(stage)?;
        // SAFETY: we hold the slot, whose chunk has CHUNK >= PACK_MAX bytes.
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), stage.chunk(slot), src.len()) };
        let mut pieces = [sys::fi_rma_iov::default(); MAX_PIECES];
        pieces[0] = sys::fi_rma_iov { addr, len: src.len(), key };
        *open = Some(Pack { peer, key, slot, used: src.len(), pieces, count: 1, opened: Instant::now() });
        self.has_open.store(true, Ordering::SeqCst);
        Ok(true)
    }

    pub(super) fn is_open(&self) -> bool {
        self.has_open.load(Ordering::SeqCst)
    }

    /// Sends the open pack, if any: every operation calls this before it posts anything.
    #[inline]
    pub(super) fn send(&self, inner: &Inner) -> Result<()> {
        if !self.has_open.load(Ordering::SeqCst) {
            return Ok(());
        }
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        match (open.take(), self.stage.get()) {
            (Some(p), Some(stage)) => self.post(inner, stage, p),
            _ => Ok(()),
        }
    }

    /// For the progress thread: sends the open pack if it is at least `PACK_AGE` old (unless
    /// an application thread holds it just now); else says how long it may still wait.
    pub(super) fn send_if_old(&self, inner: &Inner) -> Option<Duration> {
        if !self.has_open.load(Ordering::SeqCst) {
            return None;
        }
        let Ok(mut open) = self.open.try_lock() else { return Some(Duration::from_micros(5)) };
        let age = open.as_ref()?.opened.elapsed();
        if age < PACK_AGE {
            return Some(PACK_AGE - age);
        }
        if let (Some(p), Some(stage)) = (open.take(), self.stage.get()) {
            if let Err(e) = self.post(inner, stage, p) {
                // Every later operation fails with the first failure.
                inner.failure.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(e.message);
            }
        }
        None
    }

    /// Posts pack `p` as one write. The open-pack lock is held, and `has_open` is cleared only
    /// once the write is posted: an operation that finds it clear may be posted at once, and
    /// a quiet at once counts the pack's write among those to wait for.
    fn post(&self, inner: &Inner, stage: &Stage, p: Pack) -> Result<()> {
        let chunk = stage.chunk(p.slot);
        let completion =
            sys::FI_COMPLETION | if inner.info.delivery_complete { sys::FI_DELIVERY_COMPLETE } else { sys::FI_TRANSMIT_COMPLETE };
        // SAFETY: the chunk stays ours (slot busy) until the write's completion frees it; the
        // pieces' lengths add up to `used`.
        let posted = inner.post_write("fi_writemsg", || unsafe {
            sys::writemsg(
                inner.ep,
                chunk.cast_const().cast(),
                p.used,
                stage.desc(),
                p.peer.0,
                &p.pieces[..p.count],
                stage.context(p.slot),
                completion,
            )
        });
        if posted.is_err() {
            stage.slot(p.slot).free();
        }
        self.has_open.store(false, Ordering::SeqCst);
        posted
    }
}
