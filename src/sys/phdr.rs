//! Where the main program's writable data (.data, .bss) lies in memory.

use std::ffi::c_void;

/// Page-aligned range [start, end) of the main executable's writable, non-RELRO data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DataRange {
    pub start: usize,
    pub end: usize,
}

struct Found {
    range: Option<DataRange>,
}

extern "C" fn visit(info: *mut libc::dl_phdr_info, _size: libc::size_t, data: *mut c_void) -> libc::c_int {
    // SAFETY: dl_iterate_phdr passes a valid info pointer and our own `Found` as data.
    let (info, found) = unsafe { (&*info, &mut *(data as *mut Found)) };
    let page = super::shm::page_size();
    let mut relro_end = 0usize;
    let mut range: Option<(usize, usize)> = None;
    for i in 0..info.dlpi_phnum as usize {
        // SAFETY: dlpi_phdr points at dlpi_phnum program headers.
        let ph = unsafe { &*info.dlpi_phdr.add(i) };
        let start = info.dlpi_addr as usize + ph.p_vaddr as usize;
        let end = start + ph.p_memsz as usize;
        if ph.p_type == libc::PT_GNU_RELRO {
            relro_end = relro_end.max(end);
        }
        if ph.p_type == libc::PT_LOAD && ph.p_flags & libc::PF_W != 0 {
            range = Some(match range {
                None => (start, end),
                Some((s, e)) => (s.min(start), e.max(end)),
            });
        }
    }
    if let Some((s, e)) = range {
        // Skip the part the dynamic linker made read-only after relocation.
        let start = if relro_end > s { relro_end.div_ceil(page) * page } else { s / page * page };
        let end = e.div_ceil(page) * page;
        if end > start {
            found.range = Some(DataRange { start, end });
        }
    }
    1 // the first object is the main program: stop here
}

/// The main program's writable data range, if it has one.
pub fn main_program_data() -> Option<DataRange> {
    let mut found = Found { range: None };
    // SAFETY: `visit` only reads the headers it is given and writes into `found`.
    unsafe { libc::dl_iterate_phdr(Some(visit), (&mut found as *mut Found).cast()) };
    found.range
}
