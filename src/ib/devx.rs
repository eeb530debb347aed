//! DevX: creating and modifying NIC objects with PRM commands ([`super::prm`]) over memory we
//! registered ourselves (umem), so that queues can live in GPU memory.
//!
//! [`DevxOps`] is the call table the hardware set-up drives: umem registration, CREATE, modify
//! and query commands. [`DevxCtx`] implements it over libmlx5 (`mlx5dv_devx_umem_reg(_ex)`,
//! `mlx5dv_devx_obj_create/modify/destroy`, `mlx5dv_devx_general_cmd` for queries) and owns
//! what it made; `fake::Recorder` (tests) records every call and answers queries with a canned
//! output, so the command sequence is checked in CI.
//!
//! NEVER MET HARDWARE: every method of [`DevxCtx`].

use std::ffi::c_void;
use std::sync::Arc;

use super::prm::{self, Cmd};
use super::sys::*;
use super::{mlx5, Context};
use crate::error::{Error, ErrorKind, Result};

/// An object created through [`DevxOps::create`], by creation order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ObjId(pub usize);

/// Umem registrations use 4 KiB pages: the contexts built by prm say `log_page_size` 0.
pub const UMEM_PAGE: u64 = 4096;

/// The DevX calls of the hardware set-up.
pub trait DevxOps {
    /// Registers `[addr, addr+len)` for the NIC's DMA as a umem and returns its id. With
    /// `dmabuf` = (fd, offset of `addr` in it) the dma-buf is tried first.
    fn umem_reg(&mut self, what: &str, addr: u64, len: usize, dmabuf: Option<(i32, u64)>) -> Result<u32>;
    /// Runs a CREATE command; returns the object and the number the firmware gave it.
    fn create(&mut self, what: &str, cmd: &Cmd) -> Result<(ObjId, u32)>;
    /// Runs a modify command on `obj`.
    fn modify(&mut self, obj: ObjId, what: &str, cmd: &Cmd) -> Result<()>;
    /// Runs a query command (no object) and returns its `out_len`-byte output.
    fn query(&mut self, what: &str, cmd: &Cmd, out_len: usize) -> Result<Vec<u8>>;
}

fn opcode_of(cmd: &Cmd) -> u16 {
    prm::get(&cmd.bytes, prm::HDR_OPCODE) as u16
}

/// The error of a failed command, in words: the call, what it was for, errno, and the
/// firmware's status and syndrome when the output carries them.
pub fn command_error(cmd: &Cmd, what: &str, errno: std::io::Error, out: &[u8]) -> Error {
    let fw = match prm::out_status(out) {
        Ok(()) => String::new(),
        Err((status, syndrome)) => format!("; firmware status {status:#x}, syndrome {syndrome:#010x}"),
    };
    Error::new(ErrorKind::System, super::ROUTINE, format!("DevX {} for {what} failed: {errno}{fw}", prm::opcode_name(opcode_of(cmd))))
}

/// DevX objects and umems of one device context, destroyed in reverse order of creation.
pub struct DevxCtx {
    ctx: Arc<Context>,
    m: &'static Mlx5,
    objs: Vec<Ptr>,
    umems: Vec<*mut Mlx5dvDevxUmem>,
}

// SAFETY: DevX handles may be used from any thread; all mutation goes through &mut self.
unsafe impl Send for DevxCtx {}
// SAFETY: as above.
unsafe impl Sync for DevxCtx {}

impl DevxCtx {
    pub fn new(ctx: &Arc<Context>) -> Result<DevxCtx> {
        Ok(DevxCtx { ctx: ctx.clone(), m: mlx5()?, objs: Vec::new(), umems: Vec::new() })
    }

    fn umem_reg_ex(&self, addr: u64, len: usize, dmabuf: Option<(i32, u64)>) -> *mut Mlx5dvDevxUmem {
        let mut input = Mlx5dvDevxUmemIn {
            addr: addr as Ptr,
            size: len,
            access: IBV_ACCESS_LOCAL_WRITE as u32,
            pgsz_bitmap: UMEM_PAGE,
            comp_mask: 0,
            dmabuf_fd: -1,
        };
        if let Some((fd, offset)) = dmabuf {
            // With a dma-buf, `addr` is the offset into it.
            input.addr = offset as Ptr;
            input.comp_mask = MLX5DV_UMEM_MASK_DMABUF;
            input.dmabuf_fd = fd;
        }
        // SAFETY: ctx is open; the caller keeps the memory (or dma-buf) alive while registered.
        unsafe { (self.m.mlx5dv_devx_umem_reg_ex)(self.ctx.raw(), &mut input) }
    }
}

/// Runs one DevX command function (`mlx5dv_devx_obj_create`, `_obj_modify`, `_general_cmd`:
/// same arguments) on `on` with `cmd` as its input and `out` as its output buffer.
///
/// # Safety
/// `on` must be what `f` expects (an open context, or a live object for `_obj_modify`).
unsafe fn command<R>(f: unsafe extern "C" fn(Ptr, *const c_void, usize, *mut c_void, usize) -> R, on: Ptr, cmd: &Cmd, out: &mut [u8]) -> R {
    // SAFETY: `on` as the caller vouches; in and out are live buffers of the lengths passed.
    unsafe { f(on, cmd.bytes.as_ptr().cast::<c_void>(), cmd.bytes.len(), out.as_mut_ptr().cast(), out.len()) }
}

impl DevxOps for DevxCtx {
    fn umem_reg(&mut self, what: &str, addr: u64, len: usize, dmabuf: Option<(i32, u64)>) -> Result<u32> {
        let (u, _) = super::register_dmabuf_first(
            &format!("{len} bytes at {addr:#x} ({what}) as a DevX umem"),
            dmabuf,
            "mlx5dv_devx_umem_reg_ex with a dma-buf",
            |fd, offset| self.umem_reg_ex(addr, len, Some((fd, offset))),
            "mlx5dv_devx_umem_reg_ex by address",
            || self.umem_reg_ex(addr, len, None),
        )?;
        self.umems.push(u);
        // SAFETY: u is a live umem.
        Ok(unsafe { (*u).umem_id })
    }

    fn create(&mut self, what: &str, cmd: &Cmd) -> Result<(ObjId, u32)> {
        let mut out = [0u8; prm::OUT_BYTES];
        // SAFETY: ctx is open.
        let obj = unsafe { command(self.m.mlx5dv_devx_obj_create, self.ctx.raw(), cmd, &mut out) };
        if obj.is_null() {
            return Err(command_error(cmd, what, std::io::Error::last_os_error(), &out));
        }
        self.objs.push(obj);
        Ok((ObjId(self.objs.len() - 1), prm::out_obj(&out)))
    }

    fn modify(&mut self, obj: ObjId, what: &str, cmd: &Cmd) -> Result<()> {
        let mut out = [0u8; prm::OUT_BYTES];
        let handle =
            *self.objs.get(obj.0).ok_or_else(|| Error::new(ErrorKind::Internal, super::ROUTINE, format!("no DevX object {}", obj.0)))?;
        // SAFETY: handle is a live DevX object.
        let rc = unsafe { command(self.m.mlx5dv_devx_obj_modify, handle, cmd, &mut out) };
        if rc != 0 {
            return Err(command_error(cmd, what, std::io::Error::from_raw_os_error(rc.abs()), &out));
        }
        Ok(())
    }

    fn query(&mut self, what: &str, cmd: &Cmd, out_len: usize) -> Result<Vec<u8>> {
        let mut out = vec![0u8; out_len.max(prm::OUT_BYTES)];
        // SAFETY: ctx is open.
        let rc = unsafe { command(self.m.mlx5dv_devx_general_cmd, self.ctx.raw(), cmd, &mut out) };
        if rc != 0 {
            return Err(command_error(cmd, what, std::io::Error::from_raw_os_error(rc.abs()), &out));
        }
        Ok(out)
    }
}

impl Drop for DevxCtx {
    fn drop(&mut self) {
        for &o in self.objs.iter().rev() {
            // SAFETY: o came from mlx5dv_devx_obj_create; later objects (QPs on CQs) go first.
            unsafe { (self.m.mlx5dv_devx_obj_destroy)(o) };
        }
        for &u in self.umems.iter().rev() {
            // SAFETY: u came from mlx5dv_devx_umem_reg_ex; no object uses it any more.
            unsafe { (self.m.mlx5dv_devx_umem_dereg)(u) };
        }
    }
}

/// A recording stand-in for the DevX call table (tests).
#[cfg(test)]
pub mod fake {
    use super::*;

    #[derive(Clone, Debug, PartialEq, Eq)]
    pub enum Call {
        Umem { what: String, addr: u64, len: usize, dmabuf: bool, id: u32 },
        Create { what: String, opcode: u16, cmd: Vec<u8>, number: u32 },
        Modify { obj: usize, what: String, opcode: u16, cmd: Vec<u8> },
        Query { what: String, opcode: u16, cmd: Vec<u8> },
    }

    /// Records calls; hands out umem ids from 0x10, CQ numbers from 0x1000, QP numbers from
    /// 0x2000 and DCT numbers from 0x3000. `fail_at` makes the call with that index fail.
    /// A query answers `answer` (the canned output a test wrote), zero-padded to the length asked.
    #[derive(Default)]
    pub struct Recorder {
        pub calls: Vec<Call>,
        pub fail_at: Option<usize>,
        pub answer: Vec<u8>,
        created: Vec<u16>,
    }

    impl Recorder {
        /// A recorder whose call number `at` (0-based) fails.
        pub fn failing_at(at: usize) -> Recorder {
            Recorder { fail_at: Some(at), ..Default::default() }
        }
        fn check_fail(&self, cmd: Option<&Cmd>, what: &str) -> Result<()> {
            if self.fail_at == Some(self.calls.len()) {
                let mut out = [0u8; prm::OUT_BYTES];
                out[0] = 0x3; // status: bad parameter
                out[4..8].copy_from_slice(&0x1234_5678u32.to_be_bytes());
                return Err(match cmd {
                    Some(c) => command_error(c, what, std::io::Error::from_raw_os_error(libc::EIO), &out),
                    None => Error::new(ErrorKind::System, "nvshmem_init", format!("umem registration for {what} failed (injected)")),
                });
            }
            Ok(())
        }
        /// The Create calls with this opcode, in order.
        pub fn created(&self, opcode: u16) -> Vec<&Call> {
            self.calls.iter().filter(|c| matches!(c, Call::Create { opcode: o, .. } if *o == opcode)).collect()
        }
    }

    impl DevxOps for Recorder {
        fn umem_reg(&mut self, what: &str, addr: u64, len: usize, dmabuf: Option<(i32, u64)>) -> Result<u32> {
            self.check_fail(None, what)?;
            let id = 0x10 + self.calls.iter().filter(|c| matches!(c, Call::Umem { .. })).count() as u32;
            self.calls.push(Call::Umem { what: what.into(), addr, len, dmabuf: dmabuf.is_some(), id });
            Ok(id)
        }
        fn create(&mut self, what: &str, cmd: &Cmd) -> Result<(ObjId, u32)> {
            self.check_fail(Some(cmd), what)?;
            let opcode = opcode_of(cmd);
            let base = match opcode {
                prm::CREATE_CQ => 0x1000,
                prm::CREATE_QP => 0x2000,
                _ => 0x3000,
            };
            let number = base + self.created.iter().filter(|o| **o == opcode).count() as u32;
            self.created.push(opcode);
            self.calls.push(Call::Create { what: what.into(), opcode, cmd: cmd.bytes.clone(), number });
            Ok((ObjId(self.created.len() - 1), number))
        }
        fn modify(&mut self, obj: ObjId, what: &str, cmd: &Cmd) -> Result<()> {
            self.check_fail(Some(cmd), what)?;
            assert!(obj.0 < self.created.len(), "modify of an object never created");
            self.calls.push(Call::Modify { obj: obj.0, what: what.into(), opcode: opcode_of(cmd), cmd: cmd.bytes.clone() });
            Ok(())
        }
        fn query(&mut self, what: &str, cmd: &Cmd, out_len: usize) -> Result<Vec<u8>> {
            self.check_fail(Some(cmd), what)?;
            self.calls.push(Call::Query { what: what.into(), opcode: opcode_of(cmd), cmd: cmd.bytes.clone() });
            let mut out = self.answer.clone();
            out.resize(out_len.max(out.len()), 0);
            Ok(out)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_errors_name_the_command_the_object_and_the_firmware_answer() {
        let cmd = prm::rst2init_qp(0x10, prm::QpKind::Rc, 1);
        let mut out = [0u8; 16];
        out[0] = 0x3;
        out[4..8].copy_from_slice(&0xdead_beefu32.to_be_bytes());
        let e = command_error(&cmd, "RC QP 2 toward PE 1", std::io::Error::from_raw_os_error(libc::EINVAL), &out).to_string();
        assert!(
            e.contains("DevX RST2INIT_QP for RC QP 2 toward PE 1 failed") && e.contains("status 0x3") && e.contains("0xdeadbeef"),
            "{e}"
        );
        let e = command_error(&cmd, "x", std::io::Error::from_raw_os_error(libc::EINVAL), &[0u8; 16]).to_string();
        assert!(!e.contains("firmware"), "{e}");
    }

    #[test]
    fn without_a_device_there_is_no_devx_context_to_make() {
        if super::super::devices().map(|d| d.is_empty()).unwrap_or(true) {
            assert!(Context::open("mlx5_0").is_err());
        }
    }
}
