//! Host collectives over shared memory (to be written).
