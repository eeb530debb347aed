P=/tmp/gpux_fin/fin/stage; S=/tmp/gpuxnv/src/perftest; NVCC=/tmp/nvx2/nvcc
b() { local name=$1 f=$2
  nice $NVCC -arch=sm_90 -std=c++17 -O2 -I$P/include -I$S/common -I$(dirname $f) -x cu -c $f -o obj-$name.o > log-$name.txt 2>&1 &&
  nice $NVCC -arch=sm_90 obj-$name.o /tmp/nvx2/out/obj/perftest-utils.o -o $name -L$P/lib -lrshmem -lcuda -ldl -Xlinker -rpath=$P/lib >> log-$name.txt 2>&1; echo "$name rc=$?" >> done.txt; }
b shmem_p_latency $S/device/pt-to-pt/shmem_p_latency.cu &
b shmem_put_latency $S/device/pt-to-pt/shmem_put_latency.cu &
wait
