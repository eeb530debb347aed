//! rshmem-info: what this build is and how it would run here.

fn main() {
    println!("rshmem {}", env!("CARGO_PKG_VERSION"));
    println!("OpenSHMEM specification: 1.5 (ABI of Open MPI OSHMEM); NVSHMEM API: 3.x names");
    println!("build: {} profile, target {}", if cfg!(debug_assertions) { "debug" } else { "release" }, std::env::consts::ARCH);
    println!();
    println!("Transports on this host:");
    println!("  shm     CPU PEs on one host: loads/stores into mapped peer heaps (always available)");
    println!("  p2p     GPU PEs on one host: loads/stores/atomics into mapped peer GPU heaps (needs peer access)");
    println!("  ibgda   GPU PEs across the network: GPU threads post to the NIC (RSHMEM_IBGDA_NIC=model: a software HCA)");
    for line in rshmem::ibgda::nic::info_lines() {
        println!("  {line}");
    }
    println!();
    for line in rshmem::cuda::info::report() {
        println!("{line}");
    }
    let (_, size) = rshmem::env::current("SYMMETRIC_SIZE");
    let (_, gran) = rshmem::env::current("CUMEM_GRANULARITY");
    println!("Library kernels: {}", rshmem::cuda::image::describe());
    println!("GPU heap: NVSHMEM_SYMMETRIC_SIZE={size} reserved per PE (virtual; backed as allocations need it), grown in chunks of NVSHMEM_CUMEM_GRANULARITY={gran}");
    println!();
    for line in rshmem::ibgda::info::lines() {
        println!("{line}");
    }
    println!();
    println!("Environment (RSHMEM_<NAME> overrides SHMEM_<NAME>, which overrides NVSHMEM_<NAME>):");
    for s in rshmem::env::SETTINGS {
        let (source, value) = rshmem::env::current(s.name);
        println!("  {:<22} = {:<10} [{}; default {}]", s.name, value, source, s.default);
        println!("  {:<22}   {}", "", s.help);
    }
}
