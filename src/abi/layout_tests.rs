//! The C view of the ABI structs must match Rust's: compile a C file of static assertions,
//! generated from Rust's sizes and offsets, against the committed header.

use super::*;
use std::mem::{offset_of, size_of};

#[test]
fn device_state_size_is_the_published_constant() {
    assert_eq!(size_of::<RshmemDeviceState>(), RSHMEM_DEVICE_STATE_SIZE);
    assert_eq!(std::mem::align_of::<RshmemDeviceState>(), 8);
}

fn c_assertions() -> String {
    // `Type = bytes: fields`: the size a struct is published with (proxy records are whole cache
    // lines or halves; NVSHMEM's attribute structs as NVSHMEM 3.4.5 declares them).
    macro_rules! fields {
        ($ty:ident $(= $published:literal)?: $($f:ident),*) => {{
            $(assert_eq!(size_of::<$ty>(), $published, "published size of {}", stringify!($ty));)?
            let mut s = format!("_Static_assert(sizeof({}) == {}, \"size of {}\");\n", stringify!($ty), size_of::<$ty>(), stringify!($ty));
            $( s += &format!("_Static_assert(offsetof({}, {}) == {}, \"offset of {}\");\n",
                stringify!($ty), stringify!($f), offset_of!($ty, $f), stringify!($f)); )*
            s
        }};
    }
    fields!(RshmemDeviceState: magic, version, mype, npes, node_mype, node_npes, flags, reserved0, heap_base,
        heap_stride, window_base, peer_bases, sync_counters, sync_consumed, stream_flags, coll_scratch, coll_scratch_bytes, teams, max_teams, reserved1, ibgda, coll_calls, coll_acks, coll_ll, coll_ll_slot, coll_ll_teams)
        + &fields!(RshmemDeviceTeam: start, stride, size, my_index)
        + &fields!(RshmemUniqueId = 128: version, internal)
        + &fields!(RshmemUniqueIdArgs = 24: version, id, myrank, nranks)
        + &fields!(RshmemInitArgs = 128: version, uid_args, content)
        + &fields!(RshmemInitAttr = 144: version, mpi_comm, args)
        + &fields!(RshmemProxyCmd = 64: seq, op, pe, remote, local, bytes, value, compare, amo, amo_type)
        + &fields!(RshmemProxyResult = 32: value, ready, taken, reserved)
        + &fields!(RshmemProxyLane = 64: consumed, completed, reserved)
        + &fields!(RshmemProxyIssue = 64: ticket, consumed_seen, reserved)
        + &fields!(RshmemProxyChannel: magic, version, status, lanes, slots, mype, cmds, results, lane_state, issue, stall_ns, failed_lane, failed_pe, failed_ticket, amo)
        + &fields!(RshmemProxyAmo = 64: seq, addr, a, b, op, size, result, done, claim)
        + &fields!(RshmemProxyStall = 56: seq, busy, what, word, seen, want, cmp_or_pe, in_heap, block, thread)
}

#[test]
fn c_header_layout_matches_rust() {
    let header = concat!(env!("CARGO_MANIFEST_DIR"), "/include/rshmem/rshmem_abi.h");
    let dir = std::env::temp_dir().join(format!("rshmem-abi-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("layout.c");
    std::fs::write(&src, format!("#include <stddef.h>\n#include \"{header}\"\n{}", c_assertions())).unwrap();
    let out = std::process::Command::new("cc").args(["-std=c11", "-fsyntax-only", "-Wall", "-Werror"]).arg(&src).output();
    let _ = std::fs::remove_dir_all(&dir);
    match out {
        Ok(o) => assert!(o.status.success(), "C layout differs from Rust:\n{}", String::from_utf8_lossy(&o.stderr)),
        Err(e) => eprintln!("skipped: no C compiler ({e})"),
    }
}
