//! Where the main program's writable data (.data, .bss) lies in memory, and which part of it the
//! dynamic linker writes (and must therefore stay private to the process).

use std::ffi::c_void;

/// The main executable's writable data: `[start, end)` page-aligned (what can be remapped:
/// never a RELRO page), and `[usable_start, usable_end)` inside it, the program's own data
/// that peers may address: no GOT, no `.got.plt` (lazy binding writes it), no `.dynamic`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DataRange {
    pub start: usize,
    pub end: usize,
    pub usable_start: usize,
    pub usable_end: usize,
}

struct Found {
    range: Option<DataRange>,
}

/// One entry of a dynamic section (elf.h's Elf64_Dyn: a tag and a value or address).
#[repr(C)]
struct Dyn {
    d_tag: i64,
    d_val: u64,
}

const DT_NULL: i64 = 0;
const DT_PLTRELSZ: i64 = 2;
const DT_PLTGOT: i64 = 3;
const DT_RELA: i64 = 7;
const DT_PLTREL: i64 = 20;

/// The largest piece of `[start, end)` that overlaps none of `holes`.
fn largest_gap(start: usize, end: usize, holes: &[(usize, usize)]) -> (usize, usize) {
    let mut cuts: Vec<(usize, usize)> = holes.iter().map(|&(s, e)| (s.max(start), e.min(end))).filter(|(s, e)| s < e).collect();
    cuts.sort();
    let (mut best, mut at) = ((start, start), start);
    for (s, e) in cuts.into_iter().chain([(end, end)]) {
        if s > at && s - at > best.1 - best.0 {
            best = (at, s);
        }
        at = at.max(e);
    }
    best
}

/// `.got.plt` of the program whose dynamic section is `dynamic` (loaded at `base`): its start
/// (DT_PLTGOT) and length (three reserved words, then one per PLT relocation).
///
/// # Safety
/// `dynamic` must point at the program's loaded, DT_NULL-terminated dynamic section.
unsafe fn plt_got(dynamic: *const Dyn, base: usize, writable: (usize, usize)) -> Option<(usize, usize)> {
    let (mut got, mut relsz, mut entry) = (None, 0usize, 24usize);
    let mut d = dynamic;
    while (*d).d_tag != DT_NULL {
        match (*d).d_tag {
            DT_PLTGOT => got = Some((*d).d_val as usize),
            DT_PLTRELSZ => relsz = (*d).d_val as usize,
            DT_PLTREL => entry = if (*d).d_val as i64 == DT_RELA { 24 } else { 16 },
            _ => {}
        }
        d = d.add(1);
    }
    // glibc may already have added the load address to the entry in place; take whichever
    // reading lies in the writable segment.
    let inside = |a: usize| a >= writable.0 && a < writable.1;
    let got = got.map(|g| if inside(g) { g } else { base.wrapping_add(g) }).filter(|g| inside(*g))?;
    Some((got, got + 8 * (3 + relsz / entry)))
}

extern "C" fn visit(info: *mut libc::dl_phdr_info, _size: libc::size_t, data: *mut c_void) -> libc::c_int {
    // SAFETY: dl_iterate_phdr passes a valid info pointer and our own `Found` as data.
    let (info, found) = unsafe { (&*info, &mut *(data as *mut Found)) };
    let page = super::shm::page_size();
    let base = info.dlpi_addr as usize;
    let mut relro: Option<(usize, usize)> = None;
    let mut dynamic: Option<(usize, usize)> = None;
    let mut range: Option<(usize, usize)> = None;
    for i in 0..info.dlpi_phnum as usize {
        // SAFETY: dlpi_phdr points at dlpi_phnum program headers.
        let ph = unsafe { &*info.dlpi_phdr.add(i) };
        let start = base + ph.p_vaddr as usize;
        let end = start + ph.p_memsz as usize;
        match ph.p_type {
            libc::PT_GNU_RELRO => relro = Some((start, end)),
            libc::PT_DYNAMIC => dynamic = Some((start, end)),
            libc::PT_LOAD if ph.p_flags & libc::PF_W != 0 => {
                range = Some(match range {
                    None => (start, end),
                    Some((s, e)) => (s.min(start), e.max(end)),
                })
            }
            _ => {}
        }
    }
    let Some((s, e)) = range else { return 1 };
    // What the dynamic linker writes after start-up, or protects: off-limits to peers.
    let mut holes: Vec<(usize, usize)> = relro.into_iter().chain(dynamic).collect();
    if let Some((d, _)) = dynamic {
        // SAFETY: PT_DYNAMIC of the loaded main program is its mapped dynamic section.
        holes.extend(unsafe { plt_got(d as *const Dyn, base, (s, e)) });
    }
    // Remap whole pages, never a RELRO page (that would make it writable again).
    let relro_end = relro.map(|(_, end)| end).unwrap_or(0);
    let start = if relro_end > s { relro_end.div_ceil(page) * page } else { s / page * page };
    let end = e.div_ceil(page) * page;
    let (usable_start, usable_end) = largest_gap(start.max(s), e, &holes);
    if end > start && usable_end > usable_start {
        found.range = Some(DataRange { start, end, usable_start, usable_end });
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_largest_gap_skips_every_hole() {
        assert_eq!(largest_gap(0, 100, &[]), (0, 100));
        assert_eq!(largest_gap(0, 100, &[(0, 10), (10, 24)]), (24, 100));
        assert_eq!(largest_gap(0, 100, &[(60, 70)]), (0, 60));
        assert_eq!(largest_gap(0, 100, &[(5, 8), (50, 52), (20, 30)]), (52, 100));
        assert_eq!(largest_gap(10, 20, &[(0, 15)]), (15, 20));
    }

    #[test]
    fn this_test_binary_keeps_its_got_private() {
        let r = main_program_data().expect("the test binary has data");
        assert!(r.start <= r.usable_start && r.usable_end <= r.end, "{r:x?}");
        assert_eq!(r.start % crate::sys::shm::page_size(), 0);
        static mut PROBE: [u8; 16] = [1; 16];
        let probe = std::ptr::addr_of!(PROBE) as usize;
        assert!(probe >= r.usable_start && probe < r.usable_end, "a .data global {probe:#x} is outside {r:x?}");
    }
}
