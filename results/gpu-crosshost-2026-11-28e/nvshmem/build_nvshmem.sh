set -x
cd /tmp/gpuxnv; mkdir -p bin
for p in shmem_p_latency shmem_put_latency; do
nice /opt/cuda13/lib/python3.11/site-packages/nvidia/cu13/bin/nvcc -arch=sm_90 -std=c++17 -O2 -rdc=true -DNVSHMEMTEST_MPI_SUPPORT -I/opt/cuda13/lib/python3.11/site-packages/nvidia/nvshmem/include -I/usr/lib/x86_64-linux-gnu/openmpi/include -Isrc/perftest/common   src/perftest/common/utils.cu src/perftest/device/pt-to-pt/$p.cu -o bin/$p -L/opt/cuda13/lib/python3.11/site-packages/nvidia/nvshmem/lib -lnvshmem_device -l:libnvshmem_host.so.3 -L/tmp/nvx2/stub -lcuda -Xlinker -rpath=/opt/cuda13/lib/python3.11/site-packages/nvidia/nvshmem/lib > log.$p 2>&1 &
done; wait; ls -la bin
