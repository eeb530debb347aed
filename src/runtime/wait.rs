//! How a PE waits for another: poll briefly, then give the core away between polls (jobs often
//! run more PEs than cores), and leave at once if any PE called shmem_global_exit.

use super::State;

impl State {
    /// Returns when `done()` is true.
    #[inline]
    pub fn wait_for(&self, mut done: impl FnMut() -> bool) {
        let mut spins = 0u32;
        while !done() {
            if spins < self.cfg.wait_spins {
                spins += 1;
                std::hint::spin_loop();
            } else {
                self.check_global_exit();
                std::thread::yield_now();
            }
        }
    }
}
