//! The first on-stream collectives: the start-up warm-up of their kernels, and where a first
//! call's time goes.
//!
//! Warm-up (RSHMEM_COLL_WARM=1, the default): at init, where the modules load as machine code
//! (no JIT compile), coll.ptx, ll.ptx and the u32 reduction module are loaded, the device
//! state is written into ll.ptx, and rk_gather, rk_ll and the u32 sum kernel are each launched
//! once with nothing to do on the library's stream (they return at once, touching nothing):
//! module loading, lazy function loading and the driver's first-launch work are then done
//! before the program's first collective, and the launches overlap the rest of init (nothing
//! waits for them). Where a module would be JIT-compiled (0.1-1 s) nothing is warmed: that
//! waits for a collective that uses it.
//!
//! Why on init's thread (2 × H200, results/gpu-compare-2026-11-28e-first): the same warm-up on
//! a thread of its own took init 37.0 -> 30.1 ms (median of 3), but took 10.5 ms there (module
//! loads wait behind the heap's own mapping at the end of init), so a first collective called
//! within that time waited for it: first 64 B broadcast 0.14 -> 0.36 ms (median), 3.5-7.3 ms
//! in the worst runs.
//!
//! Trace (RSHMEM_DEBUG=INFO): the warm-up and the job's first FIRST_TRACED on-stream
//! collectives (any routine) print one line per phase with its µs, then the total. A traced
//! call synchronizes its stream after the launch to time the kernel to its end, so timing runs
//! are made without RSHMEM_DEBUG.

use std::cell::RefCell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::{cu, GpuState};
use crate::abi::RSHMEM_DEVICE_FLAG_ALL_P2P;
use crate::cuda::coll::{GatherArgs, Kind, LlArgs, RedOp, ReduceArgs, SyncArgs, LL_BROADCAST, REDUCE_DIRECT};
use crate::cuda::{self, sys::CUstream, StreamHandle};
use crate::env::LogLevel;

/// On-stream collectives traced phase by phase (the first ones of the job).
pub const FIRST_TRACED: usize = 3;

/// On-stream collectives started so far (traced or not).
static CALLS: AtomicUsize = AtomicUsize::new(0);

/// The element kind whose reduction module the warm-up loads: u32 serves sum, product and the
/// bitwise operators of every 32-bit integer type (int, unsigned, int32_t, uint32_t:
/// Kind::for_op). Its load and first launch cost a first int sum reduction 0.36-0.50 ms (2 ×
/// H200), the same at init; other kinds load with their first reduction (f32: 0.25-0.32 ms).
pub const WARM_KIND: Kind = Kind::U32;

struct Trace {
    what: String,
    start: Instant,
    last: Instant,
    phases: Vec<(&'static str, Duration)>,
    /// The stream to synchronize once the kernel is launched (None: nothing to wait for).
    stream: Option<CUstream>,
    launched: bool,
}

thread_local! {
    /// The trace of the call running on this thread, if it is traced.
    static CURRENT: RefCell<Option<Trace>> = const { RefCell::new(None) };
}

/// One traced (or untraced) call: prints its phases when dropped.
pub struct Traced {
    on: bool,
}

fn begin(what: impl FnOnce() -> String, stream: Option<CUstream>) -> Traced {
    let on = CURRENT.with(|c| {
        let mut c = c.borrow_mut();
        if c.is_some() {
            return false; // nested (a blocking form inside a traced call): the outer one times it
        }
        let now = Instant::now();
        *c = Some(Trace { what: what(), start: now, last: now, phases: Vec::new(), stream, launched: false });
        true
    });
    Traced { on }
}

/// The trace of one on-stream collective (`what`: its kind, `bytes` per member) on `stream`:
/// on for the job's first FIRST_TRACED of them when RSHMEM_DEBUG is INFO or TRACE.
pub fn first_call(what: &str, bytes: usize, stream: StreamHandle) -> Traced {
    let n = CALLS.fetch_add(1, Ordering::Relaxed);
    if n >= FIRST_TRACED || !crate::log::enabled(LogLevel::Info) {
        return Traced { on: false };
    }
    begin(|| format!("first on-stream collectives: call {} ({what}, {bytes} bytes)", n + 1), Some(stream.raw()))
}

/// Ends the current phase of this thread's traced call (nothing when untraced).
pub fn mark(phase: &'static str) {
    CURRENT.with(|c| {
        if let Some(t) = c.borrow_mut().as_mut() {
            let now = Instant::now();
            t.phases.push((phase, now - t.last));
            t.last = now;
        }
    });
}

impl Traced {
    /// The kernel is enqueued: ends the launch phase; the kernel's own time is taken when the
    /// trace ends.
    pub fn launched(&self) {
        if self.on {
            mark("launch (cuLaunchKernel returned)");
            CURRENT.with(|c| c.borrow_mut().as_mut().map(|t| t.launched = true));
        }
    }
}

impl Drop for Traced {
    fn drop(&mut self) {
        if !self.on {
            return;
        }
        let Some(t) = CURRENT.with(|c| c.borrow_mut().take()) else { return };
        let mut t = t;
        if let (true, Some(s)) = (t.launched, t.stream) {
            let synced = cuda::stream_synchronize(s);
            let now = Instant::now();
            t.phases.push((
                if synced.is_ok() {
                    "kernel to its end (stream synchronized for this trace)"
                } else {
                    "kernel (stream synchronize failed)"
                },
                now - t.last,
            ));
            t.last = now;
        }
        for (phase, d) in &t.phases {
            crate::log::info(&format!("{}: {phase}: {} µs", t.what, d.as_micros()));
        }
        crate::log::info(&format!("{}: total {} µs", t.what, (t.last - t.start).as_micros()));
    }
}

impl GpuState {
    /// The start-up warm-up of the on-stream collectives (see the module's note). Failures
    /// are not fatal: they leave the loading to the first collective, which reports its own.
    pub fn warm_collectives(&self) {
        use crate::cuda::image::loads_without_jit;
        if !crate::env::enabled(crate::env::COLL_WARM)
            || !loads_without_jit(crate::cuda::coll::COLL)
            || !loads_without_jit(crate::cuda::coll::LL)
        {
            return;
        }
        let _trace = if crate::log::enabled(LogLevel::Info) {
            begin(|| "start-up warm-up of the on-stream collectives".to_string(), None)
        } else {
            Traced { on: false }
        };
        if let Err(e) = self.warm() {
            crate::log::warn(&format!(
                "nvshmem_init: the warm-up of the on-stream collectives failed (the first collective loads them instead): {e}"
            ));
        }
    }

    fn warm(&self) -> crate::error::Result<()> {
        let k = self.coll_kernels()?;
        mark("load coll.ptx");
        let sync =
            SyncArgs { flags: 0, steps: 0, heap_stride: 0, tickets: 0, chunks: 0, mype: 0, start: 0, stride: 0, size: 0, my: 0, total: 0 };
        let empty = GatherArgs { s: sync, dest: 0, src: 0, nbytes: 0, dest_step: 0, src_off: 0, only: -1, push: 0 };
        cu(self.ctx.make_current())?;
        // SAFETY: zero bytes: rk_gather returns at its first line and touches no memory.
        cu(unsafe { k.gather(self.stream.0, 1, &empty) })?;
        mark("first launch of rk_gather (zero bytes)");
        if self.dstate.flags & RSHMEM_DEVICE_FLAG_ALL_P2P != 0 {
            // The small collectives' kernel serves all-P2P jobs alone (ll_fits).
            let l = self.ll_kernel()?; // marks its own phases (coll.rs)
            let empty = LlArgs { dest: 0, src: 0, nbytes: 0, team: 0, what: LL_BROADCAST, root: 0, pad: 0 };
            cu(self.ctx.make_current())?;
            // SAFETY: zero bytes: rk_ll returns at its first line and touches no memory.
            cu(unsafe { l.launch(self.stream.0, &empty) })?;
            mark("first launch of rk_ll (zero bytes)");
        }
        let none = ReduceArgs { s: sync, dest: 0, src: 0, n: 0, src_off: 0, stage: 0, mode: REDUCE_DIRECT, chunks: 0 };
        cu(self.ctx.make_current())?;
        // SAFETY: no elements: the reduction kernel returns at its first line and touches no
        // memory (the launch loads the kind's module first).
        cu(unsafe { k.reduce(self.stream.0, 1, RedOp::Sum, WARM_KIND, &none) })?;
        mark("load reduce_u32.ptx, first launch of its sum kernel (no elements)");
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_warmed_kind_serves_int_sums_with_its_own_sum_kernel() {
        for k in [Kind::I32, Kind::U32] {
            assert_eq!(k.for_op(RedOp::Sum), WARM_KIND, "{k:?}");
        }
        assert_eq!(WARM_KIND.for_op(RedOp::Sum), WARM_KIND);
        assert_eq!(WARM_KIND.name(), "u32"); // the module the trace line names
    }

    #[test]
    fn a_trace_records_its_phases_in_order_and_ends_when_dropped() {
        let t = begin(|| "test".to_string(), None);
        assert!(t.on);
        std::thread::sleep(Duration::from_millis(2));
        mark("one");
        mark("two");
        // Nested calls are timed by the outer one.
        assert!(!begin(|| "inner".to_string(), None).on);
        let (names, first) = CURRENT.with(|c| {
            let c = c.borrow();
            let t = c.as_ref().expect("current");
            (t.phases.iter().map(|p| p.0).collect::<Vec<_>>(), t.phases[0].1)
        });
        assert_eq!(names, ["one", "two"]);
        assert!(first >= Duration::from_millis(2), "{first:?}");
        drop(t);
        assert!(CURRENT.with(|c| c.borrow().is_none()));
        mark("after"); // no trace: nothing recorded, no panic
        assert!(CURRENT.with(|c| c.borrow().is_none()));
    }
}
