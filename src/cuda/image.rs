//! Which image of one of the library's kernel modules the driver gets.
//!
//! Every module ships as PTX, which any driver compiles for the GPU at hand; but that costs
//! 0.1-1 s per module when the driver's cache (CUDA_CACHE_PATH) is cold, as in every fresh
//! container. When the build found a ptxas (build.rs), each module also carries cubins for the
//! data-centre architectures; the one that fits the GPU is loaded instead. A cubin the driver
//! refuses (one from a toolkit newer than the driver, say) falls back to the PTX with a warning.
//! RSHMEM_KERNEL_PTX=1 always loads the PTX.

use super::sys::{self, CUmodule};
use super::{current_context, driver, CuResult, Driver};

mod built {
    include!(concat!(env!("OUT_DIR"), "/cubins.rs"));
}

/// One kernel module: its name (the PTX file's stem, which build.rs uses too) and its PTX,
/// NUL-terminated as cuModuleLoadData wants it.
#[derive(Clone, Copy)]
pub struct Image {
    pub name: &'static str,
    pub ptx: &'static str,
}

/// The cubin that runs on compute capability `major.minor`: built for the same major version
/// and the highest minor version not above the device's (the driver's compatibility rule).
pub fn pick(cubins: &'static [(u32, &'static [u8])], major: u32, minor: u32) -> Option<(u32, &'static [u8])> {
    cubins.iter().copied().filter(|&(arch, _)| arch / 10 == major && arch % 10 <= minor).max_by_key(|&(arch, _)| arch)
}

fn ptx_forced() -> bool {
    crate::env::enabled(crate::env::KERNEL_PTX)
}

/// The cubin of module `name` for the current context's GPU, unless PTX is forced.
fn cubin_for_this_gpu(name: &str) -> CuResult<Option<(u32, &'static [u8])>> {
    if ptx_forced() {
        return Ok(None);
    }
    let Some((_, dev)) = current_context()? else { return Ok(None) };
    let cc = |a| dev.attribute(a).map(|v| v as u32);
    let (major, minor) = (cc(sys::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?, cc(sys::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?);
    Ok(pick(built::cubins(name), major, minor))
}

/// Whether `image` would load as machine code here (no JIT compile): then loading it early
/// costs a fraction of a millisecond.
pub fn loads_without_jit(image: Image) -> bool {
    matches!(cubin_for_this_gpu(image.name), Ok(Some(_)))
}

/// Loads `image` into the current context: its cubin for this GPU when there is one, else the PTX.
pub fn load(image: Image) -> CuResult<CUmodule> {
    let d = driver()?;
    let mut m: CUmodule = std::ptr::null_mut();
    if let Some((arch, cubin)) = cubin_for_this_gpu(image.name)? {
        match cu!(d, cuModuleLoadData(&mut m, cubin.as_ptr().cast())) {
            Ok(()) => return Ok(m),
            Err(e) => crate::log::warn(&format!(
                "the sm_{arch} machine code of the library's kernel module {} was refused ({e}); compiling its PTX instead",
                image.name
            )),
        }
    }
    cu!(d, cuModuleLoadData(&mut m, image.ptx.as_ptr().cast()))?;
    Ok(m)
}

/// For rshmem-info: which machine code this build carries.
pub fn describe() -> String {
    if built::ARCHS.is_empty() {
        return "PTX only (built without ptxas): the driver compiles them on first use, 0.1-1 s per module with a cold cache".into();
    }
    let archs: Vec<String> = built::ARCHS.iter().map(|a| format!("sm_{a}")).collect();
    format!("machine code for {} ({}), PTX for other GPUs", archs.join(", "), built::PTXAS)
}

#[cfg(test)]
mod tests {
    use super::*;

    static FOUR: [(u32, &[u8]); 4] = [(80, b"a"), (90, b"b"), (100, b"c"), (120, b"d")];

    #[test]
    fn a_cubin_runs_on_its_major_version_from_its_minor_version_up() {
        let arch = |major, minor| pick(&FOUR, major, minor).map(|(a, _)| a);
        assert_eq!(arch(8, 0), Some(80));
        assert_eq!(arch(8, 9), Some(80));
        assert_eq!(arch(9, 0), Some(90));
        assert_eq!(arch(10, 3), Some(100));
        assert_eq!(arch(12, 1), Some(120));
        assert_eq!(arch(7, 5), None); // older than every cubin: PTX (which the driver refuses there too)
        assert_eq!(arch(11, 0), None); // a major version not built: PTX
        static ONLY_86: [(u32, &[u8]); 1] = [(86, b"x")];
        assert_eq!(pick(&ONLY_86, 8, 0), None);
    }

    /// Every module the library loads has one cubin per built architecture, each a CUDA ELF.
    #[test]
    fn every_module_has_its_cubins() {
        let names = super::super::coll::module_names().into_iter().chain(super::super::kernels::MODULE_NAMES);
        for name in names {
            let cubins = built::cubins(name);
            assert_eq!(cubins.iter().map(|c| c.0).collect::<Vec<_>>(), built::ARCHS, "{name}");
            for (arch, bytes) in cubins {
                assert_eq!(&bytes[..4], b"\x7fELF", "{name} sm_{arch}");
                assert_eq!(u16::from_le_bytes([bytes[18], bytes[19]]), 190, "{name} sm_{arch}: e_machine is EM_CUDA");
            }
        }
    }

    /// Where CI installed nvcc (scripts/install-nvcc.sh), the build must have found its ptxas.
    #[test]
    fn ci_builds_carry_machine_code() {
        if std::path::Path::new("/opt/cuda13/bin/python").exists() {
            assert_eq!(built::ARCHS, [80, 90, 100, 120], "{}", describe());
        }
    }
}
